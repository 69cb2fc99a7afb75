#include "engine/process/process_backend.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/plain_file.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "process/classify.h"
#include "process/image_preprocess.h"
#include "process/sentencepiece_tokenizer.h"
#include "process/wordpiece_tokenizer.h"

namespace brigade::engine {
namespace {

enum class Step { kImagePreprocess, kSoftmax, kTopK, kArgmax, kWordPiece, kSentencePiece };

// Reads the config's parameters, naming the model and the key in every error.
class Parameters {
 public:
  explicit Parameters(const ModelLoadOptions& options) : options_(options) {}

  absl::Status Error(std::string_view key, std::string_view value, std::string_view want) const {
    return absl::InvalidArgumentError(StrCat("model '", options_.model_name, "': parameter ", key,
                                             " is '", value, "', expected ", want));
  }

  const std::string* Find(std::string_view key) const {
    auto it = options_.parameters.find(std::string(key));
    return it == options_.parameters.end() ? nullptr : &it->second;
  }

  std::string String(std::string_view key, std::string_view fallback) const {
    const std::string* value = Find(key);
    return value == nullptr ? std::string(fallback) : *value;
  }

  absl::StatusOr<int64_t> Integer(std::string_view key, int64_t fallback, int64_t min,
                                  int64_t max) const {
    const std::string* text = Find(key);
    if (text == nullptr) return fallback;
    int64_t value = 0;
    if (!ParseInteger(*text, &value) || value < min || value > max) {
      return Error(key, *text, StrCat("an integer in ", min, "..", max));
    }
    return value;
  }

  // Comma-separated integers (e.g. crop "224" or "224,200").
  absl::StatusOr<std::vector<int64_t>> Integers(std::string_view key, std::string_view fallback,
                                                size_t min_count, size_t max_count, int64_t min,
                                                int64_t max) const {
    const std::string text = String(key, fallback);
    std::vector<int64_t> values;
    for (std::string_view rest = text;;) {
      const size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      int64_t value = 0;
      if (!ParseInteger(item, &value) || value < min || value > max) break;
      values.push_back(value);
      if (comma == std::string_view::npos) {
        if (values.size() >= min_count && values.size() <= max_count) return values;
        break;
      }
      rest.remove_prefix(comma + 1);
    }
    return Error(
        key, text,
        StrCat(min_count, " to ", max_count, " comma-separated integers in ", min, "..", max));
  }

  absl::StatusOr<std::array<float, 3>> Floats3(std::string_view key,
                                               std::array<float, 3> fallback) const {
    const std::string* text = Find(key);
    if (text == nullptr) return fallback;
    std::array<float, 3> values{};
    size_t count = 0;
    for (std::string_view rest = *text;;) {
      const size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      double value = 0;
      if (count == 3 || !ParseDouble(item, &value)) break;
      values[count++] = static_cast<float>(value);
      if (comma == std::string_view::npos) {
        if (count == 3) return values;
        if (count == 1) return std::array<float, 3>{values[0], values[0], values[0]};
        break;
      }
      rest.remove_prefix(comma + 1);
    }
    return Error(key, *text, "one number (every channel) or three comma-separated numbers");
  }

  template <typename T>
  absl::StatusOr<T> Choice(std::string_view key, std::string_view fallback,
                           std::initializer_list<std::pair<std::string_view, T>> choices) const {
    const std::string value = String(key, fallback);
    std::string names;
    for (const auto& [name, choice] : choices) {
      if (value == name) return choice;
      names += names.empty() ? std::string(name) : StrCat(" or ", name);
    }
    return Error(key, value, names);
  }

  // Refuses keys the step does not read, so a misspelt key is not silently ignored.
  absl::Status OnlyKnown(std::string_view step, const std::set<std::string_view>& known) const {
    for (const auto& [key, value] : options_.parameters) {
      if (key != "step" && !known.contains(key)) {
        return absl::InvalidArgumentError(StrCat("model '", options_.model_name, "': parameter '",
                                                 key, "' means nothing to step ", step));
      }
    }
    return absl::OkStatus();
  }

