// GrpcServer end to end inside one process: a real InferenceServer with the builtin backend
// (identity, add_sub and a slow identity declared in a temporary repository) behind a real gRPC
// server on a loopback port, called through the generated C++ stub.

#include "frontend/grpc/grpc_server.h"

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/memory_budget.h"
#include "frontend/grpc/grpc_stream_reactor.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "protocol/grpc_service.grpc.pb.h"
#include "spdlog/spdlog.h"
#include "telemetry/counter.h"
#include "testing/temp_repository.h"
#ifdef BRIGADE_HAVE_ONNX
#include "engine/onnx/test_util/onnx_builder.h"
#endif

namespace brigade::frontend {
namespace {

using inference::GRPCInferenceService;
using inference::ModelInferRequest;
using inference::ModelInferResponse;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kAddSubConfig[] = R"pb(
  name: "add_sub"
  backend: "brigade" instance_group
  [ { kind: KIND_CPU count: 1 }]
  max_batch_size: 0 input
  [ {
    name: "INPUT0"
    data_type: TYPE_INT32
    dims: [ 4 ]
  }
    , {
      name: "INPUT1"
      data_type: TYPE_INT32
      dims: [ 4 ]
    }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_INT32
    dims: [ 4 ]
  }
    , {
      name: "OUTPUT1"
      data_type: TYPE_INT32
      dims: [ 4 ]
    }]
  parameters {
    key: "op"
    value { string_value: "add_sub" }
  }
)pb";

// Spins for 1.5 s per execution: long enough that a call is certainly still running when the
// test cancels it or shuts the server down.
constexpr int64_t kSlowComputeUs = 1'500'000;
constexpr char kSlowConfig[] = R"pb(
  name: "slow"
  backend: "brigade" instance_group
  [ { kind: KIND_CPU count: 1 }]
  max_batch_size: 0 input
  [ {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ 1 ]
  }] output
  [ {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ 1 ]
  }]
  parameters {
    key: "op"
    value { string_value: "identity" }
  }
  parameters {
    key: "compute_us"
    value { string_value: "1500000" }
  }
)pb";

template <typename T>
std::string Raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <typename T>
std::vector<T> Values(const std::string& raw) {
  std::vector<T> out(raw.size() / sizeof(T));
  std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
  return out;
}

ModelInferRequest AddSubRequest(const std::string& id, std::vector<int32_t> a,
                                std::vector<int32_t> b) {
  ModelInferRequest request;
  request.set_model_name("add_sub");
  request.set_id(id);
  for (const char* name : {"INPUT0", "INPUT1"}) {
    auto* input = request.add_inputs();
    input->set_name(name);
    input->set_datatype("INT32");
    input->add_shape(4);
  }
  request.add_raw_input_contents(Raw(a));
  request.add_raw_input_contents(Raw(b));
  return request;
}

ModelInferRequest SlowRequest() {
  ModelInferRequest request;
  request.set_model_name("slow");
  auto* input = request.add_inputs();
  input->set_name("INPUT0");
  input->set_datatype("FP32");
  input->add_shape(1);
  request.add_raw_input_contents(Raw(std::vector<float>{1.0f}));
  return request;
}

// Every case runs with ModelInfer on each of gRPC's APIs: they must answer alike.
class GrpcServerTest : public ::testing::TestWithParam<GrpcInferApi> {
 protected:
  void SetUp() override {
    repository_.AddModel("identity", brigade::testing::kIdentityConfig);
    repository_.AddModel("add_sub", kAddSubConfig);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    grpc_server_.reset();
    server_.reset();
  }

