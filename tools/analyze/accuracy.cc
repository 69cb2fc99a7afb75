#include "tools/analyze/accuracy.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::analyze {
namespace {

template <typename T>
void ArgMaxInto(const Tensor& scores, int64_t rows, int64_t classes, std::vector<int32_t>* out) {
  std::span<const T> values = scores.values<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = values.data() + r * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (row[c] > row[best]) {
        best = c;
      } else if constexpr (std::is_floating_point_v<T>) {
        // A NaN first entry loses to any number; NaN never replaces a number (it compares false).
        if (std::isnan(row[best]) && !std::isnan(row[c])) best = c;
      }
    }
    out->push_back(static_cast<int32_t>(best));
  }
}

template <typename T>
void ConfidenceInto(const Tensor& scores, int64_t rows, int64_t classes, bool softmax,
                    std::vector<Confidence>* out) {
  std::span<const T> values = scores.values<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = values.data() + r * classes;
    // The same order of operations as the router (route/cascade.cc), in the same precision, so
    // a threshold learned here splits the examples exactly as the router will.
    float top = -INFINITY;
    float runner_up = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) {
      const float x = static_cast<float>(row[c]);
      if (x > top) {
        runner_up = top;
        top = x;
      } else if (x > runner_up) {
        runner_up = x;
      }
    }
    double p1 = top;
    double p2 = runner_up;
    if (softmax) {
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c) {
        sum += std::exp(static_cast<double>(static_cast<float>(row[c])) - top);
      }
      p1 = 1.0 / sum;
      p2 = std::exp(static_cast<double>(runner_up) - top) / sum;
    }
    Confidence confidence;
    confidence.max_probability = std::isnan(p1) ? 0.0 : p1;
    confidence.margin = std::isnan(p1 - p2) ? 0.0 : p1 - p2;
    out->push_back(confidence);
  }
}

// Sends the set through the model in requests of options.batch_rows examples and hands each
// answer's scored output, with the number of examples it answers, to `consume`.
template <typename Consume>
absl::Status ForEachAnswer(client::Client& client, const protocol::ModelMetadata& metadata,
                           const EvalSet& set, const PredictOptions& options, Consume consume) {
  if (metadata.inputs.size() != 1) {
    return absl::InvalidArgumentError(StrCat("model '", options.model, "' has ",
                                             metadata.inputs.size(),
                                             " inputs; an evaluation set feeds exactly one"));
  }
  if (metadata.outputs.empty()) {
    return absl::InvalidArgumentError(StrCat("model '", options.model, "' has no outputs"));
  }
  const protocol::TensorMetadata& input = metadata.inputs[0];
  const bool batched = !input.shape.empty() && input.shape[0] == -1;
  const Shape row_shape(input.shape.begin() + (batched ? 1 : 0), input.shape.end());
  if (std::any_of(row_shape.begin(), row_shape.end(), [](int64_t dim) { return dim < 0; })) {
    return absl::InvalidArgumentError(
        StrCat("model '", options.model, "' input '", input.name, "' has variable dimensions ",
               ShapeToString(input.shape), "; evaluation needs a fixed example shape"));
  }
  const std::string output_name =
      options.output.empty() ? metadata.outputs[0].name : options.output;
  const int64_t step = batched ? std::max<int64_t>(1, options.batch_rows) : 1;

  client::InferSpec spec;
  spec.model_name = options.model;
  spec.binary_inputs = true;
  spec.binary_outputs = true;
  spec.outputs.push_back({.name = output_name, .parameters = {}, .binary = true});
  InferResponse response;
  for (int64_t begin = 0; begin < set.size(); begin += step) {
    const int64_t count = std::min(step, set.size() - begin);
    BRIGADE_ASSIGN_OR_RETURN(
        Tensor rows, EvalRows(set, begin, count, input.dtype, options.scale, row_shape, batched));
    spec.inputs.clear();
    spec.inputs.push_back({.name = input.name, .tensor = std::move(rows), .parameters = {}});
    BRIGADE_RETURN_IF_ERROR(client.Infer(spec, &response));
    const InferOutput* output = response.FindOutput(output_name);
    if (output == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("model '", options.model, "' answered without output '", output_name, "'"));
    }
    const Shape& shape = output->tensor.shape();
    const int64_t answered = shape.size() == 2 ? shape[0] : 1;
    if (answered != count) {
      return absl::InvalidArgumentError(StrCat("model '", options.model, "' output '", output_name,
                                               "' has ", answered, " rows for ", count,
                                               " examples"));
    }
    BRIGADE_RETURN_IF_ERROR(consume(output->tensor));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Confidence>> ConfidenceRows(const Tensor& scores, bool softmax) {
  const Shape& shape = scores.shape();
  if (shape.empty() || shape.size() > 2 || shape.back() < 2) {
    return absl::InvalidArgumentError(
        StrCat("class scores of shape ", ShapeToString(shape),
               " are not [rows, classes] or [classes] with at least two classes"));
  }
  const int64_t classes = shape.back();
  const int64_t rows = shape.size() == 2 ? shape[0] : 1;
  BRIGADE_ASSIGN_OR_RETURN(std::vector<int32_t> top, ArgMaxRows(scores));
  std::vector<Confidence> out;
  out.reserve(static_cast<size_t>(rows));
  switch (scores.dtype()) {
    case DataType::kFp32:
      ConfidenceInto<float>(scores, rows, classes, softmax, &out);
      break;
    case DataType::kFp64:
      ConfidenceInto<double>(scores, rows, classes, softmax, &out);
      break;
    default:
      return absl::InvalidArgumentError(
          StrCat("class scores of type ", DataTypeName(scores.dtype()), " are not FP32 or FP64"));
  }
  for (size_t r = 0; r < out.size(); ++r) out[r].top_class = top[r];
  return out;
}

absl::StatusOr<std::vector<int32_t>> ArgMaxRows(const Tensor& scores) {
  const Shape& shape = scores.shape();
  if (shape.empty() || shape.size() > 2 || shape.back() < 1) {
    return absl::InvalidArgumentError(StrCat("class scores of shape ", ShapeToString(shape),
                                             " are not [rows, classes] or [classes]"));
  }
  const int64_t classes = shape.back();
  const int64_t rows = shape.size() == 2 ? shape[0] : 1;
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(rows));
  switch (scores.dtype()) {
    case DataType::kFp32:
      ArgMaxInto<float>(scores, rows, classes, &out);
      break;
    case DataType::kFp64:
      ArgMaxInto<double>(scores, rows, classes, &out);
      break;
    case DataType::kInt32:
      ArgMaxInto<int32_t>(scores, rows, classes, &out);
      break;
    case DataType::kInt64:
      ArgMaxInto<int64_t>(scores, rows, classes, &out);
      break;
    case DataType::kUint8:
      ArgMaxInto<uint8_t>(scores, rows, classes, &out);
      break;
    case DataType::kInt8:
      ArgMaxInto<int8_t>(scores, rows, classes, &out);
      break;
    default:
      return absl::InvalidArgumentError(
          StrCat("class scores of type ", DataTypeName(scores.dtype()), " are not supported"));
  }
  return out;
}

