#include "route/control_step.h"

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::route {
namespace {

// A double as a switch compares it: integral values without a fraction, so a JSON 2.0 (or a
// router's FP32 class id) matches a branch value "2".
std::string NumberText(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9.0e15) {
    return StrCat(static_cast<int64_t>(value));
  }
  return StrCat(value);
}

template <typename T>
int64_t ArgMaxOfRow(const Tensor& tensor, int64_t row, int64_t width) {
  std::span<const T> values = tensor.values<T>().subspan(row * width, width);
  int64_t best = 0;
  for (int64_t i = 1; i < width; ++i) {
    // Strictly greater: the first of equal scores wins, as torch.argmax and numpy.argmax pick.
    if (values[i] > values[best]) best = i;
  }
  return best;
}

absl::StatusOr<int64_t> ArgMax(const Tensor& tensor, int64_t row, int64_t width) {
  switch (tensor.dtype()) {
    case DataType::kFp32:
      return ArgMaxOfRow<float>(tensor, row, width);
    case DataType::kFp64:
      return ArgMaxOfRow<double>(tensor, row, width);
    case DataType::kInt32:
      return ArgMaxOfRow<int32_t>(tensor, row, width);
    case DataType::kInt64:
      return ArgMaxOfRow<int64_t>(tensor, row, width);
    case DataType::kUint8:
      return ArgMaxOfRow<uint8_t>(tensor, row, width);
    default:
      return absl::InvalidArgumentError(
          StrCat("ARGMAX reads FP32, FP64, INT32, INT64 or UINT8 scores, not ",
                 DataTypeName(tensor.dtype())));
  }
}

absl::StatusOr<std::string> ElementText(const Tensor& tensor, int64_t index,
                                        const std::vector<std::string_view>* strings) {
  switch (tensor.dtype()) {
    case DataType::kBool:
      return std::string(tensor.values<bool>()[index] ? "true" : "false");
    case DataType::kUint8:
      return StrCat(tensor.values<uint8_t>()[index]);
    case DataType::kUint16:
      return StrCat(tensor.values<uint16_t>()[index]);
    case DataType::kUint32:
      return StrCat(tensor.values<uint32_t>()[index]);
    case DataType::kUint64:
      return StrCat(tensor.values<uint64_t>()[index]);
    case DataType::kInt8:
      return StrCat(tensor.values<int8_t>()[index]);
    case DataType::kInt16:
      return StrCat(tensor.values<int16_t>()[index]);
    case DataType::kInt32:
      return StrCat(tensor.values<int32_t>()[index]);
    case DataType::kInt64:
      return StrCat(tensor.values<int64_t>()[index]);
    case DataType::kFp32:
      return NumberText(tensor.values<float>()[index]);
    case DataType::kFp64:
      return NumberText(tensor.values<double>()[index]);
    case DataType::kBytes:
      return std::string((*strings)[index]);
    default:
      return absl::InvalidArgumentError(
          StrCat("a switch cannot read a ", DataTypeName(tensor.dtype()), " value"));
  }
}

bool FloatOnly(FusionOp op) {
  return op == config::ModelEnsembling::StepFusion::MEAN ||
         op == config::ModelEnsembling::StepFusion::WEIGHTED_SUM;
}

std::string_view OpName(FusionOp op) { return config::ModelEnsembling::StepFusion::Op_Name(op); }

}  // namespace

std::optional<std::string> SwitchParameterText(const Parameters& parameters, std::string_view key) {
  const ParameterValue* value = parameters.Find(key);
  if (value == nullptr) return std::nullopt;
  struct Text {
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return StrCat(v); }
    std::string operator()(uint64_t v) const { return StrCat(v); }
    std::string operator()(double v) const { return NumberText(v); }
    std::string operator()(const std::string& v) const { return v; }
  };
  return std::visit(Text{}, *value);
}