  // Starts the InferenceServer (with the slow model too when asked: its warm-up alone spins for
  // kSlowComputeUs) and the gRPC server in front of it.
  void StartGrpc(GrpcServer::Options options = {}, bool with_slow_model = false) {
    if (with_slow_model) repository_.AddModel("slow", kSlowConfig);
    InferenceServer::Options server_options;
    server_options.model_repository = repository_.path();
    auto server = InferenceServer::Create(server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    options.host = "127.0.0.1";
    options.port = 0;
    options.health_poll = absl::ZeroDuration();
    options.service.infer_api = GetParam();
    auto grpc_server = GrpcServer::Create(server_.get(), options);
    ASSERT_TRUE(grpc_server.ok()) << grpc_server.status();
    grpc_server_ = *std::move(grpc_server);
    grpc::ChannelArguments arguments;
    arguments.SetMaxReceiveMessageSize(-1);
    arguments.SetMaxSendMessageSize(-1);
    channel_ = grpc::CreateCustomChannel(grpc_server_->address(),
                                         grpc::InsecureChannelCredentials(), arguments);
    stub_ = GRPCInferenceService::NewStub(channel_);
  }

  // grpc.health.v1.Health/Check for the whole server, through a generic call so the test needs
  // no health .proto: the request is empty, the reply is {status (1): enum}.
  int HealthStatus() {
    grpc::GenericStub generic(channel_);
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::Slice empty("");
    request = grpc::ByteBuffer(&empty, 1);
    grpc::ByteBuffer reply;
    grpc::Status status;
    absl::Notification done;
    generic.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request,
                      &reply, [&](grpc::Status s) {
                        status = std::move(s);
                        done.Notify();
                      });
    done.WaitForNotification();
    if (!status.ok()) return -status.error_code();
    std::vector<grpc::Slice> slices;
    EXPECT_TRUE(reply.Dump(&slices).ok());
    std::string bytes;
    for (const grpc::Slice& slice : slices) bytes.append(slice.begin(), slice.end());
    if (bytes.empty()) return 0;  // UNKNOWN, the default value, is not sent
    EXPECT_EQ(bytes.size(), 2u);
    EXPECT_EQ(bytes[0], 0x08);  // field 1, varint
    return bytes[1];
  }

  // Outlives the servers, whose requests carry charges on it.
  std::unique_ptr<MemoryBudget> budget_;
  telemetry::Counter budget_refusals_;
  testing::TempRepository repository_;
  std::unique_ptr<InferenceServer> server_;
  std::unique_ptr<GrpcServer> grpc_server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<GRPCInferenceService::Stub> stub_;
};

TEST_P(GrpcServerTest, PortZeroReportsTheBoundPort) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  EXPECT_GT(grpc_server_->port(), 0);
  EXPECT_EQ(grpc_server_->address(), "127.0.0.1:" + std::to_string(grpc_server_->port()));
}

TEST_P(GrpcServerTest, AnswersHealthAndMetadata) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  grpc::ClientContext live_context;
  inference::ServerLiveResponse live;
  ASSERT_TRUE(stub_->ServerLive(&live_context, {}, &live).ok());
  EXPECT_TRUE(live.live());

  grpc::ClientContext ready_context;
  inference::ServerReadyResponse ready;
  ASSERT_TRUE(stub_->ServerReady(&ready_context, {}, &ready).ok());
  EXPECT_TRUE(ready.ready());

  grpc::ClientContext model_context;
  inference::ModelReadyRequest model_request;
  model_request.set_name("add_sub");
  inference::ModelReadyResponse model_ready;
  ASSERT_TRUE(stub_->ModelReady(&model_context, model_request, &model_ready).ok());
  EXPECT_TRUE(model_ready.ready());

  grpc::ClientContext server_context;
  inference::ServerMetadataResponse server_metadata;
  ASSERT_TRUE(stub_->ServerMetadata(&server_context, {}, &server_metadata).ok());
  EXPECT_FALSE(server_metadata.name().empty());

  grpc::ClientContext metadata_context;
  inference::ModelMetadataRequest metadata_request;
  metadata_request.set_name("identity");
  inference::ModelMetadataResponse metadata;
  ASSERT_TRUE(stub_->ModelMetadata(&metadata_context, metadata_request, &metadata).ok());
  EXPECT_EQ(metadata.name(), "identity");
  ASSERT_EQ(metadata.inputs_size(), 1);
  EXPECT_EQ(metadata.inputs(0).name(), "INPUT0");
  EXPECT_EQ(metadata.inputs(0).datatype(), "FP32");
  EXPECT_THAT(metadata.inputs(0).shape(), ElementsAre(-1, -1));
}

