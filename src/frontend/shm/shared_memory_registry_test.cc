#include "frontend/shm/shared_memory_registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend {
namespace {

using ::testing::HasSubstr;

// A POSIX shm object of `bytes` bytes under a key unique to this process, removed at the end.
class ShmObject {
 public:
  ShmObject(std::string_view tag, size_t bytes)
      : key_(StrCat("/brigade_test_", getpid(), "_", tag)) {
    const int fd = shm_open(key_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    data_ =
        static_cast<std::byte*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    size_ = bytes;
    close(fd);
  }
  ~ShmObject() {
    munmap(data_, size_);
    shm_unlink(key_.c_str());
  }
  const std::string& key() const { return key_; }
  std::byte* data() const { return data_; }

 private:
  std::string key_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

void ExpectError(const absl::Status& status, absl::StatusCode code, std::string_view fragment) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
}

TEST(SharedMemoryRegistryTest, ResolvedBytesAreTheClientsMemory) {
  ShmObject object("resolve", 8192);
  SharedMemoryRegistry registry({});
  ASSERT_TRUE(registry.Register({"in", object.key(), 4100, 64}).ok());
  std::memcpy(object.data() + 4100 + 8, "hello", 5);
  auto bytes = registry.Resolve({"in", 8, 5}, "input 'x'");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(std::memcmp(bytes->data, "hello", 5), 0);
  std::memcpy(bytes->data, "HE", 2);  // writes reach the client
  EXPECT_EQ(std::memcmp(object.data() + 4108, "HE", 2), 0);

  auto status = registry.Status("");
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->size(), 1u);
  EXPECT_EQ((*status)[0], (protocol::SharedMemoryRegion{"in", object.key(), 4100, 64}));
}

TEST(SharedMemoryRegistryTest, RangesAreCheckedOnEveryResolveWithoutOverflow) {
  ShmObject object("ranges", 4096);
  SharedMemoryRegistry registry({});
  ASSERT_TRUE(registry.Register({"r", object.key(), 0, 100}).ok());
  EXPECT_TRUE(registry.Resolve({"r", 0, 100}, "input 'x'").ok());
  EXPECT_TRUE(registry.Resolve({"r", 100, 0}, "input 'x'").ok());
  ExpectError(registry.Resolve({"r", 1, 100}, "input 'x'").status(),
              absl::StatusCode::kInvalidArgument,
              "input 'x': parameters 'shared_memory_offset' 1 + 'shared_memory_byte_size' 100 "
              "run past the end of region 'r' (100 bytes)");
  ExpectError(registry.Resolve({"r", 101, 0}, "input 'x'").status(),
              absl::StatusCode::kInvalidArgument, "past the end");
  ExpectError(registry.Resolve({"r", 8, UINT64_MAX - 4}, "output 'y'").status(),
              absl::StatusCode::kInvalidArgument, "output 'y'");
  ExpectError(registry.Resolve({"nope", 0, 1}, "input 'x'").status(),
              absl::StatusCode::kInvalidArgument, "no region 'nope' is registered");
}

TEST(SharedMemoryRegistryTest, RegistrationsAreValidated) {
  ShmObject object("validate", 4096);
  SharedMemoryRegistry registry({.max_regions = 2});
  ExpectError(registry.Register({"r", "/../etc/passwd", 0, 8}), absl::StatusCode::kInvalidArgument,
              "never a path");
  ExpectError(registry.Register({"r", "/brigade_no_such_key", 0, 8}),
              absl::StatusCode::kInvalidArgument, "cannot open key '/brigade_no_such_key'");
  ExpectError(registry.Register({"r", object.key(), 4000, 100}), absl::StatusCode::kInvalidArgument,
              "runs past the end of key");
  ExpectError(registry.Register({"r", object.key(), UINT64_MAX, 2}),
              absl::StatusCode::kInvalidArgument, "past any file's end");
  ExpectError(registry.Register({"r", object.key(), 0, 0}), absl::StatusCode::kInvalidArgument,
              "byte_size must be > 0");
  ASSERT_TRUE(registry.Register({"r", object.key(), 0, 8}).ok());
  ExpectError(registry.Register({"r", object.key(), 0, 8}), absl::StatusCode::kAlreadyExists,
              "'r' is already registered");
  ASSERT_TRUE(registry.Register({"s", object.key(), 8, 8}).ok());
  ExpectError(registry.Register({"t", object.key(), 0, 8}), absl::StatusCode::kResourceExhausted,
              "2 regions");
  ExpectError(registry.Status("t").status(), absl::StatusCode::kNotFound, "'t'");
}

TEST(SharedMemoryRegistryTest, AnUnregisteredRegionStaysMappedWhileARequestHoldsIt) {
  auto object = std::make_unique<ShmObject>("held", 4096);
  SharedMemoryRegistry registry({});
  ASSERT_TRUE(registry.Register({"r", object->key(), 0, 16}).ok());
  auto held = registry.Resolve({"r", 0, 16}, "input 'x'");
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(registry.InUse("r"), 1);
  ASSERT_TRUE(registry.Unregister("r").ok());
  EXPECT_EQ(registry.InUse("r"), -1);
  object.reset();  // the client unmaps and unlinks; the server's mapping stays valid
  std::memset(held->data, 0x5a, 16);
  EXPECT_EQ(held->data[15], std::byte{0x5a});
  ExpectError(registry.Resolve({"r", 0, 16}, "input 'x'").status(),
              absl::StatusCode::kInvalidArgument, "no region 'r'");
  EXPECT_TRUE(registry.Unregister("r").ok());  // unknown: OK, as in Triton
}

TEST(SharedMemoryRegistryTest, UnregisterAllAndConcurrentUse) {
  ShmObject object("concurrent", 4096);
  SharedMemoryRegistry registry({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::string name = StrCat("r", t);
      for (int i = 0; i < 200; ++i) {
        EXPECT_TRUE(registry.Register({name, object.key(), 0, 64}).ok());
        EXPECT_TRUE(registry.Resolve({name, 0, 64}, "input 'x'").ok());
        EXPECT_TRUE(registry.Unregister(name).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_TRUE(registry.Register({"a", object.key(), 0, 8}).ok());
  ASSERT_TRUE(registry.Register({"b", object.key(), 0, 8}).ok());
  ASSERT_TRUE(registry.Unregister("").ok());
  EXPECT_TRUE(registry.Status("")->empty());
}

}  // namespace
}  // namespace brigade::frontend
