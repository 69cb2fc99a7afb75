#include "repository/warmup.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "core/plain_file.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/model_config_parser.h"
#include "repository/model_file.h"

namespace brigade::repository {
namespace {

// `budget`: the bytes the run's remaining inputs may take; this one's are taken off it.
absl::StatusOr<Tensor> MakeWarmupTensor(const config::ModelWarmup::Input& input,
                                        const engine::TensorSpec& spec, int batch_size,
                                        const std::string& model_dir,
                                        const std::string& warmup_name, size_t* budget) {
  const DataType dtype = protocol::FromConfigDataType(input.data_type());
  if (dtype != spec.dtype) {
    return absl::InvalidArgumentError(StrCat("warm-up '", warmup_name, "' input '", spec.name,
                                             "' is ", DataTypeName(dtype), ", the model expects ",
                                             DataTypeName(spec.dtype)));
  }
  Shape shape;
  if (batch_size > 0) shape.push_back(batch_size);
  for (int64_t dim : input.dims()) shape.push_back(dim);
  absl::StatusOr<int64_t> count_or = ElementCount(shape);
  if (!count_or.ok()) {
    return absl::InvalidArgumentError(StrCat("warm-up '", warmup_name, "' input '", spec.name,
                                             "': ", count_or.status().message()));
  }
  const auto count = static_cast<uint64_t>(*count_or);
  const uint64_t element_bytes =
      dtype == DataType::kBytes ? sizeof(uint32_t) + sizeof(std::string) : DataTypeSize(dtype);
  if (element_bytes > 0 && count > *budget / element_bytes) {
    return absl::ResourceExhaustedError(StrCat("warm-up '", warmup_name, "' input '", spec.name,
                                               "' ", ShapeToString(shape), " takes more than the ",
                                               kMaxWarmupBytes, " bytes a warm-up run may use"));
  }
  const size_t available = *budget;
  *budget -= count * element_bytes;

  if (input.input_data_type_case() == config::ModelWarmup::Input::kInputDataFile) {
    const std::filesystem::path dir = std::filesystem::path(model_dir) / "warmup";
    const std::string what = StrCat("warm-up '", warmup_name, "' input '", spec.name, "'");
    if (absl::StatusOr<std::filesystem::path> inside =
            ResolveInsideDir(dir, input.input_data_file());
        !inside.ok() && !absl::IsNotFound(inside.status())) {
      return absl::Status(inside.status().code(),
                          StrCat(what, " input_data_file: ", inside.status().message()));
    }
    // A fixed-size tensor's file has exactly its size, so anything longer is refused unread; a
    // BYTES tensor's may take what is left of the run's bound.
    const bool bytes = dtype == DataType::kBytes;
    BRIGADE_ASSIGN_OR_RETURN(const std::string data,
                             ReadModelFile(dir, input.input_data_file(), what,
                                           bytes ? available : count * element_bytes));
    if (bytes) *budget = available - std::max<size_t>(count * element_bytes, data.size());
    const std::filesystem::path file = dir / input.input_data_file();
    absl::StatusOr<Tensor> tensor =
        Tensor::Copy(dtype, shape, std::as_bytes(std::span<const char>(data.data(), data.size())));
    if (!tensor.ok()) {
      return absl::InvalidArgumentError(StrCat("warm-up '", warmup_name, "' input '", spec.name,
                                               "': ", file.string(), ": ",
                                               tensor.status().message()));
    }
    return tensor;
  }
  if (dtype == DataType::kBytes) {
    std::vector<std::string> empty(static_cast<size_t>(count));
    return Tensor::FromStrings(shape, empty);
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Zeros(dtype, shape));
  if (input.input_data_type_case() == config::ModelWarmup::Input::kRandomData) {
    // Random bytes are fine for integer types; floats get values in [0, 1) so no NaNs appear.
    std::mt19937 rng(1234);
    if (dtype == DataType::kFp32) {
      std::uniform_real_distribution<float> dist(0.0f, 1.0f);
      for (float& value : tensor.mutable_values<float>()) value = dist(rng);
    } else if (dtype == DataType::kFp64) {
      std::uniform_real_distribution<double> dist(0.0, 1.0);
      for (double& value : tensor.mutable_values<double>()) value = dist(rng);
    } else if (dtype != DataType::kFp16 && dtype != DataType::kBf16) {
      std::uniform_int_distribution<int> dist(0, 1);
      for (size_t i = 0; i < tensor.byte_size(); ++i) {
        tensor.mutable_data()[i] = std::byte(dist(rng));
      }
    }
  }
  return tensor;
}

// True when zeros of the signature's shapes are a request the model must take: no dimension but
// the batch one is variable (set to 1 for the warm-up, which a convolution may well refuse) and
// no input is BYTES (empty strings, which a decoder refuses).
bool InputsAreExact(const engine::ModelSignature& signature, bool batching) {
  for (const engine::TensorSpec& spec : signature.inputs) {
    if (spec.dtype == DataType::kBytes) return false;
    for (size_t i = 0; i < spec.shape.size(); ++i) {
      if (spec.shape[i] < 0 && !(i == 0 && batching)) return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<WarmupPlan> BuildWarmupPlan(const config::ModelConfig& config,
                                           const engine::ModelSignature& signature,
                                           const std::string& model_dir) {
  WarmupPlan plan;
  if (config.model_warmup_size() == 0) {
    std::vector<int> sizes = {config.max_batch_size() > 0 ? 1 : 0};
    if (config.max_batch_size() > 1) sizes.push_back(config.max_batch_size());
    for (int size : sizes) {
      absl::StatusOr<std::vector<Tensor>> inputs =
          engine::MakeWarmupInputs(signature, size, kMaxWarmupBytes);
      if (!inputs.ok()) {
        plan.skipped.push_back(
            StrCat("zeros at batch size ", size, ": ", inputs.status().message()));
        continue;
      }
      plan.runs.push_back({StrCat("zeros at batch size ", size), *std::move(inputs),
                           InputsAreExact(signature, config.max_batch_size() > 0)});
    }
    return plan;
  }
  for (const config::ModelWarmup& warmup : config.model_warmup()) {
    const int batch_size = config.max_batch_size() > 0 ? std::max<int>(1, warmup.batch_size()) : 0;
    std::vector<Tensor> run;
    size_t budget = kMaxWarmupBytes;
    for (const engine::TensorSpec& spec : signature.inputs) {
      auto it = warmup.inputs().find(spec.name);
      if (it == warmup.inputs().end() && spec.optional) {
        // Omitted, as a request may omit it: the model runs with its own default.
        run.emplace_back();
        continue;
      }
      if (it == warmup.inputs().end()) {
        return absl::InvalidArgumentError(StrCat("model '", config.name(), "': warm-up '",
                                                 warmup.name(), "' has no input '", spec.name,
                                                 "'"));
      }
      BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, MakeWarmupTensor(it->second, spec, batch_size,
                                                               model_dir, warmup.name(), &budget));
      run.push_back(std::move(tensor));
    }
    for (uint32_t i = 0; i < std::max<uint32_t>(1, warmup.count()); ++i) {
      plan.runs.push_back({warmup.name(), run, /*required=*/true});
    }
  }
  return plan;
}

}  // namespace brigade::repository