// Triton's answer, which tritonclient's is_model_ready() polling loops rely on.
TEST_P(GrpcServerTest, ModelReadyOfAnUnknownModelOrVersionIsFalseWithOk) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  const auto ready = [&](std::string name, std::string version) {
    grpc::ClientContext context;
    inference::ModelReadyRequest request;
    request.set_name(std::move(name));
    request.set_version(std::move(version));
    inference::ModelReadyResponse response;
    response.set_ready(true);
    const grpc::Status status = stub_->ModelReady(&context, request, &response);
    return std::make_pair(status.error_code(), response.ready());
  };
  EXPECT_EQ(ready("add_sub", "1"), std::make_pair(grpc::StatusCode::OK, true));
  EXPECT_EQ(ready("nope", ""), std::make_pair(grpc::StatusCode::OK, false));
  EXPECT_EQ(ready("add_sub", "7"), std::make_pair(grpc::StatusCode::OK, false));
  EXPECT_EQ(ready("add_sub", "x").first, grpc::StatusCode::INVALID_ARGUMENT);
  server_->StartDrain();
  EXPECT_EQ(ready("add_sub", "").first, grpc::StatusCode::UNAVAILABLE);
}

TEST_P(GrpcServerTest, ModelVersionThatIsNotANumberIsInvalidArgument) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  grpc::ClientContext context;
  inference::ModelMetadataRequest request;
  request.set_name("identity");
  request.set_version("latest");
  inference::ModelMetadataResponse response;
  const grpc::Status status = stub_->ModelMetadata(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("version 'latest'"));
}

TEST_P(GrpcServerTest, ModelConfigReturnsTheRepositoryConfig) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  grpc::ClientContext context;
  inference::ModelConfigRequest request;
  request.set_name("add_sub");
  inference::ModelConfigResponse response;
  ASSERT_TRUE(stub_->ModelConfig(&context, request, &response).ok());
  EXPECT_EQ(response.config().name(), "add_sub");
  EXPECT_EQ(response.config().backend(), "brigade");
  ASSERT_EQ(response.config().input_size(), 2);
  EXPECT_EQ(response.config().input(1).name(), "INPUT1");
}

TEST_P(GrpcServerTest, InfersWithRawContents) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  grpc::ClientContext context;
  ModelInferResponse response;
  const grpc::Status status = stub_->ModelInfer(
      &context, AddSubRequest("req-1", {1, 2, 3, 4}, {10, 20, 30, 40}), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.model_name(), "add_sub");
  EXPECT_EQ(response.model_version(), "1");
  EXPECT_EQ(response.id(), "req-1");
  ASSERT_EQ(response.outputs_size(), 2);
  ASSERT_EQ(response.raw_output_contents_size(), 2);
  std::map<std::string, std::vector<int32_t>> outputs;
  for (int i = 0; i < response.outputs_size(); ++i) {
    EXPECT_EQ(response.outputs(i).datatype(), "INT32");
    EXPECT_THAT(response.outputs(i).shape(), ElementsAre(4));
    outputs[response.outputs(i).name()] = Values<int32_t>(response.raw_output_contents(i));
  }
  EXPECT_THAT(outputs["OUTPUT0"], ElementsAre(11, 22, 33, 44));
  EXPECT_THAT(outputs["OUTPUT1"], ElementsAre(-9, -18, -27, -36));
}