absl::StatusOr<std::vector<std::string>> SwitchTensorValues(const Tensor& tensor,
                                                            std::string_view name, bool argmax,
                                                            bool batching) {
  const int64_t rows = batching && !tensor.shape().empty() ? tensor.shape()[0] : 1;
  if (rows <= 0 || tensor.num_elements() == 0) {
    return absl::InvalidArgumentError(StrCat("tensor '", name, "' is empty"));
  }
  const int64_t width = tensor.num_elements() / rows;
  if (!argmax && width != 1) {
    return absl::InvalidArgumentError(
        StrCat("tensor '", name, "' has ", width, " values per row; the switch reads one"));
  }
  std::vector<std::string_view> strings;
  if (!argmax && tensor.dtype() == DataType::kBytes) {
    BRIGADE_ASSIGN_OR_RETURN(strings, tensor.StringValues());
  }
  // One value per row: `rows` rows of the tensor's elements exist, so the vector is bounded.
  std::vector<std::string> values;
  values.reserve(static_cast<size_t>(rows));
  for (int64_t row = 0; row < rows; ++row) {
    if (argmax) {
      absl::StatusOr<int64_t> index = ArgMax(tensor, row, width);
      if (!index.ok()) {
        return absl::InvalidArgumentError(
            StrCat("tensor '", name, "': ", index.status().message()));
      }
      values.push_back(StrCat(*index));
    } else {
      absl::StatusOr<std::string> text = ElementText(tensor, row, &strings);
      if (!text.ok()) {
        return absl::InvalidArgumentError(StrCat("tensor '", name, "': ", text.status().message()));
      }
      values.push_back(*std::move(text));
    }
  }
  return values;
}

absl::StatusOr<TensorSignature> FusionSignature(FusionOp op,
                                                std::span<const TensorSignature> inputs, int axis,
                                                std::span<const float> weights) {
  if (inputs.empty()) return absl::InvalidArgumentError("the fusion reads no tensor");
  const bool weighted = op == config::ModelEnsembling::StepFusion::WEIGHTED_SUM;
  if (weighted != !weights.empty() || (weighted && weights.size() != inputs.size())) {
    return absl::InvalidArgumentError(weighted ? StrCat("WEIGHTED_SUM needs one weight per input (",
                                                        inputs.size(), "), not ", weights.size())
                                               : StrCat(OpName(op), " takes no weight"));
  }
  const TensorSignature& head = inputs[0];
  if (FloatOnly(op) && head.dtype != DataType::kFp32) {
    return absl::InvalidArgumentError(
        StrCat(OpName(op), " needs FP32 tensors; '", head.name, "' is ", DataTypeName(head.dtype)));
  }
  const bool concat = op == config::ModelEnsembling::StepFusion::CONCAT;
  if (concat) {
    if (head.dtype == DataType::kBytes) {
      return absl::InvalidArgumentError(
          StrCat("CONCAT cannot join BYTES tensor '", head.name, "'"));
    }
    if (axis <= 0 || axis >= static_cast<int>(head.shape.size())) {
      return absl::InvalidArgumentError(StrCat("axis ", axis, " is outside tensor '", head.name,
                                               "' of shape ", ShapeToString(head.shape),
                                               " (the batch dimension cannot be joined)"));
    }
  }
  TensorSignature out = head;
  out.optional = false;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const TensorSignature& next = inputs[i];
    if (next.dtype != head.dtype) {
      return absl::InvalidArgumentError(StrCat("tensor '", next.name, "' is ",
                                               DataTypeName(next.dtype), " but '", head.name,
                                               "' is ", DataTypeName(head.dtype)));
    }
    bool fits = next.shape.size() == head.shape.size();
    for (size_t d = 0; fits && d < head.shape.size(); ++d) {
      if (concat && static_cast<int>(d) == axis) continue;
      fits = next.shape[d] == -1 || out.shape[d] == -1 || next.shape[d] == out.shape[d];
      if (fits && out.shape[d] == -1) out.shape[d] = next.shape[d];
    }
    if (!fits) {
      return absl::InvalidArgumentError(
          StrCat("tensor '", next.name, "' has shape ", ShapeToString(next.shape), " but '",
                 head.name, "' has ", ShapeToString(head.shape),
                 concat ? " (they may differ only along the axis)" : ""));
    }
    if (concat) {
      out.shape[axis] =
          out.shape[axis] == -1 || next.shape[axis] == -1 ? -1 : out.shape[axis] + next.shape[axis];
    }
  }
  return out;
}

