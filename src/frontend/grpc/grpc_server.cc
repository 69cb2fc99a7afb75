#include "frontend/grpc/grpc_server.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "grpc/grpc.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace brigade::frontend {
namespace {

constexpr char kServiceName[] = "inference.GRPCInferenceService";
constexpr int kMaxInferThreads = 256;
// ModelInfer calls each completion queue keeps requested from gRPC, so arrivals rarely wait for
// a poller to ask for the next one.
constexpr int kCallsPerQueue = 16;

absl::Status Validate(const GrpcServer::Options& options) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(StrCat("grpc port ", options.port, " is out of range"));
  }
  for (int64_t bytes : {options.max_receive_message_bytes, options.max_send_message_bytes}) {
    if (bytes <= 0 || bytes > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(
          StrCat("grpc message size limit ", bytes, " must be in [1, 2^31-1] bytes"));
    }
  }
  if (options.max_concurrent_streams < 1) {
    return absl::InvalidArgumentError(
        StrCat("grpc max_concurrent_streams ", options.max_concurrent_streams, " must be >= 1"));
  }
  if (options.max_metadata_bytes < 1024) {
    return absl::InvalidArgumentError(
        StrCat("grpc max_metadata_bytes ", options.max_metadata_bytes, " must be >= 1024"));
  }
  if (options.infer_threads < 1 || options.infer_threads > kMaxInferThreads) {
    return absl::InvalidArgumentError(StrCat("grpc infer_threads ", options.infer_threads,
                                             " must be in [1, ", kMaxInferThreads, "]"));
  }
  if (options.health_poll < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("grpc health_poll must not be negative");
  }
  if (options.cache_admin.max_wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("grpc cache_admin.max_wait must not be negative");
  }
  return absl::OkStatus();
}

// "host:port", bracketing IPv6 literals.
std::string JoinHostPort(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return ipv6 ? StrCat("[", host, "]:", port) : StrCat(host, ":", port);
}

int ToInt(int64_t value) {
  return static_cast<int>(std::clamp<int64_t>(value, 0, std::numeric_limits<int>::max()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(InferenceServer* server,
                                                               Options options) {
  if (server == nullptr) return absl::InvalidArgumentError("GrpcServer needs an InferenceServer");
  if (absl::Status status = Validate(options); !status.ok()) return status;
  std::unique_ptr<GrpcServer> out(new GrpcServer(server, std::move(options)));
  const Options& o = out->options_;

  // Process-wide switch read by every ServerBuilder; adds grpc.health.v1.Health.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  const std::string requested = JoinHostPort(o.host, o.port);
  builder.AddListeningPort(
      requested, o.credentials != nullptr ? o.credentials : grpc::InsecureServerCredentials(),
      &out->port_);
  builder.RegisterService(out->service_.get());
  builder.RegisterService(out->cache_admin_.get());
  builder.SetMaxReceiveMessageSize(ToInt(o.max_receive_message_bytes));
  builder.SetMaxSendMessageSize(ToInt(o.max_send_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, o.max_concurrent_streams);
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, o.max_metadata_bytes);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                             ToInt(absl::ToInt64Milliseconds(o.keepalive_time)));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             ToInt(absl::ToInt64Milliseconds(o.keepalive_timeout)));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS,
                             o.keepalive_permit_without_calls ? 1 : 0);
  std::vector<std::unique_ptr<grpc::ServerCompletionQueue>> queues;
  switch (o.service.infer_api) {
    case GrpcInferApi::kCallback:
      break;
    case GrpcInferApi::kCompletionQueue:
      for (int i = 0; i < o.infer_threads; ++i) queues.push_back(builder.AddCompletionQueue());
      break;
    case GrpcInferApi::kSync: {
      // `infer_threads` threads poll and run handlers. The pool is not capped: gRPC's synchronous
      // server answers RESOURCE_EXHAUSTED, not waits, when a call finds every thread of a capped
      // pool busy, so a cap would refuse calls that the other APIs queue; each call in flight past
      // the pollers gets a thread.
      builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
      builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS,
                                  o.infer_threads);
      builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                                  o.infer_threads);
      break;
    }
  }
  out->grpc_server_ = builder.BuildAndStart();
  if (out->grpc_server_ == nullptr || out->port_ == 0) {
    if (out->grpc_server_ != nullptr) out->grpc_server_->Shutdown();
    out->grpc_server_.reset();
    for (std::unique_ptr<grpc::ServerCompletionQueue>& queue : queues) {  // after the server
      queue->Shutdown();
      void* tag = nullptr;
      bool ok = false;
      while (queue->Next(&tag, &ok)) {
      }
    }
    return absl::UnavailableError(StrCat("cannot listen for gRPC on ", requested));
  }
  if (!queues.empty()) {
    out->pollers_ =
        AsyncInferPollers::Start(out->service_.get(), std::move(queues), kCallsPerQueue);
  }
  out->address_ = JoinHostPort(o.host, out->port_);
  out->RefreshHealth();
  if (o.health_poll > absl::ZeroDuration()) {
    GrpcServer* self = out.get();
    out->health_thread_ = std::thread([self] { self->PollHealth(); });
  }
  return out;
}

GrpcServer::GrpcServer(InferenceServer* server, Options options)
    : server_(server),
      options_(std::move(options)),
      service_(std::make_unique<GrpcInferenceService>(server, options_.service)),
      cache_admin_(std::make_unique<GrpcCacheAdminService>(server, options_.cache_admin)) {}

GrpcServer::~GrpcServer() {
  if (grpc_server_ != nullptr) Shutdown(absl::ZeroDuration());
}

void GrpcServer::RefreshHealth() {
  const int serving = server_->IsReady() ? 1 : 0;
  // Serializes updates, so the health service never goes back to a reading older than the one
  // it has, and never comes back to life after Shutdown() marked it NOT_SERVING.
  absl::MutexLock lock(&mu_);
  if (stopping_ || serving == health_serving_) return;
  health_serving_ = serving;
  // The health service only records the status and wakes its own watchers; it never calls back.
  grpc::HealthCheckServiceInterface* health = grpc_server_->GetHealthCheckService();
  health->SetServingStatus(kServiceName, serving == 1);
  health->SetServingStatus(serving == 1);
}

void GrpcServer::PollHealth() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(this, &GrpcServer::StopRequested), options_.health_poll);
      if (stopping_) return;
    }
    RefreshHealth();
  }
}

void GrpcServer::Shutdown(absl::Duration timeout) {
  absl::MutexLock serialize(&shutdown_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    stopping_ = true;
  }
  if (health_thread_.joinable()) health_thread_.join();
  // Probes see NOT_SERVING from here on (gRPC's own shutdown would do the same, but later).
  grpc_server_->GetHealthCheckService()->SetServingStatus(false);
  const auto deadline =
      timeout == absl::InfiniteDuration()
          ? std::chrono::system_clock::time_point::max()
          : std::chrono::system_clock::now() +
                absl::ToChronoNanoseconds(std::max(timeout, absl::ZeroDuration()));
  grpc_server_->Shutdown(deadline);
  if (pollers_ != nullptr) pollers_->Shutdown();  // gRPC wants its queues closed after Shutdown
  grpc_server_->Wait();
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
}

}  // namespace brigade::frontend