 private:
  const ModelLoadOptions& options_;
};

struct StepSettings {
  Step step = Step::kImagePreprocess;
  process::PreprocessOptions preprocess;
  int64_t k = 1;
  bool softmax_first = false;
  // top_k's class names, one per class index; null without a `labels` parameter.
  std::shared_ptr<const std::vector<std::string>> labels;
  // Text steps: the tokens per row and whether token_type_ids is an output.
  int64_t max_length = 128;
  bool token_type_ids = false;
};

// What a text step loaded from its version directory (immutable, shared by the instances).
struct Tokenizers {
  std::shared_ptr<const process::WordPieceTokenizer> wordpiece;
  std::shared_ptr<const process::SentencePieceTokenizer> sentencepiece;
};

// Largest file a step reads from its version directory.
constexpr uintmax_t kMaxStepFileBytes = uintmax_t{16} << 20;

// Reads the file the parameter `key` names from the version directory (model_path), through
// core's ReadPlainFile (a plain name, a regular file, at most kMaxStepFileBytes), worded as a
// parameter error.
absl::StatusOr<std::string> ReadVersionFile(const ModelLoadOptions& options,
                                            const Parameters& params, std::string_view key,
                                            std::string_view fallback = "") {
  const std::string name = params.String(key, fallback);
  absl::StatusOr<std::string> text = ReadPlainFile(options.model_path, name, kMaxStepFileBytes);
  if (text.ok()) return text;
  const std::string path = (std::filesystem::path(options.model_path) / name).string();
  switch (text.status().code()) {
    case absl::StatusCode::kInvalidArgument:
      return params.Error(key, name, "a file name in the version directory, without a path");
    case absl::StatusCode::kOutOfRange:
      return params.Error(key, name, StrCat("a file of at most ", kMaxStepFileBytes, " bytes"));
    case absl::StatusCode::kNotFound:
      return params.Error(key, name, StrCat("a regular file at ", path));
    default:
      return params.Error(key, name, StrCat("a readable file at ", path));
  }
}

// The declared tensor's dims per batch row (without the batch dimension when batching).
Shape RowDims(const ModelLoadOptions& options, const TensorSpec& spec) {
  Shape dims = spec.shape;
  if (options.max_batch_size > 0 && !dims.empty()) dims.erase(dims.begin());
  return dims;
}

absl::Status TensorError(const ModelLoadOptions& options, std::string_view what,
                         const TensorSpec& spec, std::string_view want) {
  return absl::InvalidArgumentError(
      StrCat("model '", options.model_name, "': ", what, " '", spec.name, "' is ",
             DataTypeName(spec.dtype), ShapeToString(RowDims(options, spec)), ", expected ", want));
}

absl::Status CheckCounts(const ModelLoadOptions& options, std::string_view step, size_t inputs,
                         size_t outputs) {
  if (options.declared_inputs.size() != inputs || options.declared_outputs.size() != outputs) {
    return absl::InvalidArgumentError(
        StrCat("model '", options.model_name, "': step ", step, " takes ", inputs, " input(s) and ",
               outputs, " output(s) declared in config, got ", options.declared_inputs.size(),
               " and ", options.declared_outputs.size()));
  }
  for (const TensorSpec& input : options.declared_inputs) {
    if (input.optional) {
      return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': input '",
                                               input.name, "' cannot be optional for step ", step));
    }
  }
  return absl::OkStatus();
}

