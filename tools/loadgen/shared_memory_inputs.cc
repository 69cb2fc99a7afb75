#include "tools/loadgen/shared_memory_inputs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/shared_memory.h"

namespace brigade::loadgen {
namespace {

absl::Status SystemError(std::string_view call, const std::string& key, int error) {
  return absl::Status(
      error == EEXIST ? absl::StatusCode::kAlreadyExists : absl::StatusCode::kInternal,
      StrCat(call, " of shared memory object '", key, "' failed: ", std::strerror(error)));
}

uint64_t AlignUp(uint64_t value) {
  return (value + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

// Regions this process made; part of every key, so levels and workers never reuse one.
std::atomic<uint64_t> next_region{0};

}  // namespace

absl::StatusOr<SharedMemoryLayout> LayOutSharedMemory(std::span<const client::InferSpec> specs) {
  SharedMemoryLayout layout;
  layout.offsets.reserve(specs.size());
  uint64_t end = 0;
  for (const client::InferSpec& spec : specs) {
    std::vector<uint64_t>& offsets = layout.offsets.emplace_back();
    offsets.reserve(spec.inputs.size());
    for (const InferInput& input : spec.inputs) {
      if (input.tensor.dtype() == DataType::kBytes) {
        return absl::InvalidArgumentError(
            StrCat("input '", input.name,
                   "' is BYTES: shared memory carries fixed-size types only (a BYTES tensor's "
                   "byte size depends on its contents)"));
      }
      offsets.push_back(AlignUp(end));
      end = offsets.back() + input.tensor.byte_size();
    }
  }
  layout.byte_size = std::max<uint64_t>(end, 1);
  return layout;
}

absl::StatusOr<std::vector<InferInput>> PlaceInSharedMemory(
    std::span<const InferInput> inputs, std::span<const uint64_t> offsets,
    std::string_view region_name, std::span<std::byte> region,
    const std::shared_ptr<const void>& owner) {
  if (offsets.size() != inputs.size()) {
    return absl::InvalidArgumentError(
        StrCat(inputs.size(), " inputs but ", offsets.size(), " offsets"));
  }
  std::vector<InferInput> placed;
  placed.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& tensor = inputs[i].tensor;
    const uint64_t offset = offsets[i];
    const size_t size = tensor.byte_size();
    if (offset > region.size() || region.size() - offset < size) {
      return absl::InvalidArgumentError(StrCat("input '", inputs[i].name, "' (", size,
                                               " bytes at offset ", offset,
                                               ") does not fit the region's ", region.size()));
    }
    std::byte* bytes = region.data() + offset;
    if (size > 0) std::memcpy(bytes, tensor.data(), size);
    InferInput& input = placed.emplace_back();
    input.name = inputs[i].name;
    BRIGADE_ASSIGN_OR_RETURN(input.tensor,
                             Tensor::View(tensor.dtype(), tensor.shape(), bytes, size, owner));
    input.parameters = inputs[i].parameters;
    input.parameters.Set(std::string(protocol::kSharedMemoryRegionParameter),
                         std::string(region_name));
    input.parameters.Set(std::string(protocol::kSharedMemoryOffsetParameter),
                         static_cast<int64_t>(offset));
    input.parameters.Set(std::string(protocol::kSharedMemoryByteSizeParameter),
                         static_cast<int64_t>(size));
  }
  return placed;
}

absl::StatusOr<std::unique_ptr<ShmObject>> ShmObject::Create(std::string key, size_t byte_size) {
  const int fd = shm_open(key.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return SystemError("shm_open", key, errno);
  if (ftruncate(fd, static_cast<off_t>(byte_size)) != 0) {
    const int error = errno;
    close(fd);
    shm_unlink(key.c_str());
    return SystemError("ftruncate", key, error);
  }
  void* data = mmap(nullptr, byte_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int error = errno;
  close(fd);  // the mapping keeps the object
  if (data == MAP_FAILED) {
    shm_unlink(key.c_str());
    return SystemError("mmap", key, error);
  }
  return std::make_unique<ShmObject>(std::move(key), static_cast<std::byte*>(data), byte_size);
}

ShmObject::~ShmObject() {
  Unlink();
  munmap(data_, size_);
}

void ShmObject::Unlink() {
  if (!linked_) return;
  linked_ = false;
  shm_unlink(key_.c_str());
}

absl::StatusOr<std::unique_ptr<WorkerSharedMemory>> WorkerSharedMemory::Create(
    client::Client* client, std::span<const client::InferSpec> specs) {
  BRIGADE_ASSIGN_OR_RETURN(SharedMemoryLayout layout, LayOutSharedMemory(specs));
  const std::string name = StrCat("brigade-bench-", getpid(), "-", next_region.fetch_add(1));
  const std::string key = StrCat("/", name);
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<ShmObject> object,
                           ShmObject::Create(key, layout.byte_size));
  auto shared = std::make_unique<WorkerSharedMemory>(client, name, object);
  shared->specs_.reserve(specs.size());
  for (size_t r = 0; r < specs.size(); ++r) {
    client::InferSpec& spec = shared->specs_.emplace_back(specs[r]);
    BRIGADE_ASSIGN_OR_RETURN(spec.inputs, PlaceInSharedMemory(specs[r].inputs, layout.offsets[r],
                                                              name, object->bytes(), object));
    // Inputs carry no bytes; binary_inputs would only relabel an empty binary section.
    spec.binary_inputs = false;
  }
  const protocol::SharedMemoryRegion region{
      .name = name, .key = key, .offset = 0, .byte_size = layout.byte_size};
  absl::Status registered = client->RegisterSystemSharedMemory(region);
  // Registered or not, the name has served its purpose: the server mapped the object or never will.
  object->Unlink();
  if (!registered.ok()) {
    return absl::Status(
        registered.code(),
        StrCat("registering shared memory region '", name, "' (key ", key, ", ", layout.byte_size,
               " bytes) over ", client::ClientProtocolName(client->protocol()), ": ",
               registered.message(),
               " (--shared-memory system needs a server on this host serving the "
               "system_shared_memory extension)"));
  }
  shared->registered_ = true;
  return shared;
}

WorkerSharedMemory::~WorkerSharedMemory() {
  if (registered_) client_->UnregisterSystemSharedMemory(name_).IgnoreError();
}

absl::Status WorkerSharedMemory::Release() {
  if (!registered_) return absl::OkStatus();
  registered_ = false;
  absl::Status status = client_->UnregisterSystemSharedMemory(name_);
  if (status.ok()) return status;
  return absl::Status(status.code(), StrCat("unregistering shared memory region '", name_,
                                            "': ", status.message()));
}

}  // namespace brigade::loadgen
