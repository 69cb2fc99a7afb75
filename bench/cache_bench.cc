// Latency of the response cache's own request path, in process (no HTTP/gRPC): what a cached
// request costs between the server handing it to ResponseCache::Serve and its on_complete
// running. Prints percentiles; asserts nothing.
//
//   cache_bench [iterations]          (default 20000; Redis cases use a quarter)
//
// Cases, each for a 3 KiB input (1x1x28x28 FP32, the demo classifier) and a 588 KiB input
// (1x3x224x224 FP32, an image model), answer = 10 FP32:
//   key             KeyBuilder::Build alone (both 128-bit digests over the input)
//   memory hit      Serve answered from the in-process tier (key + lookup + response)
//   redis hit       Serve with tier redis against a local redis-server this bench starts:
//                   key + GET over loopback + decode + the hop back from the Redis I/O thread,
//                   default 2 ms timeout (timeouts would show up as misses, counted)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "cache/cache_manager.h"
#include "cache/redis_test_server.h"

namespace {

using brigade::InferRequest;
using brigade::InferResponse;
using brigade::Tensor;
using brigade::cache::CacheManager;
using brigade::cache::ResponseCache;
using brigade::cache::ResponseCacheOptions;
using brigade::cache::Tier;
using Clock = std::chrono::steady_clock;

std::unique_ptr<InferRequest> MakeRequest(const std::vector<int64_t>& shape, size_t floats) {
  auto request = std::make_unique<InferRequest>();
  request->id = "bench";
  request->model_name = "bench";
  std::vector<float> values(floats);
  for (size_t i = 0; i < floats; ++i) values[i] = static_cast<float>(i % 251) * 0.5f;
  request->inputs.push_back(
      {"x", *Tensor::FromValues<float>(brigade::Shape(shape.begin(), shape.end()), values), {}});
  return request;
}

InferResponse Answer(const InferRequest& request) {
  InferResponse response;
  response.model_name = request.model_name;
  response.model_version = std::to_string(1);  // (= "1" trips GCC 12 -Wrestrict)
  response.id = request.id;
  std::vector<float> probs(10, 0.1f);
  response.outputs.push_back({"probs", *Tensor::FromValues<float>({1, 10}, probs), {}});
  return response;
}

struct Summary {
  std::vector<double> us;
  int misses = 0;
};

void Print(const char* name, const char* input, Summary summary) {
  std::vector<double>& us = summary.us;
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    return us[std::min(us.size() - 1, static_cast<size_t>(q * us.size()))];
  };
  double sum = 0;
  for (double v : us) sum += v;
  std::printf("%-12s %-9s n=%-6zu p50=%8.2f  p90=%8.2f  p99=%8.2f  mean=%8.2f us  misses=%d\n",
              name, input, us.size(), at(0.5), at(0.9), at(0.99), sum / us.size(), summary.misses);
}

// Serves one request and waits for its answer; returns microseconds and whether it was a hit.
std::pair<double, bool> ServeOnce(ResponseCache& cache, std::unique_ptr<InferRequest> request,
                                  const std::shared_ptr<brigade::telemetry::ModelStats>& stats) {
  absl::Notification done;
  bool hit = false;
  request->on_complete = [&](absl::StatusOr<InferResponse> result) {
    hit = result.ok() && result->parameters.GetBool("cache_hit") == true;
    done.Notify();
  };
  const auto start = Clock::now();
  cache.Serve(std::move(request), 1, "", stats,
              [&cache](std::unique_ptr<InferRequest> r, ResponseCache::PendingStore pending) {
                InferResponse response = Answer(*r);
                const absl::StatusOr<InferResponse> outcome = response;
                r->Complete(std::move(response));
                cache.Finish(pending, outcome, {});
              });
  done.WaitForNotification();
  return {std::chrono::duration<double, std::micro>(Clock::now() - start).count(), hit};
}

void RunCases(const char* input, const std::vector<int64_t>& shape, size_t floats, int iterations,
              CacheManager& manager) {
  auto stats = std::make_shared<brigade::telemetry::ModelStats>("bench", "1", 0);
  std::unique_ptr<InferRequest> probe = MakeRequest(shape, floats);

  {
    brigade::cache::KeyBuilder builder({});
    Summary summary;
    for (int i = 0; i < iterations; ++i) {
      const auto start = Clock::now();
      brigade::cache::CacheKey key = builder.Build(*probe, 1, "");
      summary.us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (key.id.low == 0 && key.id.high == 0) ++summary.misses;  // keeps the call alive
    }
    Print("key", input, std::move(summary));
  }

  for (Tier tier : {Tier::kMemory, Tier::kRedis}) {
    if (tier == Tier::kRedis && !manager.has_redis()) continue;
    ResponseCacheOptions options;
    options.tier = tier;
    options.ttl_ms = 600'000;
    std::shared_ptr<ResponseCache> cache = *manager.CreateCache("bench", options);
    ServeOnce(*cache, MakeRequest(shape, floats), stats);  // miss: runs and stores
    if (tier == Tier::kRedis) {
      // The store reaches Redis after the answer; let it land before measuring hits.
      for (int i = 0; i < 1000 && !ServeOnce(*cache, MakeRequest(shape, floats), stats).second;
           ++i) {
      }
    }
    const int n = tier == Tier::kRedis ? iterations / 4 : iterations;
    Summary summary;
    for (int i = 0; i < n; ++i) {
      auto [us, hit] = ServeOnce(*cache, MakeRequest(shape, floats), stats);
      // Request construction (input copy) is outside the measured span: MakeRequest runs
      // before ServeOnce starts its clock.
      summary.us.push_back(us);
      if (!hit) ++summary.misses;
    }
    Print(tier == Tier::kMemory ? "memory hit" : "redis hit", input, std::move(summary));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(100, std::atoi(argv[1])) : 20000;
  absl::StatusOr<std::unique_ptr<brigade::cache::RedisTestServer>> redis =
      brigade::cache::RedisTestServer::Start();
  CacheManager::Options options;
  if (redis.ok()) {
    options.redis_host = "127.0.0.1";
    options.redis_port = (*redis)->port();
  } else {
    std::printf("no redis-server (%s): Redis cases skipped\n",
                std::string(redis.status().message()).c_str());
  }
  std::unique_ptr<CacheManager> manager = *CacheManager::Create(options);
  if (!manager->WaitRedisReady(absl::Seconds(5))) std::printf("redis not ready\n");
  RunCases("3KiB", {1, 1, 28, 28}, size_t{28} * 28, iterations, *manager);
  RunCases("588KiB", {1, 3, 224, 224}, size_t{3} * 224 * 224, iterations / 10, *manager);
  return 0;
}