absl::Status LoadImagePreprocess(const ModelLoadOptions& options, const Parameters& params,
                                 StepSettings* settings) {
  BRIGADE_RETURN_IF_ERROR(params.OnlyKnown(
      "image_classify_preprocess",
      {"size", "crop", "mean", "std", "layout", "order", "mode", "filter", "dtype", "max_pixels"}));
  BRIGADE_RETURN_IF_ERROR(CheckCounts(options, "image_classify_preprocess", 1, 1));
  process::PreprocessOptions& p = settings->preprocess;
  BRIGADE_ASSIGN_OR_RETURN(const int64_t size,
                           params.Integer("size", 256, 0, process::kMaxCropDimension));
  p.resize_shorter = static_cast<int>(size);
  BRIGADE_ASSIGN_OR_RETURN(const std::vector<int64_t> crop,
                           params.Integers("crop", "224", 1, 2, 1, process::kMaxCropDimension));
  p.crop_height = static_cast<int>(crop[0]);
  p.crop_width = static_cast<int>(crop.back());
  BRIGADE_ASSIGN_OR_RETURN(p.normalize.mean, params.Floats3("mean", p.normalize.mean));
  BRIGADE_ASSIGN_OR_RETURN(p.normalize.std, params.Floats3("std", p.normalize.std));
  BRIGADE_ASSIGN_OR_RETURN(
      p.normalize.layout,
      params.Choice<process::Layout>(
          "layout", "NCHW", {{"NCHW", process::Layout::kChw}, {"NHWC", process::Layout::kHwc}}));
  BRIGADE_ASSIGN_OR_RETURN(p.normalize.order, params.Choice<process::ChannelOrder>(
                                                  "order", "RGB",
                                                  {{"RGB", process::ChannelOrder::kRgb},
                                                   {"BGR", process::ChannelOrder::kBgr},
                                                   {"GRAY", process::ChannelOrder::kGray}}));
  BRIGADE_ASSIGN_OR_RETURN(
      p.mode, params.Choice<process::PreprocessMode>("mode", "exact",
                                                     {{"exact", process::PreprocessMode::kExact},
                                                      {"fast", process::PreprocessMode::kFast}}));
  BRIGADE_ASSIGN_OR_RETURN(p.filter, params.Choice<process::ResizeFilter>(
                                         "filter", "bilinear",
                                         {{"bilinear", process::ResizeFilter::kBilinear},
                                          {"area", process::ResizeFilter::kArea}}));
  BRIGADE_ASSIGN_OR_RETURN(
      p.max_pixels, params.Integer("max_pixels", process::kDefaultMaxPixels, 1, int64_t{1} << 40));

  const TensorSpec& input = options.declared_inputs[0];
  if (input.dtype != DataType::kBytes || RowDims(options, input) != Shape{1}) {
    return TensorError(options, "input", input, "BYTES[1] (one encoded image per batch row)");
  }
  const TensorSpec& output = options.declared_outputs[0];
  if (output.dtype == DataType::kFp32) {
    p.output = process::OutputType::kFp32;
  } else if (output.dtype == DataType::kUint8) {
    p.output = process::OutputType::kUint8;
  } else {
    return TensorError(options, "output", output, "FP32 or UINT8");
  }
  if (const std::string* dtype = params.Find("dtype");
      dtype != nullptr && *dtype != DataTypeName(output.dtype)) {
    return params.Error("dtype", *dtype,
                        StrCat(DataTypeName(output.dtype), ", the declared output's data_type"));
  }
  const int64_t channels = process::OutputChannels(p.normalize.order);
  const Shape want = p.normalize.layout == process::Layout::kChw
                         ? Shape{channels, p.crop_height, p.crop_width}
                         : Shape{p.crop_height, p.crop_width, channels};
  if (RowDims(options, output) != want) {
    return TensorError(options, "output", output,
                       StrCat(DataTypeName(output.dtype), ShapeToString(want),
                              " (the crop in the configured layout)"));
  }
  absl::StatusOr<process::ImagePreprocessor> check = process::ImagePreprocessor::Create(p);
  if (!check.ok()) {
    return absl::InvalidArgumentError(
        StrCat("model '", options.model_name, "': ", check.status().message()));
  }
  return absl::OkStatus();
}