absl::StatusOr<std::vector<int32_t>> PredictClasses(client::Client& client,
                                                    const protocol::ModelMetadata& metadata,
                                                    const EvalSet& set,
                                                    const PredictOptions& options) {
  std::vector<int32_t> predictions;
  predictions.reserve(static_cast<size_t>(set.size()));
  BRIGADE_RETURN_IF_ERROR(
      ForEachAnswer(client, metadata, set, options, [&](const Tensor& scores) -> absl::Status {
        BRIGADE_ASSIGN_OR_RETURN(std::vector<int32_t> classes, ArgMaxRows(scores));
        predictions.insert(predictions.end(), classes.begin(), classes.end());
        return absl::OkStatus();
      }));
  return predictions;
}

absl::StatusOr<std::vector<Confidence>> PredictConfidence(client::Client& client,
                                                          const protocol::ModelMetadata& metadata,
                                                          const EvalSet& set,
                                                          const PredictOptions& options,
                                                          bool softmax) {
  std::vector<Confidence> out;
  out.reserve(static_cast<size_t>(set.size()));
  BRIGADE_RETURN_IF_ERROR(
      ForEachAnswer(client, metadata, set, options, [&](const Tensor& scores) -> absl::Status {
        BRIGADE_ASSIGN_OR_RETURN(std::vector<Confidence> rows, ConfidenceRows(scores, softmax));
        out.insert(out.end(), rows.begin(), rows.end());
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<Score> ScorePredictions(std::span<const int32_t> predictions,
                                       std::span<const int64_t> expected) {
  if (predictions.size() != expected.size()) {
    return absl::InvalidArgumentError(
        StrCat(predictions.size(), " predictions for ", expected.size(), " expected classes"));
  }
  Score score;
  score.examples = static_cast<int64_t>(predictions.size());
  for (size_t i = 0; i < predictions.size(); ++i) {
    if (predictions[i] == expected[i]) ++score.correct;
  }
  score.accuracy = score.examples == 0 ? 0.0 : static_cast<double>(score.correct) / score.examples;
  return score;
}

}  // namespace brigade::analyze
