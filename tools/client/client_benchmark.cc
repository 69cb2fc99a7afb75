// The client's own cost per request, which bounds how much load one core of `brigade bench` can
// generate. Prints; asserts nothing (not a test).
//
//   client_benchmark [requests_per_thread=100000] [threads=1]
//
// Against an in-process scripted HTTP server answering a canned identity response (16 FP32 in,
// 16 out, the trivial model's shape), for HTTP JSON and HTTP binary:
//   * codec only: encode the request + decode the response, no socket (user-space cost);
//   * over loopback: `threads` client threads, each with its own connection, in a closed loop;
//     reports their CPU time (user + system, from RUSAGE_THREAD) per request, and the requests
//     per second one core of client could issue at that cost. When the machine has two or more
//     CPUs, the client threads are pinned to the last CPU and the server to the others, so the
//     client's CPU time is what one core spends.

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/strings.h"
#include "net/receive_buffer.h"
#include "net/test_http_server.h"
#include "protocol/http/infer_request_json.h"
#include "protocol/http/infer_response_json.h"
#include "simdjson.h"
#include "tools/client/client.h"

namespace brigade::client {
namespace {

constexpr int kElements = 16;

std::string JsonResponse() {
  std::string data;
  for (int i = 0; i < kElements; ++i) data += StrCat(i == 0 ? "" : ",", 0.25 * i);
  return StrCat(R"({"model_name":"identity","model_version":"1","outputs":[{"name":"OUTPUT0",)",
                R"("datatype":"FP32","shape":[1,16],"data":[)", data, "]}]}");
}

std::string BinaryBody(size_t* json_bytes) {
  const std::string json =
      R"({"model_name":"identity","model_version":"1","outputs":[{"name":"OUTPUT0",)"
      R"("datatype":"FP32","shape":[1,16],"parameters":{"binary_data_size":64}}]})";
  *json_bytes = json.size();
  std::string body = json;
  for (int i = 0; i < kElements; ++i) {
    const float value = 0.25f * i;
    body.append(reinterpret_cast<const char*>(&value), 4);
  }
  return body;
}

InferSpec Request(bool binary) {
  std::vector<float> values(kElements);
  for (int i = 0; i < kElements; ++i) values[i] = 0.5f * i;
  InferSpec spec;
  spec.model_name = "identity";
  spec.inputs.push_back({.name = "INPUT0",
                         .tensor = *Tensor::FromValues<float>({1, kElements}, values),
                         .parameters = {}});
  spec.binary_inputs = binary;
  spec.binary_outputs = binary;
  return spec;
}

double ThreadCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec * 1e-6;
}

void PinTo(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

void CodecOnly(bool binary, int iterations) {
  const InferSpec spec = Request(binary);
  std::string json;
  std::vector<std::span<const std::byte>> parts;
  size_t json_bytes = 0;
  const std::string canned = binary ? BinaryBody(&json_bytes) : JsonResponse();
  if (!binary) json_bytes = canned.size();
  auto body = std::make_shared<net::ReceiveBuffer>();
  body->Reserve(canned.size());
  std::memcpy(body->write_ptr(), canned.data(), canned.size());
  body->Commit(canned.size());
  simdjson::dom::parser parser;
  InferResponse response;
  const std::span<std::byte> tail(reinterpret_cast<std::byte*>(body->data() + json_bytes),
                                  canned.size() - json_bytes);
  const int64_t start = Clock::Real()->NowNs();
  for (int i = 0; i < iterations; ++i) {
    (void)protocol::http::EncodeInferRequest(spec, &json, &parts);
    response.outputs.clear();
    (void)protocol::http::DecodeInferResponse(parser, std::string_view(body->data(), json_bytes),
                                              tail, body, &response);
  }
  const double ns = double(Clock::Real()->NowNs() - start) / iterations;
  fmt::print("  codec only (encode request + decode response, no socket): {:.2f} µs\n", ns / 1000);
}

void OverLoopback(bool binary, int requests, int threads, const std::vector<int>& client_cpus,
                  const std::vector<int>& server_cpus) {
  size_t json_bytes = 0;
  // The body first: it sets json_bytes, which the header needs.
  const std::string binary_body = BinaryBody(&json_bytes);
  const std::string canned =
      binary
          ? net::TestHttpServer::Response(
                200, binary_body, StrCat("Inference-Header-Content-Length: ", json_bytes, "\r\n"))
          : net::TestHttpServer::Response(200, JsonResponse());
  auto server = net::TestHttpServer::Start([&](const net::TestHttpServer::Request&) {
    // Each connection thread moves itself to the server CPUs on its first request.
    thread_local bool pinned = false;
    if (!pinned) {
      PinTo(server_cpus);
      pinned = true;
    }
    return net::TestHttpServer::Reply{canned};
  });
  if (!server.ok()) {
    fmt::print("cannot start the fake server: {}\n", server.status().message());
    return;
  }
  const InferSpec spec = Request(binary);
  std::vector<double> cpu_seconds(threads, 0);
  std::vector<int64_t> failures(threads, 0);
  std::atomic<int64_t> start_ns{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      PinTo(client_cpus);
      auto client = Client::Create({.address = StrCat("127.0.0.1:", (*server)->port())});
      InferResponse response;
      for (int i = 0; i < 1000; ++i) (void)(*client)->Infer(spec, &response);  // warm-up
      int64_t expected = 0;
      start_ns.compare_exchange_strong(expected, Clock::Real()->NowNs());
      const double cpu_before = ThreadCpuSeconds();
      for (int i = 0; i < requests; ++i) {
        const absl::Status status = (*client)->Infer(spec, &response);
        if (!status.ok() && failures[t]++ == 0) {
          fmt::print(stderr, "first failure: {}\n", status.ToString());
        }
      }
      cpu_seconds[t] = ThreadCpuSeconds() - cpu_before;
    });
  }
  for (std::thread& thread : pool) thread.join();
  const double wall_s = (Clock::Real()->NowNs() - start_ns.load()) * 1e-9;
  double cpu = 0;
  int64_t failed = 0;
  for (int t = 0; t < threads; ++t) {
    cpu += cpu_seconds[t];
    failed += failures[t];
  }
  const double total = double(requests) * threads;
  const double cpu_us = cpu * 1e6 / total;
  fmt::print(
      "  loopback, {} connection(s): client CPU {:.2f} µs/request → {:.0f} requests/s per client "
      "core; achieved {:.0f} requests/s ({:.1f} µs wall/request/connection){}\n",
      threads, cpu_us, 1e6 / cpu_us, total / wall_s, wall_s * 1e6 / requests,
      failed > 0 ? StrCat(", ", failed, " failed") : "");
}

}  // namespace
}  // namespace brigade::client

int main(int argc, char** argv) {
  const int requests = argc > 1 ? std::atoi(argv[1]) : 100'000;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  std::vector<int> cpus = brigade::client::AllowedCpus();
  std::vector<int> client_cpus;
  std::vector<int> server_cpus;
  if (cpus.size() >= 2) {
    client_cpus = {cpus.back()};
    server_cpus.assign(cpus.begin(), cpus.end() - 1);
    fmt::print("client threads on CPU {}, fake server on CPU(s) {}\n", client_cpus[0],
               fmt::join(server_cpus, ","));
  }
  for (bool binary : {false, true}) {
    fmt::print("{}:\n", binary ? "HTTP binary" : "HTTP JSON");
    brigade::client::CodecOnly(binary, 200'000);
    brigade::client::OverLoopback(binary, requests, threads, client_cpus, server_cpus);
  }
  return 0;
}