absl::Status LoadClassify(const ModelLoadOptions& options, const Parameters& params,
                          std::string_view step_name, StepSettings* settings) {
  const bool top_k = settings->step == Step::kTopK;
  const bool labelled = top_k && params.Find("labels") != nullptr;
  if (top_k) {
    BRIGADE_RETURN_IF_ERROR(params.OnlyKnown(step_name, {"k", "softmax", "labels"}));
  } else {
    BRIGADE_RETURN_IF_ERROR(params.OnlyKnown(step_name, {}));
  }
  BRIGADE_RETURN_IF_ERROR(CheckCounts(options, step_name, 1, top_k ? (labelled ? 3 : 2) : 1));
  const TensorSpec& input = options.declared_inputs[0];
  const Shape in_dims = RowDims(options, input);
  if (input.dtype != DataType::kFp32 || in_dims.size() != 1 || in_dims[0] == 0) {
    return TensorError(options, "input", input, "FP32[C] (one row of class scores)");
  }
  const int64_t classes = in_dims[0];  // -1: known per call
  auto expect = [&](size_t i, DataType dtype, const Shape& dims) -> absl::Status {
    const TensorSpec& output = options.declared_outputs[i];
    if (output.dtype != dtype || RowDims(options, output) != dims) {
      return TensorError(options, "output", output,
                         StrCat(DataTypeName(dtype), ShapeToString(dims)));
    }
    return absl::OkStatus();
  };
  switch (settings->step) {
    case Step::kSoftmax:
      return expect(0, DataType::kFp32, in_dims);
    case Step::kArgmax:
      return expect(0, DataType::kInt64, Shape{1});
    case Step::kTopK: {
      BRIGADE_ASSIGN_OR_RETURN(settings->k,
                               params.Integer("k", 1, 1, classes > 0 ? classes : 1 << 30));
      BRIGADE_ASSIGN_OR_RETURN(
          settings->softmax_first,
          params.Choice<bool>("softmax", "false", {{"false", false}, {"true", true}}));
      BRIGADE_RETURN_IF_ERROR(expect(0, DataType::kFp32, Shape{settings->k}));
      BRIGADE_RETURN_IF_ERROR(expect(1, DataType::kInt64, Shape{settings->k}));
      if (!labelled) return absl::OkStatus();
      BRIGADE_RETURN_IF_ERROR(expect(2, DataType::kBytes, Shape{settings->k}));
      BRIGADE_ASSIGN_OR_RETURN(const std::string text, ReadVersionFile(options, params, "labels"));
      auto labels = std::make_shared<const std::vector<std::string>>(SplitLabels(text));
      if (classes > 0 && labels->size() != static_cast<size_t>(classes)) {
        return params.Error(
            "labels", params.String("labels", ""),
            StrCat("a file of ", classes, " lines (one label per class), it has ", labels->size()));
      }
      settings->labels = std::move(labels);
      return absl::OkStatus();
    }
    case Step::kImagePreprocess:
    case Step::kWordPiece:
    case Step::kSentencePiece:
      break;
  }
  return absl::InternalError("unreachable");
}

