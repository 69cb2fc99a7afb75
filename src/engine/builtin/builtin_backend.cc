#include "engine/builtin/builtin_backend.h"

#include <chrono>
#include <cstring>
#include <string>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::engine {
namespace {

enum class Op { kIdentity, kAddSub };

struct Settings {
  Op op = Op::kIdentity;
  int64_t compute_us = 0;
  int64_t compute_us_per_row = 0;
};

void Spin(int64_t us) {
  if (us <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

template <typename T>
void AddSub(const Tensor& a, const Tensor& b, Tensor* sum, Tensor* diff) {
  auto x = a.values<T>();
  auto y = b.values<T>();
  auto s = sum->mutable_values<T>();
  auto d = diff->mutable_values<T>();
  for (size_t i = 0; i < x.size(); ++i) {
    s[i] = x[i] + y[i];
    d[i] = x[i] - y[i];
  }
}

class BuiltinInstance final : public ModelInstance {
 public:
  BuiltinInstance(std::string model_name, Settings settings, std::shared_ptr<const void> keep_alive)
      : model_name_(std::move(model_name)),
        settings_(settings),
        keep_alive_(std::move(keep_alive)) {}

  absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) override {
    const int64_t rows = inputs.empty() || inputs[0].shape().empty() ? 1 : inputs[0].shape()[0];
    Spin(settings_.compute_us + rows * settings_.compute_us_per_row);
    outputs->clear();
    if (settings_.op == Op::kIdentity) {
      for (const Tensor& input : inputs) {
        BRIGADE_ASSIGN_OR_RETURN(Tensor copy, input.Clone());
        outputs->push_back(std::move(copy));
      }
      return absl::OkStatus();
    }
    if (inputs.size() != 2) {
      return absl::InvalidArgumentError(
          StrCat("model '", model_name_, "': add_sub takes 2 inputs, got ", inputs.size()));
    }
    const Tensor& a = inputs[0];
    const Tensor& b = inputs[1];
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
      return absl::InvalidArgumentError(StrCat(
          "model '", model_name_, "': INPUT0 and INPUT1 must have the same type and shape, got ",
          DataTypeName(a.dtype()), ShapeToString(a.shape()), " and ", DataTypeName(b.dtype()),
          ShapeToString(b.shape())));
    }
    BRIGADE_ASSIGN_OR_RETURN(Tensor sum, Tensor::Allocate(a.dtype(), a.shape()));
    BRIGADE_ASSIGN_OR_RETURN(Tensor diff, Tensor::Allocate(a.dtype(), a.shape()));
    if (a.dtype() == DataType::kFp32) {
      AddSub<float>(a, b, &sum, &diff);
    } else {
      AddSub<int32_t>(a, b, &sum, &diff);
    }
    outputs->push_back(std::move(sum));
    outputs->push_back(std::move(diff));
    return absl::OkStatus();
  }

  // Pure arithmetic on the caller's thread.
  bool RunsOnAnyThread() const override { return true; }

 private:
  const std::string model_name_;
  const Settings settings_;
  std::shared_ptr<const void> keep_alive_;
};

class BuiltinModel final : public Model, public std::enable_shared_from_this<BuiltinModel> {
 public:
  BuiltinModel(std::string name, Settings settings, ModelSignature signature)
      : name_(std::move(name)), settings_(settings), signature_(std::move(signature)) {}

  const ModelSignature& signature() const override { return signature_; }

  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<BuiltinInstance>(name_, settings_, shared_from_this());
  }

 private:
  const std::string name_;
  const Settings settings_;
  const ModelSignature signature_;
};

absl::StatusOr<int64_t> IntParameter(const ModelLoadOptions& options, const std::string& key) {
  auto it = options.parameters.find(key);
  if (it == options.parameters.end()) return 0;
  int64_t value = 0;
  if (!ParseInteger(it->second, &value) || value < 0) {
    return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': parameter ", key,
                                             " must be a non-negative integer, got '", it->second,
                                             "'"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Model>> BuiltinBackend::Load(const ModelLoadOptions& options) {
  Settings settings;
  const auto op = options.parameters.find("op");
  const std::string op_name = op == options.parameters.end() ? "identity" : op->second;
  if (op_name == "identity") {
    settings.op = Op::kIdentity;
  } else if (op_name == "add_sub") {
    settings.op = Op::kAddSub;
  } else {
    return absl::InvalidArgumentError(StrCat("model '", options.model_name,
                                             "': unknown builtin op '", op_name,
                                             "' (expected identity or add_sub)"));
  }
  BRIGADE_ASSIGN_OR_RETURN(settings.compute_us, IntParameter(options, "compute_us"));
  BRIGADE_ASSIGN_OR_RETURN(settings.compute_us_per_row,
                           IntParameter(options, "compute_us_per_row"));

  ModelSignature signature;
  signature.inputs = options.declared_inputs;
  if (signature.inputs.empty()) {
    return absl::InvalidArgumentError(StrCat(
        "model '", options.model_name, "': builtin models need their inputs declared in config"));
  }
  for (const TensorSpec& input : signature.inputs) {
    if (input.optional) {
      return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': input '",
                                               input.name,
                                               "' is optional in config, but builtin op '", op_name,
                                               "' needs every input (it has no defaults)"));
    }
  }
  if (settings.op == Op::kIdentity) {
    for (size_t i = 0; i < signature.inputs.size(); ++i) {
      TensorSpec output = signature.inputs[i];
      output.name = i < options.declared_outputs.size() ? options.declared_outputs[i].name
                                                        : StrCat("OUTPUT", i);
      signature.outputs.push_back(std::move(output));
    }
  } else {
    if (signature.inputs.size() != 2) {
      return absl::InvalidArgumentError(
          StrCat("model '", options.model_name,
                 "': add_sub needs exactly two inputs, config declares ", signature.inputs.size()));
    }
    for (const TensorSpec& input : signature.inputs) {
      if (input.dtype != DataType::kFp32 && input.dtype != DataType::kInt32) {
        return absl::InvalidArgumentError(StrCat("model '", options.model_name,
                                                 "': add_sub supports FP32 and INT32, input '",
                                                 input.name, "' is ", DataTypeName(input.dtype)));
      }
    }
    for (int i = 0; i < 2; ++i) {
      TensorSpec output = signature.inputs[0];
      output.name = static_cast<size_t>(i) < options.declared_outputs.size()
                        ? options.declared_outputs[i].name
                        : StrCat("OUTPUT", i);
      signature.outputs.push_back(std::move(output));
    }
  }
  return std::make_shared<BuiltinModel>(options.model_name, settings, std::move(signature));
}

}  // namespace brigade::engine
