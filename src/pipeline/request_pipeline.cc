#include "pipeline/request_pipeline.h"

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "pipeline/classification.h"
#include "pipeline/request_validator.h"
#include "protocol/failure_reason.h"
#include "telemetry/model_stats.h"
#include "telemetry/request_metrics.h"

namespace brigade::pipeline {

// What the pipeline keeps with an admitted request until it is done (InferRequest::context).
struct RequestPipeline::Context : RequestContext {
  RequestPipeline* pipeline = nullptr;
  Route route;
  int64_t arrival_ns = 0;
  // The front end's callback; called once, by Answer().
  InferCallback reply;
  // Set when the request ran as a cache miss: the store and followers Answer() settles.
  std::optional<cache::ResponseCache::PendingStore> pending;
  // The outputs the client asked to get classified (Triton's extension), with their counts.
  std::vector<std::pair<std::string, int64_t>> classifications;
  // With a postprocess step: the outputs the client asked for (of the step's; empty = all).
  std::vector<RequestedOutput> requested;
};

namespace {

// Replaces each classified output by its top-k strings (classification.h), with the labels of
// the version that answered.
absl::Status ClassifyOutputs(const repository::ModelVersion& version,
                             const std::vector<std::pair<std::string, int64_t>>& classifications,
                             InferResponse* response) {
  const bool batched = version.config().max_batch_size() > 0;
  for (const auto& [name, count] : classifications) {
    for (InferOutput& output : response->outputs) {
      if (output.name != name) continue;
      std::span<const std::string> labels;
      for (const repository::IoSpec& spec : version.outputs()) {
        if (spec.name == name && spec.labels != nullptr) labels = *spec.labels;
      }
      absl::StatusOr<Tensor> classes = Classify(name, output.tensor, count, batched, labels);
      if (!classes.ok()) {
        return absl::Status(classes.status().code(),
                            StrCat("model '", version.name(), "': ", classes.status().message()));
      }
      output.tensor = *std::move(classes);
    }
  }
  return absl::OkStatus();
}

// Runs the version's postprocess step on the model's outputs; the answer then holds the
// step's outputs the client asked for.
absl::Status Postprocess(const repository::ModelVersion& version,
                         const std::vector<RequestedOutput>& requested, InferResponse* response) {
  const repository::AttachedStep& step = *version.postprocess();
  std::vector<Tensor> inputs;
  for (const engine::TensorSpec& spec : step.inputs()) {
    InferOutput* found = nullptr;
    for (InferOutput& output : response->outputs) {
      if (output.name == spec.name) found = &output;
    }
    BRIGADE_CHECK(found != nullptr, "a model answers every output when none is requested");
    inputs.push_back(std::move(found->tensor));
  }
  std::vector<Tensor> outputs;
  BRIGADE_RETURN_IF_ERROR(step.Run(inputs, &outputs));
  response->outputs.clear();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = step.outputs()[i].name;
    bool wanted = requested.empty();
    for (const RequestedOutput& output : requested) wanted |= output.name == name;
    if (wanted) response->outputs.push_back({name, std::move(outputs[i]), {}});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RequestPipeline>> RequestPipeline::Create(Options options) {
  if (options.repository == nullptr) {
    return absl::InvalidArgumentError("request pipeline: no model repository");
  }
  if (options.clock == nullptr) return absl::InvalidArgumentError("request pipeline: no clock");
  return std::make_unique<RequestPipeline>(ConstructionTag(), options);
}

RequestPipeline::RequestPipeline(ConstructionTag, Options options)
    : options_(options),
      admission_(options_.clock),
      router_(options_.repository, options_.clock),
      run_miss_([this](std::unique_ptr<InferRequest> request,
                       cache::ResponseCache::PendingStore pending) {
        RunMiss(std::move(request), std::move(pending));
      }),
      after_answer_(options_.max_pending_after_answer),
      preprocess_pool_(options_.max_queued_preprocess, options_.preprocess_threads) {}

RequestPipeline::~RequestPipeline() = default;

void RequestPipeline::Infer(std::unique_ptr<InferRequest> request) {
  // admit
  if (absl::Status admitted = admission_.Admit(*request); !admitted.ok()) {
    request->Complete(std::move(admitted));
    return;
  }
  Serve(std::move(request));
}

void RequestPipeline::RunStep(std::unique_ptr<InferRequest> step) {
  // Admitted with its ensemble request: a step is never refused for draining half way.
  Serve(std::move(step));
}

void RequestPipeline::Serve(std::unique_ptr<InferRequest> request) {
  // route
  absl::StatusOr<Route> route = router_.Resolve(*request);
  if (!route.ok()) {
    request->Complete(route.status());
    return;
  }
  const repository::ModelVersion& version = *route->version;
  // preprocess
  if (absl::Status valid = PrepareRequest(version, request.get()); !valid.ok()) {
    // A request that fails validation is Triton's OTHER whatever its code.
    version.stats().RecordFailure(protocol::FailureReason::kOther,
                                  options_.clock->NowNs() - request->clock.at(Stage::kArrival));
    request->Complete(std::move(valid));
    return;
  }
  // From here the request is in flight until Answer() and the work after it are done (or its
  // preprocess step fails).
  admission_.Enter();
  if (version.preprocess() == nullptr) {
    Continue(std::move(request), *std::move(route));
    return;
  }
  // The step may take milliseconds (an image decode): never on the caller's io thread.
  auto held = std::make_shared<std::unique_ptr<InferRequest>>(std::move(request));
  const bool queued = preprocess_pool_.Post(
      [this, held, routed = *route]() mutable { Preprocess(std::move(*held), std::move(routed)); });
  if (!queued) {
    version.stats().RecordFailure(protocol::FailureReason::kRejected,
                                  options_.clock->NowNs() - (*held)->clock.at(Stage::kArrival));
    (*held)->Complete(absl::UnavailableError(
        StrCat("model '", version.name(), "': the pre-processing queue is full; retry shortly")));
    admission_.Leave();
  }
}

void RequestPipeline::Preprocess(std::unique_ptr<InferRequest> request, Route route) {
  const repository::AttachedStep& step = *route.version->preprocess();
  std::vector<Tensor> inputs;
  inputs.reserve(request->inputs.size());
  for (InferInput& input : request->inputs) inputs.push_back(std::move(input.tensor));
  std::vector<Tensor> outputs;
  if (absl::Status status = step.Run(inputs, &outputs); !status.ok()) {
    route.version->stats().RecordFailure(
        protocol::FailureReason::kOther,
        options_.clock->NowNs() - request->clock.at(Stage::kArrival));
    request->Complete(std::move(status));
    admission_.Leave();
    return;
  }
  request->inputs.clear();
  for (size_t i = 0; i < outputs.size(); ++i) {
    request->inputs.push_back({step.outputs()[i].name, std::move(outputs[i]), {}});
  }
  Continue(std::move(request), std::move(route));
}

void RequestPipeline::Continue(std::unique_ptr<InferRequest> request, Route route) {
  request->clock.Mark(Stage::kPreprocessed, options_.clock->NowNs());
  const repository::ModelVersion& version = *route.version;
  if (telemetry::ModelRequestMetrics* metrics = version.metrics()) metrics->in_flight().Increment();
  auto context = std::make_shared<Context>();
  context->pipeline = this;
  context->route = std::move(route);
  context->arrival_ns = request->clock.at(Stage::kArrival);
  context->reply = std::move(request->on_complete);
  for (const RequestedOutput& output : request->outputs) {
    if (std::optional<int64_t> count = output.parameters.GetInt(kClassificationParameter)) {
      context->classifications.emplace_back(output.name, *count);
    }
  }
  if (version.postprocess() != nullptr) {
    // The model gives all its outputs to the step; the client's choice applies to the step's.
    context->requested = std::move(request->outputs);
    request->outputs.clear();
  }
  // Captures one shared_ptr only, so the callback fits AnyInvocable's inline storage.
  request->on_complete = [context](absl::StatusOr<InferResponse> result) {
    context->pipeline->Answer(context, std::move(result));
  };
  request->context = context;

  // cache lookup, then enqueue
  const std::shared_ptr<cache::ResponseCache>& cache = context->route.model->cache();
  if (cache == nullptr) {
    Execute(std::move(request));
    return;
  }
  const repository::ModelVersion& served = *context->route.version;
  cache->Serve(std::move(request), served.version(), served.fingerprint(), served.stats_ptr(),
               run_miss_);
}

void RequestPipeline::RunMiss(std::unique_ptr<InferRequest> request,
                              cache::ResponseCache::PendingStore pending) {
  auto& context = static_cast<Context&>(*request->context);
  // A bypassed request has no key: nothing to store, nobody following it.
  if (pending.key != nullptr) context.pending = std::move(pending);
  Execute(std::move(request));
}

void RequestPipeline::Execute(std::unique_ptr<InferRequest> request) {
  repository::ModelVersion& version = *static_cast<Context&>(*request->context).route.version;
  if (const std::shared_ptr<const route::Ensemble>& ensemble = version.ensemble()) {
    ensemble->Run(std::move(request), this);
    return;
  }
  if (const std::shared_ptr<const route::Cascade>& cascade = version.cascade()) {
    cascade->Run(std::move(request), this);
    return;
  }
  version.Enqueue(std::move(request));
}

void RequestPipeline::Answer(const std::shared_ptr<Context>& context,
                             absl::StatusOr<InferResponse> result) {
  // respond
  const repository::ModelVersion& version = *context->route.version;
  const int64_t elapsed_ns = options_.clock->NowNs() - context->arrival_ns;
  if (result.ok()) {
    version.stats().RecordSuccess(elapsed_ns);
  } else {
    version.stats().RecordFailure(protocol::FailureReasonOf(result.status()), elapsed_ns);
  }
  const std::shared_ptr<repository::ModelVersion>& router = context->route.router;
  if (router != nullptr) {
    if (result.ok()) {
      router->stats().RecordSuccess(elapsed_ns);
    } else {
      router->stats().RecordFailure(protocol::FailureReasonOf(result.status()), elapsed_ns);
    }
  }
  if (telemetry::ModelRequestMetrics* metrics = version.metrics()) metrics->in_flight().Decrement();
  std::optional<cache::ResponseCache::PendingStore> pending = std::move(context->pending);
  // A miss keeps its outcome for the store and the followers (tensors are shared, not copied);
  // the client is answered first.
  std::optional<absl::StatusOr<InferResponse>> outcome;
  if (pending.has_value()) outcome = result;
  // The postprocess step and the classification extension run on each answer, after the
  // outcome is kept: the cache holds the model's tensors, and a hit is processed like a miss.
  if (result.ok() && version.postprocess() != nullptr) {
    if (absl::Status status = Postprocess(version, context->requested, &*result); !status.ok()) {
      result = std::move(status);
    } else {
      result->clock.Mark(Stage::kPostprocessed, options_.clock->NowNs());
    }
  }
  if (result.ok() && !context->classifications.empty()) {
    if (absl::Status classified = ClassifyOutputs(version, context->classifications, &*result);
        !classified.ok()) {
      result = std::move(classified);
    }
  }
  if (router != nullptr && result.ok()) {
    // The client asked the router: it answers as the router, saying which variant served (the
    // variant's cache keeps the variant's own answer).
    result->parameters.Set("routed_to", StrCat(version.name(), ":", version.version()));
    result->model_name = router->name();
    result->model_version = std::to_string(router->version());
  }
  InferCallback reply = std::move(context->reply);
  reply(std::move(result));
  if (!pending.has_value()) {
    admission_.Leave();
    return;
  }
  // cache store, followers
  after_answer_.PostOrRun([this, cache = context->route.model->cache(),
                           pending = *std::move(pending), outcome = *std::move(outcome)]() mutable {
    cache->Finish(pending, outcome, run_miss_);
    admission_.Leave();
  });
}

}  // namespace brigade::pipeline
