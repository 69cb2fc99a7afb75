// RunBench end to end against a scripted KServe server: levels, warm-up excluded from the
// window, errors by kind, and the server breakdown from statistics deltas.

#include "tools/loadgen/bench_runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "absl/synchronization/mutex.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/test_http_server.h"

namespace brigade::loadgen {
namespace {

using net::TestHttpServer;

// A model "m" with one FP32 [-1, 16] input; every 10th inference is refused with 503; the
// statistics count successful inferences, each charged 7 µs of compute_infer and 1 µs of queue.
class ScriptedServer {
 public:
  ScriptedServer() {
    server_ = *TestHttpServer::Start(
        [this](const TestHttpServer::Request& request) { return Handle(request); });
  }
  int port() const { return server_->port(); }
  int64_t infers() const { return infers_.load(); }
  bool saw_binary() const { return saw_binary_.load(); }
  // How often each distinct infer body arrived, most frequent first.
  std::vector<int> BodyCounts() const {
    absl::MutexLock lock(&mu_);
    std::vector<int> counts;
    for (const auto& [body, count] : bodies_) counts.push_back(count);
    std::sort(counts.rbegin(), counts.rend());
    return counts;
  }
  // Shared memory: whether the next registration is refused (as by a server without the
  // extension), and what registrations and unregistrations arrived.
  void RefuseRegistration() { refuse_registration_ = true; }
  struct Registered {
    std::string name;
    std::string key;
    // The object's bytes when the registration arrived (the server's view of the inputs).
    std::string contents;
  };
  std::vector<Registered> registered() const {
    absl::MutexLock lock(&mu_);
    return registered_;
  }
  std::vector<std::string> unregistered() const {
    absl::MutexLock lock(&mu_);
    return unregistered_;
  }
  int BodiesContaining(std::string_view text) const {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (const auto& [body, count] : bodies_) n += body.find(text) != std::string::npos ? count : 0;
    return n;
  }

 private:
  TestHttpServer::Reply Handle(const TestHttpServer::Request& request) {
    const std::string_view head = request.head;
    if (head.starts_with("GET /v2/models/m/stats ")) {
      const int64_t ok = ok_.load();
      return {TestHttpServer::Response(
          200,
          StrCat(R"({"model_stats":[{"name":"m","version":"1","inference_count":)", ok,
                 R"(,"execution_count":)", ok, R"(,"inference_stats":{"success":{"count":)", ok,
                 R"(,"ns":)", ok * 20000, R"(},"queue":{"count":)", ok, R"(,"ns":)", ok * 1000,
                 R"(},"compute_infer":{"count":)", ok, R"(,"ns":)", ok * 7000, R"(}}}]})"))};
    }
    if (head.starts_with("GET /v2/models/m ")) {
      return {TestHttpServer::Response(
          200, R"({"name":"m","platform":"fake","inputs":[{"name":"INPUT0","datatype":"FP32",)"
               R"("shape":[-1,16]}],"outputs":[{"name":"OUTPUT0","datatype":"FP32",)"
               R"("shape":[-1,16]}]})")};
    }
    constexpr std::string_view kRegion = "POST /v2/systemsharedmemory/region/";
    if (head.starts_with(kRegion)) {
      const std::string_view rest =
          head.substr(kRegion.size(), head.find(' ', kRegion.size()) - kRegion.size());
      const std::string name(rest.substr(0, rest.find('/')));
      absl::MutexLock lock(&mu_);
      if (rest.ends_with("/unregister")) {
        unregistered_.push_back(name);
        return {TestHttpServer::Response(200, "")};
      }
      if (refuse_registration_) {
        return {TestHttpServer::Response(
            501, R"({"error":"system shared memory is not served by this server"})")};
      }
      // {"key":"/...","offset":0,"byte_size":N}: the key is the first string value.
      const size_t start = request.body.find("\"/") + 1;
      const std::string key = request.body.substr(start, request.body.find('"', start) - start);
      std::ifstream object(StrCat("/dev/shm", key), std::ios::binary);
      registered_.push_back({.name = name,
                             .key = key,
                             .contents = std::string(std::istreambuf_iterator<char>(object), {})});
      return {TestHttpServer::Response(200, "")};
    }
    if (head.starts_with("POST /v2/models/m/infer ")) {
      if (head.find("Inference-Header-Content-Length") != std::string_view::npos) {
        saw_binary_ = true;
      }
      {
        absl::MutexLock lock(&mu_);
        ++bodies_[request.body];
      }
      if (++infers_ % 10 == 0) {
        return {TestHttpServer::Response(503, R"({"error":"queue full"})")};
      }
      ++ok_;
      return {TestHttpServer::Response(
          200, R"({"model_name":"m","outputs":[{"name":"OUTPUT0","datatype":"FP32",)"
               R"("shape":[1,1],"data":[0.5]}]})")};
    }
    return {TestHttpServer::Response(404, R"({"error":"no route"})")};
  }