TEST_P(GrpcServerTest, InfersWithTypedContents) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  ModelInferRequest request;
  request.set_model_name("identity");
  auto* input = request.add_inputs();
  input->set_name("INPUT0");
  input->set_datatype("FP32");
  input->add_shape(1);
  input->add_shape(3);
  for (float v : {0.5f, -1.0f, 2.0f}) input->mutable_contents()->add_fp32_contents(v);
  grpc::ClientContext context;
  ModelInferResponse response;
  const grpc::Status status = stub_->ModelInfer(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.raw_output_contents_size(), 1);
  EXPECT_THAT(Values<float>(response.raw_output_contents(0)), ElementsAre(0.5f, -1.0f, 2.0f));
  EXPECT_THAT(response.outputs(0).shape(), ElementsAre(1, 3));
}

#ifdef BRIGADE_HAVE_ONNX
TEST_P(GrpcServerTest, AnOptionalInputMayBeOmittedButARequiredOneMayNot) {
  // y = x + bias on the ONNX engine; `bias` is optional, its initializer [10,11,12,13] the
  // default a request that omits it runs with (the HTTP handler test checks the same over HTTP).
  repository_.AddModel("add_bias", brigade::testing::kAddBiasConfig);
  repository_.WriteFile("add_bias/1/model.onnx", engine::onnx::AddBiasGraph().Serialize());
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  auto request = [](bool with_x, bool with_bias) {
    ModelInferRequest request;
    request.set_model_name("add_bias");
    auto add = [&request](const char* name, std::vector<float> values) {
      auto* input = request.add_inputs();
      input->set_name(name);
      input->set_datatype("FP32");
      input->add_shape(1);
      input->add_shape(4);
      request.add_raw_input_contents(Raw(values));
    };
    if (with_x) add("x", {1, 2, 3, 4});
    if (with_bias) add("bias", {100, 100, 100, 100});
    return request;
  };

  grpc::ClientContext omitted_context;
  ModelInferResponse omitted;
  grpc::Status status = stub_->ModelInfer(&omitted_context, request(true, false), &omitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(omitted.raw_output_contents_size(), 1);
  EXPECT_THAT(omitted.outputs(0).shape(), ElementsAre(1, 4));
  EXPECT_THAT(Values<float>(omitted.raw_output_contents(0)), ElementsAre(11, 13, 15, 17));

  grpc::ClientContext given_context;
  ModelInferResponse given;
  status = stub_->ModelInfer(&given_context, request(true, true), &given);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(given.raw_output_contents_size(), 1);
  EXPECT_THAT(Values<float>(given.raw_output_contents(0)), ElementsAre(101, 102, 103, 104));

  grpc::ClientContext missing_context;
  ModelInferResponse missing;
  status = stub_->ModelInfer(&missing_context, request(false, true), &missing);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("model 'add_bias' is missing input 'x'"));
}
#endif  // BRIGADE_HAVE_ONNX

TEST_P(GrpcServerTest, BadRequestIsInvalidArgumentNamingTheInput) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  ModelInferRequest request = AddSubRequest("", {1, 2, 3, 4}, {1, 2, 3, 4});
  request.mutable_inputs(1)->set_datatype("FP33");
  grpc::ClientContext context;
  ModelInferResponse response;
  const grpc::Status status = stub_->ModelInfer(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("input 'INPUT1'"));
}

