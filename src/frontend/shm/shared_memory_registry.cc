#include "frontend/shm/shared_memory_registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::frontend {

// One mmap of a region's range; unmapped when the last reference goes.
class SharedMemoryRegistry::Mapping {
 public:
  Mapping(void* base, size_t length, std::byte* start, size_t byte_size)
      : base_(base), length_(length), start_(start), byte_size_(byte_size) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { munmap(base_, length_); }

  std::byte* start() const { return start_; }
  size_t byte_size() const { return byte_size_; }

 private:
  void* const base_;
  const size_t length_;
  std::byte* const start_;
  const size_t byte_size_;
};

namespace {

std::string Errno(int error) { return std::string(std::strerror(error)); }

// Closes a descriptor on every path out.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  const int fd_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SharedMemoryRegistry>> SharedMemoryRegistry::Create(
    Options options) {
  if (options.max_regions == 0) return absl::InvalidArgumentError("max_regions must be > 0");
  return std::make_unique<SharedMemoryRegistry>(options);
}

absl::Status SharedMemoryRegistry::Register(const protocol::SharedMemoryRegion& region) {
  BRIGADE_RETURN_IF_ERROR(protocol::ValidateSharedMemoryName(region.name));
  BRIGADE_RETURN_IF_ERROR(protocol::ValidateSharedMemoryKey(region.key));
  const std::string what = StrCat("shared memory region '", region.name, "'");
  if (region.byte_size == 0) {
    return absl::InvalidArgumentError(StrCat(what, ": byte_size must be > 0"));
  }
  if (region.offset > static_cast<uint64_t>(std::numeric_limits<off_t>::max()) ||
      region.byte_size > std::numeric_limits<size_t>::max() / 2 ||
      region.byte_size > static_cast<uint64_t>(std::numeric_limits<off_t>::max()) - region.offset) {
    return absl::InvalidArgumentError(StrCat(what, ": offset ", region.offset, " + byte_size ",
                                             region.byte_size, " is past any file's end"));
  }
  {
    absl::MutexLock lock(&mu_);
    if (regions_.contains(region.name)) {
      return absl::AlreadyExistsError(StrCat(what, " is already registered; unregister it first"));
    }
    if (regions_.size() >= options_.max_regions) {
      return absl::ResourceExhaustedError(
          StrCat(what, ": ", options_.max_regions, " regions are registered, the most allowed"));
    }
  }
  const std::string key = region.key.starts_with('/') ? region.key : StrCat("/", region.key);
  // glibc's shm_open adds O_NOFOLLOW and O_CLOEXEC.
  Descriptor fd(shm_open(key.c_str(), O_RDWR, 0));
  if (fd.get() < 0) {
    const int error = errno;
    return absl::InvalidArgumentError(
        StrCat(what, ": cannot open key '", region.key, "': ", Errno(error)));
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) {
    const int error = errno;
    return absl::InvalidArgumentError(StrCat(what, ": key '", region.key, "': ", Errno(error)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        StrCat(what, ": key '", region.key, "' is not a shared memory object"));
  }
  const uint64_t file_bytes = static_cast<uint64_t>(info.st_size);
  if (region.offset > file_bytes || region.byte_size > file_bytes - region.offset) {
    return absl::InvalidArgumentError(StrCat(what, ": offset ", region.offset, " + byte_size ",
                                             region.byte_size, " runs past the end of key '",
                                             region.key, "' (", file_bytes, " bytes)"));
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t map_offset = region.offset - region.offset % page;
  const size_t length = static_cast<size_t>(region.offset - map_offset + region.byte_size);
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(),
                    static_cast<off_t>(map_offset));
  if (base == MAP_FAILED) {
    const int error = errno;
    return absl::InvalidArgumentError(
        StrCat(what, ": cannot map key '", region.key, "': ", Errno(error)));
  }
  auto mapping = std::make_shared<const Mapping>(
      base, length, static_cast<std::byte*>(base) + (region.offset - map_offset),
      static_cast<size_t>(region.byte_size));
  absl::MutexLock lock(&mu_);
  // Checked again: another registration of the name may have won while this one mapped.
  if (!regions_.try_emplace(region.name, Entry{region, std::move(mapping)}).second) {
    return absl::AlreadyExistsError(StrCat(what, " is already registered; unregister it first"));
  }
  return absl::OkStatus();
}

absl::Status SharedMemoryRegistry::Unregister(std::string_view name) {
  // The mappings are released after the lock: munmap is a system call.
  std::vector<std::shared_ptr<const Mapping>> released;
  {
    absl::MutexLock lock(&mu_);
    if (name.empty()) {
      for (auto& [unused, entry] : regions_) released.push_back(std::move(entry.mapping));
      regions_.clear();
    } else if (auto it = regions_.find(name); it != regions_.end()) {
      released.push_back(std::move(it->second.mapping));
      regions_.erase(it);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<protocol::SharedMemoryRegion>> SharedMemoryRegistry::Status(
    std::string_view name) const {
  std::vector<protocol::SharedMemoryRegion> out;
  absl::MutexLock lock(&mu_);
  if (!name.empty()) {
    auto it = regions_.find(name);
    if (it == regions_.end()) {
      return absl::NotFoundError(StrCat("no shared memory region '", name, "' is registered"));
    }
    out.push_back(it->second.region);
    return out;
  }
  out.reserve(regions_.size());
  for (const auto& [unused, entry] : regions_) out.push_back(entry.region);  // in name order
  return out;
}

absl::StatusOr<protocol::SharedMemoryBytes> SharedMemoryRegistry::Resolve(
    const protocol::SharedMemoryRef& ref, std::string_view where) const {
  std::shared_ptr<const Mapping> mapping;
  {
    absl::MutexLock lock(&mu_);
    auto it = regions_.find(ref.region);
    if (it != regions_.end()) mapping = it->second.mapping;
  }
  if (mapping == nullptr) {
    return absl::InvalidArgumentError(StrCat(where, ": parameter '",
                                             protocol::kSharedMemoryRegionParameter,
                                             "': no region '", ref.region, "' is registered"));
  }
  const uint64_t size = mapping->byte_size();
  if (ref.offset > size || ref.byte_size > size - ref.offset) {
    return absl::InvalidArgumentError(
        StrCat(where, ": parameters '", protocol::kSharedMemoryOffsetParameter, "' ", ref.offset,
               " + '", protocol::kSharedMemoryByteSizeParameter, "' ", ref.byte_size,
               " run past the end of region '", ref.region, "' (", size, " bytes)"));
  }
  std::byte* data = mapping->start() + ref.offset;
  return protocol::SharedMemoryBytes{data, static_cast<size_t>(ref.byte_size),
                                     std::shared_ptr<const void>(std::move(mapping))};
}

int64_t SharedMemoryRegistry::InUse(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(name);
  if (it == regions_.end()) return -1;
  return it->second.mapping.use_count() - 1;
}

protocol::ServerMetadata AdvertisedMetadata(protocol::ServerMetadata metadata,
                                            const SharedMemoryRegistry* registry) {
  if (registry == nullptr) std::erase(metadata.extensions, "system_shared_memory");
  return metadata;
}

absl::Status SharedMemoryDisabled() {
  return absl::UnimplementedError(
      "system shared memory is disabled on this server (started with --shared-memory=none)");
}

}  // namespace brigade::frontend