// The declared tensors of a text step: one BYTES[1] input, then `outputs` INT64[max_length].
absl::Status CheckTextTensors(const ModelLoadOptions& options, std::string_view step,
                              size_t min_outputs, size_t max_outputs, int64_t max_length) {
  const size_t outputs = options.declared_outputs.size();
  BRIGADE_RETURN_IF_ERROR(CheckCounts(
      options, step, 1, outputs >= min_outputs && outputs <= max_outputs ? outputs : min_outputs));
  const TensorSpec& input = options.declared_inputs[0];
  if (input.dtype != DataType::kBytes || RowDims(options, input) != Shape{1}) {
    return TensorError(options, "input", input, "BYTES[1] (one UTF-8 text per batch row)");
  }
  for (const TensorSpec& output : options.declared_outputs) {
    if (output.dtype != DataType::kInt64 || RowDims(options, output) != Shape{max_length}) {
      return TensorError(options, "output", output,
                         StrCat("INT64", ShapeToString(Shape{max_length}), " (max_length)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Bool(const Parameters& params, std::string_view key,
                          std::string_view fallback) {
  return params.Choice<bool>(key, fallback, {{"true", true}, {"false", false}});
}

absl::Status LoadWordPiece(const ModelLoadOptions& options, const Parameters& params,
                           StepSettings* settings, Tokenizers* tokenizers) {
  BRIGADE_RETURN_IF_ERROR(params.OnlyKnown("wordpiece_tokenize",
                                           {"vocab", "lower_case", "strip_accents", "max_length"}));
  BRIGADE_ASSIGN_OR_RETURN(settings->max_length,
                           params.Integer("max_length", 128, 2, process::kMaxEncodeLength));
  BRIGADE_RETURN_IF_ERROR(
      CheckTextTensors(options, "wordpiece_tokenize", 2, 3, settings->max_length));
  settings->token_type_ids = options.declared_outputs.size() == 3;
  process::WordPieceOptions wordpiece;
  BRIGADE_ASSIGN_OR_RETURN(wordpiece.lower_case, Bool(params, "lower_case", "true"));
  BRIGADE_ASSIGN_OR_RETURN(wordpiece.strip_accents,
                           Bool(params, "strip_accents", wordpiece.lower_case ? "true" : "false"));
  BRIGADE_ASSIGN_OR_RETURN(const std::string vocab,
                           ReadVersionFile(options, params, "vocab", "vocab.txt"));
  absl::StatusOr<std::unique_ptr<process::WordPieceTokenizer>> tokenizer =
      process::WordPieceTokenizer::Create(vocab, wordpiece);
  if (!tokenizer.ok()) {
    return absl::Status(tokenizer.status().code(),
                        StrCat("model '", options.model_name, "': ", tokenizer.status().message()));
  }
  tokenizers->wordpiece = std::move(*tokenizer);
  return absl::OkStatus();
}

absl::Status LoadSentencePiece(const ModelLoadOptions& options, const Parameters& params,
                               StepSettings* settings, Tokenizers* tokenizers) {
  BRIGADE_RETURN_IF_ERROR(
      params.OnlyKnown("sentencepiece_tokenize", {"model", "max_length", "add_bos", "add_eos"}));
  BRIGADE_ASSIGN_OR_RETURN(settings->max_length,
                           params.Integer("max_length", 128, 2, process::kMaxEncodeLength));
  BRIGADE_RETURN_IF_ERROR(
      CheckTextTensors(options, "sentencepiece_tokenize", 2, 2, settings->max_length));
  process::SentencePieceOptions sentencepiece;
  BRIGADE_ASSIGN_OR_RETURN(sentencepiece.add_bos, Bool(params, "add_bos", "false"));
  BRIGADE_ASSIGN_OR_RETURN(sentencepiece.add_eos, Bool(params, "add_eos", "false"));
  if (settings->max_length < 1 + sentencepiece.add_bos + sentencepiece.add_eos) {
    return params.Error("max_length", params.String("max_length", ""),
                        "room for one id besides BOS and EOS");
  }
  BRIGADE_ASSIGN_OR_RETURN(const std::string model,
                           ReadVersionFile(options, params, "model", "spm.model"));
  absl::StatusOr<std::unique_ptr<process::SentencePieceTokenizer>> tokenizer =
      process::SentencePieceTokenizer::Create(model, sentencepiece);
  if (!tokenizer.ok()) {
    return absl::Status(tokenizer.status().code(),
                        StrCat("model '", options.model_name, "': ", tokenizer.status().message()));
  }
  tokenizers->sentencepiece = std::move(*tokenizer);
  return absl::OkStatus();
}

class ProcessInstance final : public ModelInstance {
 public:
  ProcessInstance(std::string model_name, bool batching, StepSettings settings,
                  std::vector<std::string> input_names,
                  std::optional<process::ImagePreprocessor> preprocessor, Tokenizers tokenizers)
      : model_name_(std::move(model_name)),
        batching_(batching),
        settings_(std::move(settings)),
        input_names_(std::move(input_names)),
        preprocessor_(preprocessor),
        tokenizers_(std::move(tokenizers)) {}

  absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) override {
    outputs->clear();
    if (inputs.size() != 1 || inputs[0].empty()) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name_, "': expects one input, got ", inputs.size()));
    }
    const Tensor& input = inputs[0];
    int64_t rows = 1;
    if (batching_) {
      if (input.shape().empty()) {
        return Error(StrCat("has no batch dimension: ", ShapeToString(input.shape())));
      }
      rows = input.shape()[0];
    }
    if (settings_.step == Step::kImagePreprocess) return Preprocess(input, rows, outputs);
    if (settings_.step == Step::kWordPiece || settings_.step == Step::kSentencePiece) {
      return Tokenize(input, rows, outputs);
    }
    return Classify(input, rows, outputs);
  }

  // The steps are pure functions over the instance's own scratch state.
  bool RunsOnAnyThread() const override { return true; }

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        StrCat("model '", model_name_, "': input '", input_names_[0], "' ", what));
  }

  Shape Batched(int64_t rows, Shape dims) const {
    if (batching_) dims.insert(dims.begin(), rows);
    return dims;
  }

  absl::Status Preprocess(const Tensor& input, int64_t rows, std::vector<Tensor>* outputs) const {
    if (input.dtype() != DataType::kBytes || input.num_elements() != rows) {
      return Error(StrCat("must hold one BYTES element per batch row, got ",
                          DataTypeName(input.dtype()), ShapeToString(input.shape())));
    }
    BRIGADE_ASSIGN_OR_RETURN(const std::vector<std::string_view> images, input.StringValues());
    const process::PreprocessOptions& p = preprocessor_->options();
    const int64_t channels = process::OutputChannels(p.normalize.order);
    const Shape dims = p.normalize.layout == process::Layout::kChw
                           ? Shape{channels, p.crop_height, p.crop_width}
                           : Shape{p.crop_height, p.crop_width, channels};
    const DataType dtype =
        p.output == process::OutputType::kFp32 ? DataType::kFp32 : DataType::kUint8;
    BRIGADE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, Batched(rows, dims)));
    const size_t bytes = preprocessor_->output_bytes();
    std::span<std::byte> all(out.mutable_data(), out.byte_size());
    for (size_t i = 0; i < images.size(); ++i) {
      absl::Status status = preprocessor_->Run(images[i], all.subspan(i * bytes, bytes));
      if (!status.ok()) {
        return absl::Status(status.code(),
                            StrCat("model '", model_name_, "': input '", input_names_[0],
                                   "' batch index ", i, ": ", status.message()));
      }
    }
    outputs->push_back(std::move(out));
    return absl::OkStatus();
  }

  absl::Status Classify(const Tensor& input, int64_t rows, std::vector<Tensor>* outputs) const {
    const size_t rank = batching_ ? 2 : 1;
    if (input.dtype() != DataType::kFp32 || input.shape().size() != rank ||
        input.num_elements() == 0) {
      return Error(StrCat("must be FP32 scores, [batch, classes] or [classes], got ",
                          DataTypeName(input.dtype()), ShapeToString(input.shape())));
    }
    const int64_t classes = input.shape().back();
    const std::span<const float> scores = input.values<float>();
    auto check = [this](const absl::Status& status) {
      return status.ok() ? status : Error(ToStd(status.message()));
    };
    switch (settings_.step) {
      case Step::kSoftmax: {
        BRIGADE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DataType::kFp32, input.shape()));
        BRIGADE_RETURN_IF_ERROR(
            check(process::Softmax(scores, classes, out.mutable_values<float>())));
        outputs->push_back(std::move(out));
        return absl::OkStatus();
      }
      case Step::kArgmax: {
        BRIGADE_ASSIGN_OR_RETURN(Tensor out,
                                 Tensor::Allocate(DataType::kInt64, Batched(rows, Shape{1})));
        BRIGADE_RETURN_IF_ERROR(
            check(process::Argmax(scores, classes, out.mutable_values<int64_t>())));
        outputs->push_back(std::move(out));
        return absl::OkStatus();
      }
      case Step::kTopK: {
        if (settings_.k > classes) {
          return Error(StrCat("has ", classes, " classes, fewer than k=", settings_.k));
        }
        std::vector<float> probabilities;
        std::span<const float> ranked = scores;
        if (settings_.softmax_first) {
          probabilities.resize(scores.size());
          BRIGADE_RETURN_IF_ERROR(check(process::Softmax(scores, classes, probabilities)));
          ranked = probabilities;
        }
        BRIGADE_ASSIGN_OR_RETURN(
            Tensor values, Tensor::Allocate(DataType::kFp32, Batched(rows, Shape{settings_.k})));
        BRIGADE_ASSIGN_OR_RETURN(
            Tensor indices, Tensor::Allocate(DataType::kInt64, Batched(rows, Shape{settings_.k})));
        BRIGADE_RETURN_IF_ERROR(
            check(process::TopK(ranked, classes, settings_.k, values.mutable_values<float>(),
                                indices.mutable_values<int64_t>())));
        if (settings_.labels != nullptr) {
          const std::vector<std::string>& labels = *settings_.labels;
          if (static_cast<size_t>(classes) > labels.size()) {
            return Error(StrCat("has ", classes, " classes, more than the ", labels.size(),
                                " labels of the labels file"));
          }
          std::vector<std::string> names;
          names.reserve(indices.num_elements());
          for (const int64_t index : indices.values<int64_t>()) names.push_back(labels[index]);
          BRIGADE_ASSIGN_OR_RETURN(Tensor label_tensor,
                                   Tensor::FromStrings(Batched(rows, Shape{settings_.k}), names));
          outputs->push_back(std::move(values));
          outputs->push_back(std::move(indices));
          outputs->push_back(std::move(label_tensor));
          return absl::OkStatus();
        }
        outputs->push_back(std::move(values));
        outputs->push_back(std::move(indices));
        return absl::OkStatus();
      }
      case Step::kImagePreprocess:
      case Step::kWordPiece:
      case Step::kSentencePiece:
        break;
    }
    return absl::InternalError("unreachable");
  }

  // A text step: one UTF-8 text per row to input_ids, attention_mask[, token_type_ids].
  absl::Status Tokenize(const Tensor& input, int64_t rows, std::vector<Tensor>* outputs) const {
    if (input.dtype() != DataType::kBytes || input.num_elements() != rows) {
      return Error(StrCat("must hold one BYTES element per batch row, got ",
                          DataTypeName(input.dtype()), ShapeToString(input.shape())));
    }
    BRIGADE_ASSIGN_OR_RETURN(const std::vector<std::string_view> texts, input.StringValues());
    const int64_t length = settings_.max_length;
    const Shape dims = Batched(rows, Shape{length});
    std::vector<Tensor> out;
    for (size_t i = 0, n = settings_.token_type_ids ? 3 : 2; i < n; ++i) {
      BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(DataType::kInt64, dims));
      out.push_back(std::move(tensor));
    }
    const auto row = [&](size_t t, size_t i) -> std::span<int64_t> {
      if (t >= out.size()) return {};
      return out[t].mutable_values<int64_t>().subspan(i * length, length);
    };
    for (size_t i = 0; i < texts.size(); ++i) {
      const absl::StatusOr<int64_t> count =
          settings_.step == Step::kWordPiece
              ? tokenizers_.wordpiece->Encode(texts[i], row(0, i), row(1, i), row(2, i))
              : tokenizers_.sentencepiece->Encode(texts[i], row(0, i), row(1, i));
      if (!count.ok()) {
        return absl::Status(count.status().code(),
                            StrCat("model '", model_name_, "': input '", input_names_[0],
                                   "' batch index ", i, ": ", count.status().message()));
      }
    }
    for (Tensor& tensor : out) outputs->push_back(std::move(tensor));
    return absl::OkStatus();
  }

  const std::string model_name_;
  const bool batching_;
  const StepSettings settings_;
  const std::vector<std::string> input_names_;
  const std::optional<process::ImagePreprocessor> preprocessor_;
  const Tokenizers tokenizers_;
};