TEST_P(GrpcServerTest, UnknownModelIsNotFound) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  ModelInferRequest request = AddSubRequest("", {1, 2, 3, 4}, {1, 2, 3, 4});
  request.set_model_name("missing");
  grpc::ClientContext context;
  ModelInferResponse response;
  EXPECT_EQ(stub_->ModelInfer(&context, request, &response).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_P(GrpcServerTest, MessageOverTheLimitIsResourceExhausted) {
  GrpcServer::Options options;
  options.max_receive_message_bytes = 1 << 20;
  ASSERT_NO_FATAL_FAILURE(StartGrpc(options));
  ModelInferRequest request;
  request.set_model_name("identity");
  auto* input = request.add_inputs();
  input->set_name("INPUT0");
  input->set_datatype("FP32");
  input->add_shape(1);
  input->add_shape(512 * 1024);  // 2 MiB of FP32
  request.add_raw_input_contents(Raw(std::vector<float>(512 * 1024, 1.0f)));
  grpc::ClientContext context;
  ModelInferResponse response;
  EXPECT_EQ(stub_->ModelInfer(&context, request, &response).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_P(GrpcServerTest, MetadataOverTheLimitIsRefused) {
  GrpcServer::Options options;
  options.max_metadata_bytes = 1024;
  ASSERT_NO_FATAL_FAILURE(StartGrpc(options));
  ModelInferResponse response;
  grpc::ClientContext small;
  small.AddMetadata("x-small", std::string(100, 's'));
  EXPECT_TRUE(
      stub_->ModelInfer(&small, AddSubRequest("", {1, 1, 1, 1}, {1, 1, 1, 1}), &response).ok());
  grpc::ClientContext big;
  big.AddMetadata("x-big", std::string(8 * 1024, 'b'));
  EXPECT_FALSE(
      stub_->ModelInfer(&big, AddSubRequest("", {1, 1, 1, 1}, {1, 1, 1, 1}), &response).ok());
}

TEST_P(GrpcServerTest, CreateRefusesBadStreamAndMetadataLimits) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  GrpcServer::Options options;
  options.port = 0;
  options.max_concurrent_streams = 0;
  EXPECT_EQ(GrpcServer::Create(server_.get(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.max_concurrent_streams = 1;
  options.max_metadata_bytes = 100;
  EXPECT_EQ(GrpcServer::Create(server_.get(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(GrpcServerTest, ClientDeadlineEndsASlowCall) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc({}, /*with_slow_model=*/true));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  ModelInferResponse response;
  EXPECT_EQ(stub_->ModelInfer(&context, SlowRequest(), &response).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server stays usable.
  grpc::ClientContext next;
  EXPECT_TRUE(
      stub_->ModelInfer(&next, AddSubRequest("", {1, 1, 1, 1}, {1, 1, 1, 1}), &response).ok());
}

TEST_P(GrpcServerTest, StreamAnswersEveryRequestAndReportsErrorsInBand) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  grpc::ClientContext context;
  auto stream = stub_->ModelStreamInfer(&context);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(stream->Write(AddSubRequest("s" + std::to_string(i), {i, i, i, i}, {1, 1, 1, 1})));
  }
  ModelInferRequest bad = AddSubRequest("bad", {1, 1, 1, 1}, {1, 1, 1, 1});
  bad.mutable_inputs(0)->set_datatype("FP33");
  ASSERT_TRUE(stream->Write(bad));
  ASSERT_TRUE(stream->WritesDone());

  std::map<std::string, inference::ModelStreamInferResponse> by_id;
  inference::ModelStreamInferResponse response;
  int reads = 0;
  while (stream->Read(&response)) {
    ++reads;
    by_id[response.infer_response().id()] = response;
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(reads, 9) << "one response per request, no more";
  ASSERT_EQ(by_id.size(), 9u);
  for (int i = 0; i < 8; ++i) {
    const auto& r = by_id["s" + std::to_string(i)];
    EXPECT_EQ(r.error_message(), "");
    ASSERT_EQ(r.infer_response().raw_output_contents_size(), 2);
  }
  EXPECT_THAT(by_id["bad"].error_message(), HasSubstr("FP33"));
}

// Waits (completions release their messages on other threads) until `budget` holds nothing.
bool WaitForEmptyBudget(const MemoryBudget& budget) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (budget.in_use() != 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

TEST_P(GrpcServerTest, AMessagePastTheMemoryBudgetIsUnavailableAndTheRestAreServed) {
  budget_ = std::make_unique<MemoryBudget>(1000);
  GrpcServer::Options options;
  options.service.charging = {.budget = budget_.get(), .refusals = &budget_refusals_};
  ASSERT_NO_FATAL_FAILURE(StartGrpc(options));
  // The id alone (2,000 bytes) is past the 1,000-byte budget.
  const ModelInferRequest big = AddSubRequest(std::string(2000, 'x'), {1, 1, 1, 1}, {1, 1, 1, 1});
  {
    grpc::ClientContext context;
    ModelInferResponse response;
    const grpc::Status status = stub_->ModelInfer(&context, big, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(status.error_message(), HasSubstr("limit of request memory (1000 bytes"));
  }
  for (int i = 0; i < 5; ++i) {
    grpc::ClientContext context;
    ModelInferResponse response;
    const grpc::Status status =
        stub_->ModelInfer(&context, AddSubRequest("small", {1, 2, 3, 4}, {1, 1, 1, 1}), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  // On a stream the refused message is answered in band; the stream goes on.
  grpc::ClientContext context;
  auto stream = stub_->ModelStreamInfer(&context);
  ASSERT_TRUE(stream->Write(big));
  ASSERT_TRUE(stream->Write(AddSubRequest("after", {1, 2, 3, 4}, {1, 1, 1, 1})));
  ASSERT_TRUE(stream->WritesDone());
  std::map<std::string, std::string> errors;
  inference::ModelStreamInferResponse response;
  while (stream->Read(&response)) {
    errors[response.infer_response().id().substr(0, 5)] = response.error_message();
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_THAT(errors["xxxxx"], HasSubstr("limit of request memory"));
  EXPECT_EQ(errors["after"], "");
  EXPECT_EQ(budget_refusals_.Value(), 2u);
  EXPECT_TRUE(WaitForEmptyBudget(*budget_)) << budget_->in_use() << " bytes still charged";
  EXPECT_GT(budget_->TakePeak(), 0u);
}

TEST_P(GrpcServerTest, UnaryAndStreamRequestsAreEachCountedOnceWithTheirOutcome) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  ModelInferRequest bad = AddSubRequest("bad", {1, 1, 1, 1}, {1, 1, 1, 1});
  bad.mutable_inputs(0)->set_datatype("FP33");
  ModelInferResponse response;
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext context;
    ASSERT_TRUE(
        stub_->ModelInfer(&context, AddSubRequest("u", {1, 1, 1, 1}, {1, 1, 1, 1}), &response)
            .ok());
  }
  grpc::ClientContext unary_bad;
  EXPECT_FALSE(stub_->ModelInfer(&unary_bad, bad, &response).ok());
  grpc::ClientContext context;
  auto stream = stub_->ModelStreamInfer(&context);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(stream->Write(AddSubRequest("s" + std::to_string(i), {i, i, i, i}, {1, 1, 1, 1})));
  }
  ASSERT_TRUE(stream->Write(bad));
  ASSERT_TRUE(stream->WritesDone());
  inference::ModelStreamInferResponse streamed;
  while (stream->Read(&streamed)) {
  }
  ASSERT_TRUE(stream->Finish().ok());
  // Requests are reported once their answer is written, which may be a moment after the client
  // read it; the failed decodes count under the model's newest version.
  const std::string success =
      R"(brigade_requests_total{model="add_sub",version="1",protocol="grpc",outcome="success"} 5)"
      "\n";
  const std::string error =
      R"(brigade_requests_total{model="add_sub",version="1",protocol="grpc",outcome="error"} 2)"
      "\n";
  std::string text;
  for (int attempt = 0; attempt < 200; ++attempt) {
    text = server_->MetricsText();
    if (text.find(success) != std::string::npos && text.find(error) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_THAT(text, HasSubstr(success));
  EXPECT_THAT(text, HasSubstr(error));
  EXPECT_THAT(text, HasSubstr(R"(brigade_request_stage_duration_seconds_count{model="add_sub",)"
                              R"(version="1",protocol="grpc",stage="send"} 5)"
                              "\n"));
}

TEST_P(GrpcServerTest, StreamWithErrorsAsStatusEndsOnTheFirstError) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  grpc::ClientContext context;
  context.AddMetadata(kStreamErrorAsStatusMetadata, "true");
  auto stream = stub_->ModelStreamInfer(&context);
  ASSERT_TRUE(stream->Write(AddSubRequest("good", {1, 1, 1, 1}, {1, 1, 1, 1})));
  inference::ModelStreamInferResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.infer_response().id(), "good");
  ModelInferRequest bad = AddSubRequest("bad", {1, 1, 1, 1}, {1, 1, 1, 1});
  bad.set_model_version("x");
  stream->Write(bad);  // the stream stays open on the client side
  while (stream->Read(&response)) {
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("model_version 'x'"));
}

TEST_P(GrpcServerTest, StreamAtItsInFlightLimitStillAnswersEveryRequest) {
  GrpcServer::Options options;
  options.service.stream_max_in_flight = 1;  // reading pauses after every request
  ASSERT_NO_FATAL_FAILURE(StartGrpc(options));
  grpc::ClientContext context;
  auto stream = stub_->ModelStreamInfer(&context);
  constexpr int kRequests = 20;
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(stream->Write(AddSubRequest("s" + std::to_string(i), {i, 0, 0, 0}, {0, 0, 0, 0})));
  }
  ASSERT_TRUE(stream->WritesDone());
  std::set<std::string> ids;
  inference::ModelStreamInferResponse response;
  while (stream->Read(&response)) {
    EXPECT_EQ(response.error_message(), "");
    ids.insert(response.infer_response().id());
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kRequests));
}

TEST_P(GrpcServerTest, CancelledStreamEndsWhileItsRequestIsStillRunning) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc({}, /*with_slow_model=*/true));
  grpc::ClientContext context;
  auto stream = stub_->ModelStreamInfer(&context);
  ASSERT_TRUE(stream->Write(SlowRequest()));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_->WaitIdle(absl::ZeroDuration()) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  ASSERT_FALSE(server_->WaitIdle(absl::ZeroDuration()))
      << "the slow request never reached the server";
  context.TryCancel();
  inference::ModelStreamInferResponse response;
  while (stream->Read(&response)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The reactor outlives the stream until the slow request completes; then it must go quietly.
  EXPECT_TRUE(server_->WaitIdle(absl::Seconds(10)));
  grpc::ClientContext next;
  ModelInferResponse reply;
  EXPECT_TRUE(stub_->ModelInfer(&next, AddSubRequest("", {1, 1, 1, 1}, {1, 1, 1, 1}), &reply).ok());
}

TEST_P(GrpcServerTest, StatisticsAndRepositoryIndex) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  {
    grpc::ClientContext context;
    ModelInferResponse response;
    ASSERT_TRUE(
        stub_->ModelInfer(&context, AddSubRequest("", {1, 1, 1, 1}, {1, 1, 1, 1}), &response).ok());
  }
  grpc::ClientContext stats_context;
  inference::ModelStatisticsRequest stats_request;
  stats_request.set_name("add_sub");
  inference::ModelStatisticsResponse stats;
  ASSERT_TRUE(stub_->ModelStatistics(&stats_context, stats_request, &stats).ok());
  ASSERT_EQ(stats.model_stats_size(), 1);
  EXPECT_EQ(stats.model_stats(0).name(), "add_sub");
  EXPECT_EQ(stats.model_stats(0).inference_stats().success().count(), 1u);
  EXPECT_GT(stats.model_stats(0).inference_stats().success().ns(), 0u);

  grpc::ClientContext index_context;
  inference::RepositoryIndexRequest index_request;
  inference::RepositoryIndexResponse index;
  ASSERT_TRUE(stub_->RepositoryIndex(&index_context, index_request, &index).ok());
  std::set<std::string> names;
  for (const auto& model : index.models()) names.insert(model.name());
  EXPECT_THAT(names, ::testing::IsSupersetOf({"identity", "add_sub"}));
}

TEST_P(GrpcServerTest, LogSettingsReadAndChangeTheLogLevel) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  const auto call = [&](const inference::LogSettingsRequest& request,
                        inference::LogSettingsResponse* response) {
    grpc::ClientContext context;
    return stub_->LogSettings(&context, request, response);
  };
  inference::LogSettingsResponse read;
  ASSERT_TRUE(call({}, &read).ok());
  EXPECT_TRUE(read.settings().at("log_info").bool_param());

  inference::LogSettingsRequest verbose;
  (*verbose.mutable_settings())["log_verbose_level"].set_uint32_param(1);
  inference::LogSettingsResponse changed;
  ASSERT_TRUE(call(verbose, &changed).ok());
  EXPECT_EQ(changed.settings().at("log_verbose_level").uint32_param(), 1u);
  EXPECT_EQ(spdlog::get_level(), spdlog::level::debug);

  inference::LogSettingsRequest file;
  (*file.mutable_settings())["log_file"].set_string_param("/tmp/b.log");
  inference::LogSettingsResponse unused;
  EXPECT_EQ(call(file, &unused).error_code(), grpc::StatusCode::UNIMPLEMENTED);

  (*verbose.mutable_settings())["log_verbose_level"].set_uint32_param(0);
  ASSERT_TRUE(call(verbose, &changed).ok());
  EXPECT_EQ(spdlog::get_level(), spdlog::level::info);
}

// Without a registry (the serve command's --shared-memory=none) system shared memory is off;
// CUDA shared memory is never served. Both say why.
TEST_P(GrpcServerTest, SharedMemoryOffAndCudaSharedMemoryAreUnimplementedSayingWhy) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  grpc::ClientContext context;
  inference::SystemSharedMemoryStatusResponse response;
  const grpc::Status system = stub_->SystemSharedMemoryStatus(&context, {}, &response);
  EXPECT_EQ(system.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_NE(system.error_message().find("system shared memory is disabled"), std::string::npos);
  grpc::ClientContext cuda_context;
  inference::CudaSharedMemoryRegisterResponse cuda_response;
  const grpc::Status cuda = stub_->CudaSharedMemoryRegister(&cuda_context, {}, &cuda_response);
  EXPECT_EQ(cuda.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_NE(cuda.error_message().find("CUDA shared memory is not supported"), std::string::npos);
}

TEST_P(GrpcServerTest, HealthServiceFollowsReadiness) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc());
  constexpr int kServing = 1;
  constexpr int kNotServing = 2;
  EXPECT_EQ(HealthStatus(), kServing);
  server_->StartDrain();
  grpc_server_->RefreshHealth();
  EXPECT_EQ(HealthStatus(), kNotServing);
}

TEST_P(GrpcServerTest, ShutdownDoesNotWaitForACancelledCall) {
  ASSERT_NO_FATAL_FAILURE(StartGrpc({}, /*with_slow_model=*/true));
  grpc::ClientContext context;
  const ModelInferRequest request = SlowRequest();
  ModelInferResponse response;
  grpc::Status status;
  absl::Notification done;
  stub_->async()->ModelInfer(&context, &request, &response, [&](grpc::Status s) {
    status = std::move(s);
    done.Notify();
  });
  // Wait (bounded) until the call is inside the InferenceServer.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_->WaitIdle(absl::ZeroDuration()) && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  ASSERT_FALSE(server_->WaitIdle(absl::ZeroDuration())) << "the slow call never reached the server";

  const auto start = std::chrono::steady_clock::now();
  grpc_server_->Shutdown(absl::ZeroDuration());
  const auto shutdown_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
  done.WaitForNotification();
  EXPECT_FALSE(status.ok());
  // The model spins for 1.5 s; a shutdown that waited for the call would take that long.
  EXPECT_LT(shutdown_ms, kSlowComputeUs / 1000 / 2);
}

INSTANTIATE_TEST_SUITE_P(EveryInferApi, GrpcServerTest,
                         ::testing::Values(GrpcInferApi::kCallback, GrpcInferApi::kCompletionQueue,
                                           GrpcInferApi::kSync),
                         [](const ::testing::TestParamInfo<GrpcInferApi>& info) {
                           switch (info.param) {
                             case GrpcInferApi::kCallback:
                               return "Callback";
                             case GrpcInferApi::kCompletionQueue:
                               return "CompletionQueue";
                             case GrpcInferApi::kSync:
                               return "Sync";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace brigade::frontend
