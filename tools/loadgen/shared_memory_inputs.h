#ifndef BRIGADE_TOOLS_LOADGEN_SHARED_MEMORY_INPUTS_H_
#define BRIGADE_TOOLS_LOADGEN_SHARED_MEMORY_INPUTS_H_

// Inputs in system shared memory, for `brigade bench --shared-memory system`: each worker puts
// its copy of every sample into one POSIX shm object of its own, once, before the run (the bench
// acts as a client that produces its tensors in place, e.g. decodes an image straight into the
// region), registers it with the server over its own connection (HTTP or gRPC), and its requests
// then carry only references (`shared_memory_region`, `_offset`, `_byte_size`), no tensor bytes.
//
//   LayOutSharedMemory   pure: where each input of each request goes in the region. Every
//                        tensor starts on a kTensorAlignment (64-byte) boundary, so the server
//                        reads it in place (its codec copies only misaligned tensors) and a model's
//                        vector loads see aligned data.
//   PlaceInSharedMemory  pure: copies the inputs of one request to their offsets in a mapped
//                        region and answers the inputs to send: views of those bytes (shape and
//                        datatype for the encoders) with the reference parameters added.
//   ShmObject            the POSIX object: shm_open(O_CREAT | O_EXCL), ftruncate, mmap; unlinked
//                        by Unlink() or the destructor, unmapped by the destructor.
//   WorkerSharedMemory   one worker's object, registered: Create writes the samples, registers
//                        the region and unlinks the object's name at once (the server has mapped
//                        it; both mappings outlive the name, so a bench killed mid-run leaves
//                        nothing in /dev/shm). Release unregisters and answers the server's
//                        status; the destructor unregisters when Release was not called (error
//                        paths), ignoring the answer.
//
// Keys and region names are "/brigade-bench-<pid>-<n>" and "brigade-bench-<pid>-<n>", n counting
// the regions this process made, so concurrent benches and levels never collide.
//
// Thread safety: a WorkerSharedMemory is used by its worker's thread (or the runner's, before and
// after the run); its specs are read-only while the run lasts. Ownership: WorkerSharedMemory
// borrows the Client it registered through, which must outlive it; the tensors in its specs keep
// the mapping alive. Failure: INVALID_ARGUMENT for inputs shared memory cannot carry (BYTES: their
// wire form has no fixed size), the system call's error naming the key (shm_open, ftruncate,
// mmap), the server's refusal of the registration prefixed with the region it was for.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "tools/client/client.h"

namespace brigade::loadgen {

struct SharedMemoryLayout {
  // offsets[r][i]: where input i of request r starts.
  std::vector<std::vector<uint64_t>> offsets;
  // Bytes the region needs (at least 1).
  uint64_t byte_size = 0;
};

absl::StatusOr<SharedMemoryLayout> LayOutSharedMemory(std::span<const client::InferSpec> specs);

// Copies `inputs`' bytes to `region` at `offsets` (from LayOutSharedMemory) and answers the
// inputs to send instead: views into `region` (kept alive by `owner`) whose parameters are the
// originals plus the reference to `region_name`.
absl::StatusOr<std::vector<InferInput>> PlaceInSharedMemory(
    std::span<const InferInput> inputs, std::span<const uint64_t> offsets,
    std::string_view region_name, std::span<std::byte> region,
    const std::shared_ptr<const void>& owner);

class ShmObject {
 public:
  // Creates the object `key` ("/name"), `byte_size` bytes, mapped read-write. A key that exists
  // already is ALREADY_EXISTS (never reused: it may be another process's).
  static absl::StatusOr<std::unique_ptr<ShmObject>> Create(std::string key, size_t byte_size);
  ~ShmObject();
  ShmObject(const ShmObject&) = delete;
  ShmObject& operator=(const ShmObject&) = delete;

  const std::string& key() const { return key_; }
  std::span<std::byte> bytes() const { return {data_, size_}; }
  // Removes the name from /dev/shm (mappings stay valid); idempotent.
  void Unlink();

  // Use Create().
  ShmObject(std::string key, std::byte* data, size_t size)
      : key_(std::move(key)), data_(data), size_(size) {}

 private:
  const std::string key_;
  std::byte* const data_;
  const size_t size_;
  bool linked_ = true;
};

class WorkerSharedMemory {
 public:
  // `specs`: the requests the worker sends; their inputs move into the region. `client` is
  // borrowed and must outlive the returned object (its destructor unregisters through it).
  static absl::StatusOr<std::unique_ptr<WorkerSharedMemory>> Create(
      client::Client* client, std::span<const client::InferSpec> specs);
  ~WorkerSharedMemory();
  WorkerSharedMemory(const WorkerSharedMemory&) = delete;
  WorkerSharedMemory& operator=(const WorkerSharedMemory&) = delete;

  // The worker's requests, inputs referring to the region.
  const std::vector<client::InferSpec>& specs() const { return specs_; }
  const std::string& region_name() const { return name_; }

  // Unregisters the region; the server's error, prefixed with the region's name, if any.
  absl::Status Release();

  // Use Create().
  WorkerSharedMemory(client::Client* client, std::string name, std::shared_ptr<ShmObject> object)
      : client_(client), name_(std::move(name)), object_(std::move(object)) {}

 private:
  client::Client* const client_;
  const std::string name_;
  std::shared_ptr<ShmObject> object_;
  std::vector<client::InferSpec> specs_;
  bool registered_ = false;
};

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_SHARED_MEMORY_INPUTS_H_