class ProcessModel final : public Model {
 public:
  ProcessModel(std::string name, bool batching, StepSettings settings, ModelSignature signature,
               std::optional<process::ImagePreprocessor> preprocessor, Tokenizers tokenizers)
      : name_(std::move(name)),
        batching_(batching),
        settings_(std::move(settings)),
        signature_(std::move(signature)),
        preprocessor_(preprocessor),
        tokenizers_(std::move(tokenizers)) {}

  const ModelSignature& signature() const override { return signature_; }

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    std::vector<std::string> names;
    for (const TensorSpec& input : signature_.inputs) names.push_back(input.name);
    return std::make_unique<ProcessInstance>(name_, batching_, settings_, std::move(names),
                                             preprocessor_, tokenizers_);
  }

 private:
  const std::string name_;
  const bool batching_;
  const StepSettings settings_;
  const ModelSignature signature_;
  const std::optional<process::ImagePreprocessor> preprocessor_;
  const Tokenizers tokenizers_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<Model>> ProcessBackend::Load(const ModelLoadOptions& options) {
  const Parameters params(options);
  StepSettings settings;
  const std::string step = params.String("step", "");
  BRIGADE_ASSIGN_OR_RETURN(
      settings.step, params.Choice<Step>("step", "",
                                         {{"image_classify_preprocess", Step::kImagePreprocess},
                                          {"softmax", Step::kSoftmax},
                                          {"top_k", Step::kTopK},
                                          {"argmax", Step::kArgmax},
                                          {"wordpiece_tokenize", Step::kWordPiece},
                                          {"sentencepiece_tokenize", Step::kSentencePiece}}));
  std::optional<process::ImagePreprocessor> preprocessor;
  Tokenizers tokenizers;
  if (settings.step == Step::kImagePreprocess) {
    BRIGADE_RETURN_IF_ERROR(LoadImagePreprocess(options, params, &settings));
    BRIGADE_ASSIGN_OR_RETURN(preprocessor, process::ImagePreprocessor::Create(settings.preprocess));
  } else if (settings.step == Step::kWordPiece) {
    BRIGADE_RETURN_IF_ERROR(LoadWordPiece(options, params, &settings, &tokenizers));
  } else if (settings.step == Step::kSentencePiece) {
    BRIGADE_RETURN_IF_ERROR(LoadSentencePiece(options, params, &settings, &tokenizers));
  } else {
    BRIGADE_RETURN_IF_ERROR(LoadClassify(options, params, step, &settings));
  }
  ModelSignature signature;
  signature.inputs = options.declared_inputs;
  signature.outputs = options.declared_outputs;
  return std::make_shared<ProcessModel>(options.model_name, options.max_batch_size > 0, settings,
                                        std::move(signature), preprocessor, std::move(tokenizers));
}

}  // namespace brigade::engine
