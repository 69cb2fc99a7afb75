// Per-RPC cost of the gRPC front end over loopback: one client, one channel, sequential calls
// (concurrency 1), against a real InferenceServer running the builtin identity model. Prints;
// asserts nothing.
//
//   serve_grpc_server_benchmark [calls]      (default 20000 per case)
//
// Cases: ServerLive (gRPC and the service alone), ModelInfer with a 16-element FP32 tensor sent
// raw and typed. Latency is measured at the client; CPU is the whole process (client and server
// share it) per call, from getrusage.

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "frontend/grpc/grpc_server.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "protocol/grpc_service.grpc.pb.h"

namespace {

using brigade::InferenceServer;
using brigade::frontend::GrpcServer;

constexpr char kIdentityConfig[] = R"pb(
  name: "identity"
  backend: "brigade"
  max_batch_size: 0 input
  [ {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ 1, 16 ]
  }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ 1, 16 ]
  }]
  parameters {
    key: "op"
    value { string_value: "identity" }
  }
)pb";

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

void Measure(const char* name, int calls, const std::function<bool()>& call) {
  for (int i = 0; i < calls / 10; ++i) {
    if (!call()) {
      std::printf("%s: call failed during warm-up\n", name);
      return;
    }
  }
  std::vector<double> us;
  us.reserve(static_cast<size_t>(calls));
  const double cpu_start = CpuSeconds();
  const auto wall_start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!call()) {
      std::printf("%s: call %d failed\n", name, i);
      return;
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double cpu_us_per_call = (CpuSeconds() - cpu_start) / calls * 1e6;
  std::sort(us.begin(), us.end());
  auto pct = [&](double p) { return us[static_cast<size_t>(p * (us.size() - 1))]; };
  std::printf(
      "%-24s calls=%d  p50=%.1f us  p90=%.1f us  p99=%.1f us  max=%.1f us  "
      "rate=%.0f/s  process cpu=%.1f us/call\n",
      name, calls, pct(0.50), pct(0.90), pct(0.99), us.back(), calls / wall_s, cpu_us_per_call);
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  char pattern[] = "/tmp/brigade-grpc-bench-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return 1;
  const std::filesystem::path repository = pattern;
  std::filesystem::create_directories(repository / "identity" / "1");
  std::ofstream(repository / "identity" / "config.pbtxt") << kIdentityConfig;

  InferenceServer::Options server_options;
  server_options.model_repository = repository.string();
  auto server = InferenceServer::Create(server_options);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  GrpcServer::Options grpc_options;
  grpc_options.host = "127.0.0.1";
  grpc_options.port = 0;
  auto grpc_server = GrpcServer::Create(server->get(), grpc_options);
  if (!grpc_server.ok()) {
    std::fprintf(stderr, "%s\n", grpc_server.status().ToString().c_str());
    return 1;
  }
  auto channel = grpc::CreateChannel((*grpc_server)->address(), grpc::InsecureChannelCredentials());
  auto stub = inference::GRPCInferenceService::NewStub(channel);

  Measure("ServerLive", calls, [&] {
    grpc::ClientContext context;
    inference::ServerLiveResponse response;
    return stub->ServerLive(&context, {}, &response).ok();
  });

  inference::ModelInferRequest raw;
  raw.set_model_name("identity");
  auto* raw_input = raw.add_inputs();
  raw_input->set_name("INPUT0");
  raw_input->set_datatype("FP32");
  raw_input->add_shape(1);
  raw_input->add_shape(16);
  const std::vector<float> values(16, 0.5f);
  raw.add_raw_input_contents(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  Measure("ModelInfer raw FP32[16]", calls, [&] {
    grpc::ClientContext context;
    inference::ModelInferResponse response;
    return stub->ModelInfer(&context, raw, &response).ok();
  });

  inference::ModelInferRequest typed = raw;
  typed.clear_raw_input_contents();
  for (float v : values) typed.mutable_inputs(0)->mutable_contents()->add_fp32_contents(v);
  Measure("ModelInfer typed FP32[16]", calls, [&] {
    grpc::ClientContext context;
    inference::ModelInferResponse response;
    return stub->ModelInfer(&context, typed, &response).ok();
  });

  (*grpc_server)->Shutdown(absl::Seconds(1));
  grpc_server->reset();
  server->reset();
  std::filesystem::remove_all(repository);
  return 0;
}
