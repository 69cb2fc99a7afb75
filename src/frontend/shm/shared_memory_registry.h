#ifndef BRIGADE_FRONTEND_SHM_SHARED_MEMORY_REGISTRY_H_
#define BRIGADE_FRONTEND_SHM_SHARED_MEMORY_REGISTRY_H_

// SharedMemoryRegistry: the system shared memory regions clients registered (Triton's
// /v2/systemsharedmemory and gRPC SystemSharedMemory*), each a POSIX shm object (/dev/shm)
// mapped once, at registration, read and written by inference requests in place.
//
//   Register    validates the name and key (protocol/shared_memory.h: a key names a file in
//               /dev/shm, never a path), opens the key (shm_open: O_RDWR, no following links),
//               checks it is a regular file holding offset + byte_size bytes, maps that range
//               (MAP_SHARED, read and write) and closes the descriptor. A name already
//               registered is ALREADY_EXISTS (unregister it first, as in Triton).
//   Resolve     what the codecs call for each input and output naming a region, on every
//               request: the range offset + byte_size is checked against the region (overflow-
//               safe) and the answer holds a reference to the mapping.
//   Unregister  drops the registry's reference; the mapping is unmapped when the last request
//               holding it is done, so a region unregistered under load never pulls memory from
//               under a running model. An unknown name is OK (Triton's answer); "" drops all.
//   Status      the regions registered ("": all; an unknown name is NOT_FOUND).
//
// The client keeps the memory's contents stable while a request uses it, as with Triton; a
// client that truncates its shm object under a running request makes the server's read fault,
// which is why only admin-scoped callers may register regions (frontend/auth).
//
// Thread safety: every method is safe from any thread. Registration maps outside the lock.
// Failure: INVALID_ARGUMENT naming the field (name, key, offset, byte_size) for bad requests or
// a key that cannot be opened or is too small; RESOURCE_EXHAUSTED past `max_regions`.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "protocol/metadata.h"
#include "protocol/shared_memory.h"

namespace brigade::frontend {

class SharedMemoryRegistry final : public protocol::SharedMemoryResolver {
 public:
  struct Options {
    // Regions registered at once; more are refused.
    size_t max_regions = 1024;
  };

  static absl::StatusOr<std::unique_ptr<SharedMemoryRegistry>> Create(Options options);
  explicit SharedMemoryRegistry(Options options) : options_(options) {}

  absl::Status Register(const protocol::SharedMemoryRegion& region);
  absl::Status Unregister(std::string_view name);
  absl::StatusOr<std::vector<protocol::SharedMemoryRegion>> Status(std::string_view name) const;

  absl::StatusOr<protocol::SharedMemoryBytes> Resolve(const protocol::SharedMemoryRef& ref,
                                                      std::string_view where) const override;

  // Requests (and bindings) holding the region's mapping, besides the registry; -1 when it is not
  // registered. For tests.
  int64_t InUse(std::string_view name) const;

 private:
  class Mapping;
  struct Entry {
    protocol::SharedMemoryRegion region;
    std::shared_ptr<const Mapping> mapping;
  };

  const Options options_;
  mutable absl::Mutex mu_;
  // std::map: lookups by string_view (Debian's absl hashes only its own string_view).
  std::map<std::string, Entry, std::less<>> regions_ ABSL_GUARDED_BY(mu_);
};

// `metadata` as a front end answers it: without "system_shared_memory" in its extensions when
// `registry` is null (the feature is off).
protocol::ServerMetadata AdvertisedMetadata(protocol::ServerMetadata metadata,
                                            const SharedMemoryRegistry* registry);

// Why a shared-memory endpoint or RPC cannot be served: UNIMPLEMENTED when the feature is off.
absl::Status SharedMemoryDisabled();

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_SHM_SHARED_MEMORY_REGISTRY_H_
