#include "protocol/shared_memory.h"

#include <cstring>
#include <utility>
#include <variant>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::protocol {
namespace {

bool KeyCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// A non-negative integer parameter, erased from `parameters`; nullopt when absent.
absl::StatusOr<std::optional<uint64_t>> TakeUnsigned(Parameters* parameters, std::string_view key,
                                                     std::string_view where) {
  const ParameterValue* found = parameters->Find(key);
  if (found == nullptr) return std::nullopt;
  uint64_t out = 0;
  if (const uint64_t* wide = std::get_if<uint64_t>(found)) {
    out = *wide;  // JSON numbers past int64's range arrive as uint64
  } else if (const std::optional<int64_t> value = parameters->GetInt(key); value && *value >= 0) {
    out = static_cast<uint64_t>(*value);
  } else {
    return absl::InvalidArgumentError(
        StrCat(where, ": parameter '", key, "' must be a non-negative integer"));
  }
  parameters->Erase(key);
  return out;
}

}  // namespace

absl::Status ValidateSharedMemoryName(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("shared memory region name is empty");
  if (name.size() > kMaxSharedMemoryNameBytes) {
    return absl::InvalidArgumentError(StrCat("shared memory region name is ", name.size(),
                                             " bytes; at most ", kMaxSharedMemoryNameBytes));
  }
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError("shared memory region name has a control character");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSharedMemoryKey(std::string_view key) {
  std::string_view name = key;
  if (name.starts_with('/')) name.remove_prefix(1);
  if (name.empty()) return absl::InvalidArgumentError("shared memory key is empty");
  if (name.size() > kMaxSharedMemoryKeyBytes) {
    return absl::InvalidArgumentError(
        StrCat("shared memory key is ", name.size(), " bytes; at most ", kMaxSharedMemoryKeyBytes));
  }
  for (const char c : name) {
    if (!KeyCharacter(c)) {
      return absl::InvalidArgumentError(
          StrCat("shared memory key '", key,
                 "': only letters, digits, '_', '-' and '.' may follow the leading '/' (a key "
                 "names a file in /dev/shm, never a path)"));
    }
  }
  if (name == "." || name.find("..") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat("shared memory key '", key, "' must not contain '..' or be '.'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<SharedMemoryRef>> TakeSharedMemoryRef(Parameters* parameters,
                                                                   std::string_view where) {
  std::optional<std::string> region;
  if (parameters->Contains(kSharedMemoryRegionParameter)) {
    const std::optional<std::string_view> name =
        parameters->GetString(kSharedMemoryRegionParameter);
    if (!name || name->empty()) {
      return absl::InvalidArgumentError(StrCat(where, ": parameter '", kSharedMemoryRegionParameter,
                                               "' must be a region's name (a non-empty string)"));
    }
    region = std::string(*name);
    parameters->Erase(kSharedMemoryRegionParameter);
  }
  BRIGADE_ASSIGN_OR_RETURN(std::optional<uint64_t> offset,
                           TakeUnsigned(parameters, kSharedMemoryOffsetParameter, where));
  BRIGADE_ASSIGN_OR_RETURN(std::optional<uint64_t> byte_size,
                           TakeUnsigned(parameters, kSharedMemoryByteSizeParameter, where));
  if (!region) {
    if (offset || byte_size) {
      return absl::InvalidArgumentError(
          StrCat(where, ": parameter '",
                 offset ? kSharedMemoryOffsetParameter : kSharedMemoryByteSizeParameter,
                 "' needs a '", kSharedMemoryRegionParameter, "' parameter"));
    }
    return std::nullopt;
  }
  if (!byte_size) {
    return absl::InvalidArgumentError(StrCat(where, ": parameter '", kSharedMemoryRegionParameter,
                                             "' needs a '", kSharedMemoryByteSizeParameter,
                                             "' parameter"));
  }
  return SharedMemoryRef{*std::move(region), offset.value_or(0), *byte_size};
}

absl::StatusOr<Tensor> SharedMemoryInputTensor(const SharedMemoryResolver* resolver,
                                               const SharedMemoryRef& ref, DataType dtype,
                                               Shape shape, std::string_view where) {
  if (resolver == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(where, ": parameter '", kSharedMemoryRegionParameter,
               "': system shared memory is disabled on this server; send the data in the "
               "request"));
  }
  BRIGADE_ASSIGN_OR_RETURN(SharedMemoryBytes bytes, resolver->Resolve(ref, where));
  const size_t element_size = DataTypeSize(dtype);
  const bool misaligned =
      element_size > 1 && reinterpret_cast<uintptr_t>(bytes.data) % element_size != 0;
  absl::StatusOr<Tensor> tensor =
      misaligned
          ? Tensor::Copy(dtype, std::move(shape), {bytes.data, bytes.size})
          : Tensor::View(dtype, std::move(shape), bytes.data, bytes.size, std::move(bytes.owner));
  if (!tensor.ok()) {
    return absl::Status(tensor.status().code(),
                        StrCat(where, ": ", kSharedMemoryByteSizeParameter, " ", ref.byte_size,
                               " of region '", ref.region, "': ", tensor.status().message()));
  }
  return tensor;
}

absl::StatusOr<std::vector<SharedMemoryOutput>> BindSharedMemoryOutputs(
    const SharedMemoryResolver* resolver, std::vector<RequestedOutput>* outputs) {
  std::vector<SharedMemoryOutput> bound;
  for (RequestedOutput& output : *outputs) {
    const std::string where = StrCat("output '", output.name, "'");
    BRIGADE_ASSIGN_OR_RETURN(std::optional<SharedMemoryRef> ref,
                             TakeSharedMemoryRef(&output.parameters, where));
    if (!ref) continue;
    if (resolver == nullptr) {
      return absl::InvalidArgumentError(
          StrCat(where, ": parameter '", kSharedMemoryRegionParameter,
                 "': system shared memory is disabled on this server"));
    }
    BRIGADE_ASSIGN_OR_RETURN(SharedMemoryBytes bytes, resolver->Resolve(*ref, where));
    bound.push_back({output.name, *std::move(ref), std::move(bytes)});
  }
  return bound;
}

absl::Status WriteSharedMemoryOutputs(std::span<const SharedMemoryOutput> outputs,
                                      const InferResponse& response) {
  for (const SharedMemoryOutput& output : outputs) {
    const InferOutput* answered = response.FindOutput(output.name);
    if (answered == nullptr) continue;
    const size_t size = answered->tensor.byte_size();
    if (size > output.bytes.size) {
      return absl::InvalidArgumentError(StrCat("output '", output.name, "' is ", size,
                                               " bytes; its ", kSharedMemoryByteSizeParameter,
                                               " is ", output.bytes.size));
    }
    // memmove: an output may alias an input read from the same bytes (an identity model).
    if (size > 0) std::memmove(output.bytes.data, answered->tensor.data(), size);
  }
  return absl::OkStatus();
}

bool InSharedMemory(std::span<const SharedMemoryOutput> outputs, std::string_view name) {
  for (const SharedMemoryOutput& output : outputs) {
    if (output.name == name) return true;
  }
  return false;
}

}  // namespace brigade::protocol