absl::StatusOr<Tensor> Fuse(FusionOp op, std::span<const Tensor> present, int axis,
                            std::span<const float> weights) {
  if (present.empty()) return absl::InvalidArgumentError("no input of the fusion exists");
  const Tensor& head = present[0];
  switch (op) {
    case config::ModelEnsembling::StepFusion::SELECT:
      if (present.size() != 1) {
        return absl::InvalidArgumentError(
            StrCat("SELECT found ", present.size(), " of its inputs, where one branch writes one"));
      }
      return head;  // shares the storage: no copy
    case config::ModelEnsembling::StepFusion::CONCAT: {
      if (present.size() == 1) return head;
      // Rows of the outer dimensions, each the concatenation of the inputs' slices.
      int64_t outer = 1;
      for (int d = 0; d < axis; ++d) outer *= head.shape()[d];
      Shape shape = head.shape();
      shape[axis] = 0;
      std::vector<size_t> chunk(present.size());
      for (size_t i = 0; i < present.size(); ++i) {
        const Tensor& part = present[i];
        bool same = part.dtype() == head.dtype() && part.shape().size() == head.shape().size();
        for (size_t d = 0; same && d < head.shape().size(); ++d) {
          same = static_cast<int>(d) == axis || part.shape()[d] == head.shape()[d];
        }
        if (!same) {
          return absl::InvalidArgumentError(StrCat(
              "input ", i + 1, " has shape ", ShapeToString(part.shape()), " but input 1 has ",
              ShapeToString(head.shape()), ": they may differ only along axis ", axis));
        }
        shape[axis] += part.shape()[axis];
        chunk[i] = outer == 0 ? 0 : part.byte_size() / static_cast<size_t>(outer);
      }
      BRIGADE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(head.dtype(), shape));
      std::byte* to = out.mutable_data();
      for (int64_t row = 0; row < outer; ++row) {
        for (size_t i = 0; i < present.size(); ++i) {
          std::memcpy(to, present[i].data() + row * chunk[i], chunk[i]);
          to += chunk[i];
        }
      }
      return out;
    }
    case config::ModelEnsembling::StepFusion::MEAN:
    case config::ModelEnsembling::StepFusion::WEIGHTED_SUM: {
      const bool mean = op == config::ModelEnsembling::StepFusion::MEAN;
      BRIGADE_ASSIGN_OR_RETURN(Tensor out, Tensor::Zeros(DataType::kFp32, head.shape()));
      std::span<float> sum = out.mutable_values<float>();
      for (size_t i = 0; i < present.size(); ++i) {
        if (present[i].dtype() != DataType::kFp32 || present[i].shape() != head.shape()) {
          return absl::InvalidArgumentError(
              StrCat("input ", i + 1, " is ", DataTypeName(present[i].dtype()), " ",
                     ShapeToString(present[i].shape()), " but input 1 is ",
                     DataTypeName(head.dtype()), " ", ShapeToString(head.shape())));
        }
        const float weight = mean ? 1.0f : weights[i];
        std::span<const float> values = present[i].values<float>();
        for (size_t k = 0; k < sum.size(); ++k) sum[k] += weight * values[k];
      }
      if (mean) {
        const float scale = 1.0f / static_cast<float>(present.size());
        for (float& value : sum) value *= scale;
      }
      return out;
    }
    default:
      return absl::InvalidArgumentError(StrCat("fusion ", OpName(op), " runs no model here"));
  }
}

}  // namespace brigade::route
