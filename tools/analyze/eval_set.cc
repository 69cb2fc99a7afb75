#include "tools/analyze/eval_set.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/status_macros.h"
#include "core/strings.h"
#include "tools/analyze/idx_file.h"
#include "tools/loadgen/npy_file.h"

namespace brigade::analyze {
namespace {

absl::StatusOr<Tensor> ReadExamplesFile(const std::string& path) {
  if (path.ends_with(".npy")) return loadgen::ReadNpyFile(path);
  return ReadIdxFile(path);
}

bool IsFloating(DataType type) { return type == DataType::kFp32 || type == DataType::kFp64; }

// Element `i` of a fixed-size numeric tensor as a double; false for types we do not read.
template <typename T>
double At(const Tensor& tensor, int64_t i) {
  return static_cast<double>(tensor.values<T>()[static_cast<size_t>(i)]);
}

absl::StatusOr<double> ValueAt(const Tensor& tensor, int64_t i) {
  switch (tensor.dtype()) {
    case DataType::kBool:
    case DataType::kUint8:
      return At<uint8_t>(tensor, i);
    case DataType::kInt8:
      return At<int8_t>(tensor, i);
    case DataType::kUint16:
      return At<uint16_t>(tensor, i);
    case DataType::kInt16:
      return At<int16_t>(tensor, i);
    case DataType::kUint32:
      return At<uint32_t>(tensor, i);
    case DataType::kInt32:
      return At<int32_t>(tensor, i);
    case DataType::kUint64:
      return At<uint64_t>(tensor, i);
    case DataType::kInt64:
      return At<int64_t>(tensor, i);
    case DataType::kFp32:
      return At<float>(tensor, i);
    case DataType::kFp64:
      return At<double>(tensor, i);
    default:
      return absl::InvalidArgumentError(
          StrCat("evaluation examples of type ", DataTypeName(tensor.dtype()), " are not read"));
  }
}

template <typename T>
void Store(double value, Tensor* out, int64_t i) {
  out->mutable_values<T>()[static_cast<size_t>(i)] = static_cast<T>(value);
}

absl::Status StoreValue(double value, Tensor* out, int64_t i) {
  // Integer targets round to nearest, so scaled data lands on the intended integers.
  const double rounded = IsFloating(out->dtype()) ? value : std::nearbyint(value);
  switch (out->dtype()) {
    case DataType::kUint8:
      Store<uint8_t>(rounded, out, i);
      break;
    case DataType::kInt8:
      Store<int8_t>(rounded, out, i);
      break;
    case DataType::kUint16:
      Store<uint16_t>(rounded, out, i);
      break;
    case DataType::kInt16:
      Store<int16_t>(rounded, out, i);
      break;
    case DataType::kUint32:
      Store<uint32_t>(rounded, out, i);
      break;
    case DataType::kInt32:
      Store<int32_t>(rounded, out, i);
      break;
    case DataType::kUint64:
      Store<uint64_t>(rounded, out, i);
      break;
    case DataType::kInt64:
      Store<int64_t>(rounded, out, i);
      break;
    case DataType::kFp32:
      Store<float>(rounded, out, i);
      break;
    case DataType::kFp64:
      Store<double>(rounded, out, i);
      break;
    default:
      return absl::InvalidArgumentError(StrCat("model inputs of type ", DataTypeName(out->dtype()),
                                               " cannot be fed from an ", "evaluation set"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> ReadLabels(const std::string& path, int64_t examples) {
  BRIGADE_ASSIGN_OR_RETURN(const Tensor tensor, ReadExamplesFile(path));
  if (IsFloating(tensor.dtype()) || tensor.dtype() == DataType::kBytes) {
    return absl::InvalidArgumentError(
        StrCat(path, ": labels must be integers, not ", DataTypeName(tensor.dtype())));
  }
  const Shape& shape = tensor.shape();
  const bool flat = shape.size() == 1 || (shape.size() == 2 && shape[1] == 1);
  if (!flat || tensor.num_elements() < examples) {
    return absl::InvalidArgumentError(StrCat(path, ": labels of shape ", ShapeToString(shape),
                                             " do not give one label for each of ", examples,
                                             " examples"));
  }
  std::vector<int64_t> labels(static_cast<size_t>(examples));
  for (int64_t i = 0; i < examples; ++i) {
    BRIGADE_ASSIGN_OR_RETURN(const double value, ValueAt(tensor, i));
    labels[static_cast<size_t>(i)] = static_cast<int64_t>(value);
  }
  return labels;
}

}  // namespace

absl::StatusOr<EvalSet> LoadEvalSet(const EvalSetOptions& options) {
  if (options.inputs_path.empty()) return absl::InvalidArgumentError("no evaluation inputs given");
  if (options.limit < 0) return absl::InvalidArgumentError("evaluation limit is negative");
  BRIGADE_ASSIGN_OR_RETURN(Tensor inputs, ReadExamplesFile(options.inputs_path));
  if (inputs.shape().empty() || inputs.shape()[0] == 0) {
    return absl::InvalidArgumentError(
        StrCat(options.inputs_path, ": no examples along the first dimension"));
  }
  const int64_t available = inputs.shape()[0];
  const int64_t count = options.limit > 0 ? std::min(options.limit, available) : available;
  if (count < available) {
    BRIGADE_ASSIGN_OR_RETURN(inputs, inputs.SliceRows(0, count));
  }
  EvalSet set;
  Shape row(inputs.shape().begin() + 1, inputs.shape().end());
  set.description =
      StrCat(std::filesystem::path(options.inputs_path).filename().string(), " (", count, " × ",
             ShapeToString(row), " ", DataTypeName(inputs.dtype()), ")");
  if (!options.labels_path.empty()) {
    BRIGADE_ASSIGN_OR_RETURN(set.labels, ReadLabels(options.labels_path, count));
    set.description +=
        StrCat(", labels ", std::filesystem::path(options.labels_path).filename().string());
  }
  set.inputs = std::move(inputs);
  return set;
}

double DefaultScale(DataType from, DataType to) {
  return from == DataType::kUint8 && IsFloating(to) ? 1.0 / 255.0 : 1.0;
}

absl::StatusOr<Tensor> EvalRows(const EvalSet& set, int64_t begin, int64_t count, DataType dtype,
                                double scale, const Shape& row_shape, bool batched) {
  if (begin < 0 || count < 1 || begin + count > set.size()) {
    return absl::InvalidArgumentError(StrCat("examples [", begin, ", ", begin + count,
                                             ") are outside the evaluation set of ", set.size()));
  }
  if (!batched && count != 1) {
    return absl::InvalidArgumentError("a model without a batch dimension takes one example");
  }
  BRIGADE_ASSIGN_OR_RETURN(const int64_t row_elements, ElementCount(row_shape));
  const int64_t example_elements = set.inputs.num_elements() / set.size();
  if (row_elements != example_elements) {
    return absl::InvalidArgumentError(
        StrCat("the model's input takes ", ShapeToString(row_shape), " (", row_elements,
               " values) per example; the evaluation set has ", example_elements, " per example"));
  }
  Shape shape = row_shape;
  if (batched) shape.insert(shape.begin(), count);
  BRIGADE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, shape));
  const int64_t first = begin * example_elements;
  const int64_t total = count * example_elements;
  if (scale == 1.0 && dtype == set.inputs.dtype()) {
    const size_t element_size = DataTypeSize(dtype);
    std::memcpy(out.mutable_data(), set.inputs.data() + first * element_size,
                static_cast<size_t>(total) * element_size);
    return out;
  }
  for (int64_t i = 0; i < total; ++i) {
    BRIGADE_ASSIGN_OR_RETURN(const double value, ValueAt(set.inputs, first + i));
    BRIGADE_RETURN_IF_ERROR(StoreValue(value * scale, &out, i));
  }
  return out;
}

}  // namespace brigade::analyze