  std::unique_ptr<TestHttpServer> server_;
  std::atomic<int64_t> infers_{0};
  std::atomic<int64_t> ok_{0};
  std::atomic<bool> saw_binary_{false};
  std::atomic<bool> refuse_registration_{false};
  mutable absl::Mutex mu_;
  std::map<std::string, int> bodies_ ABSL_GUARDED_BY(mu_);
  std::vector<Registered> registered_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> unregistered_ ABSL_GUARDED_BY(mu_);
};

BenchOptions Options(const ScriptedServer& server) {
  BenchOptions options;
  options.client.address = StrCat("127.0.0.1:", server.port());
  options.model_name = "m";
  options.warmup_requests = 5;
  options.requests = 50;
  return options;
}

TEST(BenchRunnerTest, ClosedLoopLevelsCountRequestsErrorsAndTheServerWindow) {
  ScriptedServer server;
  BenchOptions options = Options(server);
  options.concurrency = {1, 3};
  absl::StatusOr<BenchReport> report = RunBench(options, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->model.platform, "fake");
  ASSERT_EQ(report->levels.size(), 2u);
  EXPECT_EQ(server.infers(), 2 * (5 + 50));
  for (const LevelResult& level : report->levels) {
    EXPECT_EQ(level.ok + level.failed, 50);
    EXPECT_EQ(level.latency.count(), level.ok);
    EXPECT_GT(level.throughput_per_s, 0);
    EXPECT_GT(level.client_cpu_us_per_request, 0);
    ASSERT_EQ(level.errors.count("UNAVAILABLE (HTTP 503)"), 1u);
    EXPECT_EQ(level.errors.at("UNAVAILABLE (HTTP 503)").example, "queue full");
    ASSERT_TRUE(level.server.has_value()) << level.server_note;
    // Exactly the measured successes fall in the window: warm-up is excluded.
    EXPECT_EQ(level.server->requests, static_cast<uint64_t>(level.ok));
    EXPECT_DOUBLE_EQ(level.server->compute_infer_ns, 7000.0);
    EXPECT_DOUBLE_EQ(level.server->queue_ns, 1000.0);
  }
  EXPECT_EQ(report->levels[1].workers, 3);
}

TEST(BenchRunnerTest, OpenLoopSendsTheRequestedCountAtTheRate) {
  ScriptedServer server;
  BenchOptions options = Options(server);
  options.mode = LoadMode::kConstantRate;
  options.rates = {2000};
  options.open_loop_workers = 2;
  options.http_binary = true;
  absl::StatusOr<BenchReport> report = RunBench(options, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  const LevelResult& level = report->levels[0];
  EXPECT_EQ(level.ok + level.failed, 50);
  EXPECT_EQ(level.unsent, 0);
  EXPECT_EQ(level.send_lag.count(), level.ok);
  EXPECT_TRUE(server.saw_binary());
  // 50 requests due over 24.5 ms cannot finish much sooner.
  EXPECT_GE(level.elapsed_s, 0.0245);
}

TEST(BenchRunnerTest, CycleOrderSendsEverySampleEquallyOften) {
  ScriptedServer server;
  BenchOptions options = Options(server);
  options.inputs.random_samples = 5;
  options.warmup_requests = 0;
  options.warmup_ms = 0;
  options.requests = 100;
  ASSERT_TRUE(RunBench(options, nullptr).ok());
  EXPECT_EQ(server.BodyCounts(), std::vector<int>(5, 20));
}

TEST(BenchRunnerTest, ZipfOrderSkewsSamplesAndRequestParametersAreSent) {
  ScriptedServer server;
  BenchOptions options = Options(server);
  options.inputs.random_samples = 50;
  options.sample_order = SampleOrder::kZipf;
  options.zipf_exponent = 1.0;
  options.concurrency = {2};
  options.warmup_requests = 0;
  options.warmup_ms = 0;
  options.requests = 2000;
  options.request_parameters.Set("cache_control", std::string("bypass"));
  absl::StatusOr<BenchReport> report = RunBench(options, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->sample_order, SampleOrder::kZipf);
  const std::vector<int> counts = server.BodyCounts();
  ASSERT_FALSE(counts.empty());
  // P(top sample) = 1 / H(50) ≈ 22%, against 2% for a uniform choice; the top five ≈ 51%.
  EXPECT_GT(counts[0], 2000 * 0.17);
  EXPECT_LT(counts[0], 2000 * 0.27);
  EXPECT_LT(counts.size(), 51u);
  EXPECT_EQ(server.BodiesContaining(R"("cache_control":"bypass")"), 2000);
}

TEST(BenchRunnerTest, SharedMemoryInputsAreWrittenOnceRegisteredAndReferencedPerWorker) {
  ScriptedServer server;
  BenchOptions options = Options(server);
  options.shared_memory = SharedMemory::kSystem;
  options.concurrency = {2, 1};
  options.inputs.random_samples = 3;
  absl::StatusOr<BenchReport> report = RunBench(options, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->shared_memory, SharedMemory::kSystem);
  // One region per worker of each level, each unregistered when its level ended.
  const std::vector<ScriptedServer::Registered> registered = server.registered();
  ASSERT_EQ(registered.size(), 3u);
  std::vector<std::string> names;
  for (const ScriptedServer::Registered& region : registered) {
    names.push_back(region.name);
    EXPECT_EQ(region.key, StrCat("/", region.name));
    EXPECT_TRUE(region.name.starts_with(StrCat("brigade-bench-", getpid(), "-")));
    // Three FP32 [1, 16] samples at 64-byte boundaries, uniform in [0, 1): never all zero.
    ASSERT_EQ(region.contents.size(), 3u * 64);
    EXPECT_NE(region.contents, std::string(3 * 64, '\0'));
    // The name is gone from /dev/shm once the server has the region mapped.
    EXPECT_NE(access(StrCat("/dev/shm", region.key).c_str(), F_OK), 0);
  }
  EXPECT_EQ(server.unregistered(), names);
  // Every infer names a region and carries no tensor data.
  EXPECT_EQ(server.BodiesContaining(R"("shared_memory_region":"brigade-bench-)"), 2 * (5 + 50));
  EXPECT_EQ(server.BodiesContaining(R"("data")"), 0);
  EXPECT_EQ(server.BodiesContaining(R"("shared_memory_byte_size":64})"), 2 * (5 + 50));
}

TEST(BenchRunnerTest, ARefusedRegistrationFailsTheRunAndLeavesNothingBehind) {
  ScriptedServer server;
  server.RefuseRegistration();
  BenchOptions options = Options(server);
  options.shared_memory = SharedMemory::kSystem;
  absl::Status status = RunBench(options, nullptr).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_THAT(std::string(status.message()),
              ::testing::AllOf(::testing::HasSubstr("registering shared memory region"),
                               ::testing::HasSubstr("not served")));
  EXPECT_EQ(server.infers(), 0);
  EXPECT_TRUE(server.registered().empty());
  const std::string mine = StrCat("brigade-bench-", getpid(), "-");
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(mine)) << entry.path();
  }
}

TEST(BenchRunnerTest, UnknownModelFailsBeforeAnyLoad) {
  ScriptedServer server;
  BenchOptions options = Options(server);
  options.model_name = "absent";
  absl::Status status = RunBench(options, nullptr).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(server.infers(), 0);
}

TEST(BenchRunnerTest, BadOptionsAreRefused) {
  BenchOptions options;
  options.model_name = "m";
  options.concurrency = {0};
  EXPECT_EQ(RunBench(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  options.concurrency = {1};
  options.mode = LoadMode::kPoisson;
  EXPECT_EQ(RunBench(options, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::loadgen
