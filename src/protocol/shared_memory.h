#ifndef BRIGADE_PROTOCOL_SHARED_MEMORY_H_
#define BRIGADE_PROTOCOL_SHARED_MEMORY_H_

// Triton's system shared memory extension, the protocol's half: the region a client registers
// (name, POSIX shm key, offset, byte size), the reference an input or output makes to it (the
// `shared_memory_region`, `shared_memory_offset`, `shared_memory_byte_size` parameters), and the
// pure checks both wires share. The mapping itself (shm_open, mmap, reference counts) is the
// front end's (frontend/shm/shared_memory_registry.h), behind the SharedMemoryResolver interface
// the codecs call, so the codecs stay free of system calls and are tested with a fake.
//
// Why the codecs resolve inputs: a shared-memory input has no data in the request, only a type,
// a shape and a reference; resolving it where the request is decoded gives it its tensor (a view
// into the mapping: no copy) before any stage reads it, and its errors name the input.
// Outputs are resolved right after decoding (BindSharedMemoryOutputs) and written when the answer
// comes (WriteSharedMemoryOutputs); the encoders then send their metadata without data.
//
// Lifetime: a SharedMemoryBytes holds `owner`, a reference to the region's mapping, so a region
// unregistered while a request uses it stays mapped until the request's tensors and bindings are
// gone.
//
// Failure: INVALID_ARGUMENT naming the input or output and the parameter at fault: a region name
// that is not a string, an offset or byte size that is not a non-negative integer, offset/size
// without a region, a range past the region's end (from the resolver), a byte size that does not
// match the input's type and shape, an output larger than its byte size. Thread safety: pure
// functions; the resolver's implementations are thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/parameters.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace brigade::protocol {

inline constexpr std::string_view kSharedMemoryRegionParameter = "shared_memory_region";
inline constexpr std::string_view kSharedMemoryOffsetParameter = "shared_memory_offset";
inline constexpr std::string_view kSharedMemoryByteSizeParameter = "shared_memory_byte_size";

// Longest key accepted (NAME_MAX, the longest file name /dev/shm holds), without its '/'.
inline constexpr size_t kMaxSharedMemoryKeyBytes = 255;
// Longest region name accepted.
inline constexpr size_t kMaxSharedMemoryNameBytes = 255;

// One registered region, as register requests carry it and status answers list it.
struct SharedMemoryRegion {
  std::string name;
  std::string key;  // POSIX shm key, "/name" or "name"
  uint64_t offset = 0;
  uint64_t byte_size = 0;

  friend bool operator==(const SharedMemoryRegion&, const SharedMemoryRegion&) = default;
};

// An input's or output's reference: `byte_size` bytes at `offset` in the region named `region`.
struct SharedMemoryRef {
  std::string region;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

// Bytes inside a mapped region, kept mapped by `owner`.
struct SharedMemoryBytes {
  std::byte* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
};

// What the codecs ask of the region registry. Implementations are thread-safe.
class SharedMemoryResolver {
 public:
  virtual ~SharedMemoryResolver() = default;
  // The bytes `ref` names, checked against the region on every call: INVALID_ARGUMENT for an
  // unknown region or a range past its end (messages name `where`, e.g. "input 'x'").
  virtual absl::StatusOr<SharedMemoryBytes> Resolve(const SharedMemoryRef& ref,
                                                    std::string_view where) const = 0;
};

// A requested output bound to its region, from decoding until the answer is written.
struct SharedMemoryOutput {
  std::string name;
  SharedMemoryRef ref;
  SharedMemoryBytes bytes;
};

// Names a region may have: 1..255 bytes, no control characters. Keys: an optional leading '/'
// then 1..255 bytes of letters, digits, '_', '-' and '.', never "." or ".." nor containing "..":
// a key names a file directly in /dev/shm and nothing else. INVALID_ARGUMENT naming the field.
absl::Status ValidateSharedMemoryName(std::string_view name);
absl::Status ValidateSharedMemoryKey(std::string_view key);

// Takes the shared_memory_* parameters out of `parameters` (erasing them): nullopt when there is
// no `shared_memory_region`; the reference otherwise. A region needs a byte size
// (`shared_memory_byte_size`, as Triton requires); the offset defaults to 0. Offset or size
// without a region, or values of the wrong type, are INVALID_ARGUMENT naming `where` and the key.
absl::StatusOr<std::optional<SharedMemoryRef>> TakeSharedMemoryRef(Parameters* parameters,
                                                                   std::string_view where);

// The tensor of an input in shared memory: a view into the region (no copy) when the bytes are
// aligned to the element size, an aligned copy otherwise. `resolver` null: the feature is off
// (INVALID_ARGUMENT saying so). The byte size must match `dtype` and `shape` exactly.
absl::StatusOr<Tensor> SharedMemoryInputTensor(const SharedMemoryResolver* resolver,
                                               const SharedMemoryRef& ref, DataType dtype,
                                               Shape shape, std::string_view where);

// Takes every requested output's shared_memory_* parameters and resolves them (range checked,
// the region held mapped). `resolver` null with any such output: INVALID_ARGUMENT.
absl::StatusOr<std::vector<SharedMemoryOutput>> BindSharedMemoryOutputs(
    const SharedMemoryResolver* resolver, std::vector<RequestedOutput>* outputs);

// Writes each bound output of `response` into its region. An output larger than its byte size
// is INVALID_ARGUMENT naming it and both sizes; an output the response lacks is skipped.
absl::Status WriteSharedMemoryOutputs(std::span<const SharedMemoryOutput> outputs,
                                      const InferResponse& response);

// Whether `name` is one of `outputs` (the encoders send such an output without data).
bool InSharedMemory(std::span<const SharedMemoryOutput> outputs, std::string_view name);

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_SHARED_MEMORY_H_
