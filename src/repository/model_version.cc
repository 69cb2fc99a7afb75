#include "repository/model_version.h"

#include <algorithm>
#include <filesystem>
#include <new>
#include <system_error>
#include <utility>

#include "core/check.h"
#include "core/plain_file.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/model_config_parser.h"
#include "repository/model_file.h"
#include "repository/warmup.h"
#include "spdlog/spdlog.h"

namespace brigade::repository {
namespace {

// The config's validation keeps every model within what the scheduler accepts.
static_assert(protocol::kMaxConfigInstances == scheduler::Scheduler::kMaxInstanceCount);
static_assert(protocol::kMaxConfigBatchSize == scheduler::Scheduler::kMaxBatchSize);

// Queue bound when the config sets none (Triton's default is unbounded; ours never is).
constexpr size_t kDefaultMaxQueueSize = 1024;

template <typename ConfigTensor>
Shape ClientShape(const ConfigTensor& tensor, bool batching) {
  Shape shape;
  if (batching) shape.push_back(-1);
  for (int64_t dim : tensor.dims()) shape.push_back(dim);
  return shape;
}

template <typename ConfigTensor>
Shape ModelShape(const ConfigTensor& tensor, bool batching) {
  if (!tensor.has_reshape()) return ClientShape(tensor, batching);
  Shape shape;
  if (batching) shape.push_back(-1);
  for (int64_t dim : tensor.reshape().shape()) shape.push_back(dim);
  return shape;
}

template <typename ConfigTensors>
std::vector<engine::TensorSpec> Declared(const ConfigTensors& tensors, bool batching) {
  std::vector<engine::TensorSpec> specs;
  for (const auto& tensor : tensors) {
    engine::TensorSpec spec{tensor.name(), protocol::FromConfigDataType(tensor.data_type()),
                            ModelShape(tensor, batching)};
    if constexpr (requires { tensor.optional(); }) spec.optional = tensor.optional();
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Aligns the config's tensors with the backend's signature. With no config tensors the
// signature is taken as is (and written back into `config_tensors`).
template <typename ConfigTensors>
absl::StatusOr<std::vector<IoSpec>> Reconcile(std::string_view model, std::string_view what,
                                              const std::vector<engine::TensorSpec>& signature,
                                              bool batching, ConfigTensors* config_tensors) {
  std::vector<IoSpec> specs;
  if (config_tensors->empty()) {
    for (const engine::TensorSpec& spec : signature) {
      IoSpec io{spec.name, spec.dtype, spec.shape, spec.shape, false, false, nullptr};
      auto* added = config_tensors->Add();
      added->set_name(spec.name);
      added->set_data_type(protocol::ToConfigDataType(spec.dtype));
      for (size_t i = batching ? 1 : 0; i < spec.shape.size(); ++i) added->add_dims(spec.shape[i]);
      specs.push_back(std::move(io));
    }
    return specs;
  }
  for (const auto& declared : *config_tensors) {
    bool found = false;
    for (const engine::TensorSpec& spec : signature) found |= spec.name == declared.name();
    if (!found) {
      return absl::InvalidArgumentError(StrCat("model '", model, "': config ", what, " '",
                                               declared.name(), "' is not an ", what,
                                               " of the model"));
    }
  }
  for (const engine::TensorSpec& spec : signature) {
    const auto* declared = [&]() -> const typename ConfigTensors::value_type* {
      for (const auto& tensor : *config_tensors) {
        if (tensor.name() == spec.name) return &tensor;
      }
      return nullptr;
    }();
    if (declared == nullptr) {
      return absl::InvalidArgumentError(StrCat("model '", model, "': the model's ", what, " '",
                                               spec.name, "' is missing from config.pbtxt"));
    }
    const DataType dtype = protocol::FromConfigDataType(declared->data_type());
    if (dtype != spec.dtype) {
      return absl::InvalidArgumentError(
          StrCat("model '", model, "': ", what, " '", spec.name, "' is ", DataTypeName(spec.dtype),
                 " in the model but ", DataTypeName(dtype), " in config.pbtxt"));
    }
    IoSpec io;
    io.name = spec.name;
    io.dtype = dtype;
    io.shape = ClientShape(*declared, batching);
    io.model_shape = ModelShape(*declared, batching);
    io.reshaped = declared->has_reshape();
    if constexpr (std::is_same_v<typename ConfigTensors::value_type, config::ModelInput>) {
      io.optional = declared->optional();
      // The backend refuses this itself with its own reason; this catches one that does not.
      if (io.optional && !spec.optional) {
        return absl::InvalidArgumentError(
            StrCat("model '", model, "': input '", spec.name,
                   "' is optional in config.pbtxt, but the model has no default for it"));
      }
    }
    specs.push_back(std::move(io));
  }
  return specs;
}

scheduler::QueuePolicy QueuePolicyFrom(const config::ModelQueuePolicy& policy) {
  scheduler::QueuePolicy out;
  out.timeout_action = policy.timeout_action() == config::ModelQueuePolicy::DELAY
                           ? scheduler::QueuePolicy::TimeoutAction::kDelay
                           : scheduler::QueuePolicy::TimeoutAction::kReject;
  out.default_timeout_us = static_cast<int64_t>(policy.default_timeout_microseconds());
  out.allow_timeout_override = policy.allow_timeout_override();
  out.max_queue_size = policy.max_queue_size();
  return out;
}

// Maps config.pbtxt (validated) to the scheduler: dynamic_batching's batch rule (only when the
// model batches), its queue policies, priorities, ordering and admission control (always), and
// Brigade's adaptive_batching.
scheduler::Scheduler::Options SchedulerOptions(const ModelVersion::Options& options,
                                               const config::ModelConfig& config) {
  scheduler::Scheduler::Options out;
  out.model_name = config.name();
  out.version = options.version;
  out.clock = options.clock;
  out.pin_threads = options.pin_threads;
  out.cpus = options.cpus;
  out.run_inline_max_us = absl::ToInt64Microseconds(options.run_inline_max);
  out.metrics = options.metrics;
  out.queue.max_batch_size = config.max_batch_size();
  out.queue.max_queue_size = kDefaultMaxQueueSize;
  const bool batching = config.max_batch_size() > 0;
  if (config.has_dynamic_batching()) {
    const auto& batching_config = config.dynamic_batching();
    out.queue.dynamic_batching = batching;
    out.queue.preferred_batch_sizes.assign(batching_config.preferred_batch_size().begin(),
                                           batching_config.preferred_batch_size().end());
    out.queue.max_queue_delay_us =
        static_cast<int64_t>(batching_config.max_queue_delay_microseconds());
    out.queue.default_queue_policy = QueuePolicyFrom(batching_config.default_queue_policy());
    size_t level_bounds = 0;
    if (batching_config.priority_levels() > 0) {
      out.queue.priority_levels = static_cast<int>(batching_config.priority_levels());
      out.queue.default_priority_level = static_cast<int>(batching_config.default_priority_level());
      for (const auto& [level, policy] : batching_config.priority_queue_policy()) {
        out.queue.priority_queue_policy[static_cast<int>(level)] = QueuePolicyFrom(policy);
      }
      for (int level = 1; level <= out.queue.priority_levels; ++level) {
        auto it = out.queue.priority_queue_policy.find(level);
        level_bounds += it != out.queue.priority_queue_policy.end()
                            ? it->second.max_queue_size
                            : out.queue.default_queue_policy.max_queue_size;
      }
    } else {
      level_bounds = out.queue.default_queue_policy.max_queue_size;
    }
    // Levels without a bound of their own share the queue-wide one; explicit bounds may raise it.
    out.queue.max_queue_size = std::max(kDefaultMaxQueueSize, level_bounds);
    out.preserve_ordering = batching_config.preserve_ordering();
    out.queue.admission_control = batching_config.admission_control();
  }
  if (config.has_adaptive_batching() && batching) {
    const auto& adaptive = config.adaptive_batching();
    out.queue.dynamic_batching = true;
    out.queue.policy = adaptive.policy() == config::ModelAdaptiveBatching::QUEUE_FORMULA
                           ? scheduler::BatchPolicyKind::kQueueFormula
                           : scheduler::BatchPolicyKind::kP99Model;
    out.queue.target_p99_us = static_cast<int64_t>(adaptive.target_p99_microseconds());
    out.queue.adaptive_max_batch_size = adaptive.max_batch_size();
    if (adaptive.profile_half_life_microseconds() > 0) {
      out.queue.profile_half_life_us =
          static_cast<int64_t>(adaptive.profile_half_life_microseconds());
    }
  }
  int count = 0;
  for (const auto& group : config.instance_group()) {
    count += group.count() > 0 ? group.count() : 1;
    if (!group.cpus().empty() && out.cpus.empty()) {
      out.cpus.assign(group.cpus().begin(), group.cpus().end());
    }
    if (group.intra_op_threads() > 0 && out.intra_op_threads == 0) {
      out.intra_op_threads = group.intra_op_threads();
    }
  }
  out.instance_count = std::max(1, count);
  return out;
}

// The ensemble's tensors as clients see them: exactly what its config declares.
template <typename ConfigTensors>
std::vector<IoSpec> DeclaredIo(const ConfigTensors& tensors, bool batching) {
  std::vector<IoSpec> specs;
  for (const auto& tensor : tensors) {
    IoSpec io;
    io.name = tensor.name();
    io.dtype = protocol::FromConfigDataType(tensor.data_type());
    io.shape = ClientShape(tensor, batching);
    io.model_shape = io.shape;
    if constexpr (requires { tensor.optional(); }) io.optional = tensor.optional();
    specs.push_back(std::move(io));
  }
  return specs;
}

// Reads each output's label_filename (a file in the model directory) into its IoSpec.
absl::Status AttachLabels(const std::string& model_dir, const config::ModelConfig& config,
                          std::vector<IoSpec>* outputs) {
  for (const config::ModelOutput& output : config.output()) {
    if (output.label_filename().empty()) continue;
    for (IoSpec& spec : *outputs) {
      if (spec.name != output.name()) continue;
      BRIGADE_ASSIGN_OR_RETURN(const std::string text,
                               ReadModelFile(model_dir, output.label_filename(),
                                             StrCat("model '", config.name(), "' output '",
                                                    output.name(), "' label_filename")));
      spec.labels = std::make_shared<const std::vector<std::string>>(SplitLabels(text));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::LoadEnsemble(Options options) {
  const config::ModelConfig& config = options.config;
  if (!options.step_models) {
    return absl::FailedPreconditionError(
        StrCat("ensemble '", config.name(), "': nothing to look its step models up in"));
  }
  for (const auto& input : config.input()) {
    if (input.has_reshape()) {
      return absl::InvalidArgumentError(StrCat("ensemble '", config.name(), "': input '",
                                               input.name(),
                                               "' has a reshape, which an "
                                               "ensemble cannot apply"));
    }
  }
  auto lookup = [&](std::string_view model, int64_t version) {
    return options.step_models(model, version);
  };
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const route::EnsemblePlan> plan,
                           route::EnsemblePlan::Create(config, lookup));
  const bool batching = config.max_batch_size() > 0;
  auto stats = std::make_shared<telemetry::ModelStats>(
      config.name(), std::to_string(options.version), config.max_batch_size());
  std::vector<IoSpec> outputs = DeclaredIo(config.output(), batching);
  BRIGADE_RETURN_IF_ERROR(AttachLabels(options.model_dir, config, &outputs));
  auto loaded = std::make_shared<ModelVersion>(
      ConstructionTag(), options.version, std::move(options.fingerprint), config,
      DeclaredIo(config.input(), batching), std::move(outputs), std::move(stats), nullptr,
      route::Ensemble::Create(std::move(plan), options.version, options.clock), nullptr);
  loaded->metrics_ = options.metrics;
  return loaded;
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::LoadRouter(Options options) {
  config::ModelConfig config = options.config;
  const std::string name = config.name();
  if (!options.step_models) {
    return absl::FailedPreconditionError(
        StrCat("router '", name, "': nothing to look its variants up in"));
  }
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<route::RoutingPolicy> policy,
                           route::RoutingPolicy::Create(name, config.routing()));
  // Every variant must take the router's inputs and give its outputs (names and datatypes;
  // shapes are each variant's own business and are checked per request). The router declares
  // them, or takes the first variant's.
  std::vector<IoSpec> inputs;
  std::vector<IoSpec> outputs;
  for (const route::RouteVariant& variant : policy->variants()) {
    absl::StatusOr<route::StepModelSignature> signature =
        options.step_models(variant.model_name, variant.model_version);
    if (!signature.ok()) {
      return absl::Status(signature.status().code(),
                          StrCat("router '", name, "': variant '", variant.name,
                                 "': ", signature.status().message()));
    }
    if (inputs.empty() && outputs.empty()) {
      if (config.input_size() > 0 || config.output_size() > 0) {
        inputs = DeclaredIo(config.input(), config.max_batch_size() > 0);
        outputs = DeclaredIo(config.output(), config.max_batch_size() > 0);
      } else {
        config.set_max_batch_size(signature->max_batch_size);
        for (const route::TensorSignature& t : signature->inputs) {
          inputs.push_back({t.name, t.dtype, t.shape, t.shape, false, t.optional, nullptr});
        }
        for (const route::TensorSignature& t : signature->outputs) {
          outputs.push_back({t.name, t.dtype, t.shape, t.shape, false, false, nullptr});
        }
        const bool batching = signature->max_batch_size > 0;
        auto write = [batching](const std::vector<IoSpec>& specs, auto* tensors) {
          for (const IoSpec& spec : specs) {
            auto* added = tensors->Add();
            added->set_name(spec.name);
            added->set_data_type(protocol::ToConfigDataType(spec.dtype));
            for (size_t i = batching ? 1 : 0; i < spec.shape.size(); ++i) {
              added->add_dims(spec.shape[i]);
            }
          }
        };
        write(inputs, config.mutable_input());
        write(outputs, config.mutable_output());
      }
    }
    auto check = [&](std::string_view what, const std::vector<IoSpec>& want,
                     const std::vector<route::TensorSignature>& have) -> absl::Status {
      for (const IoSpec& spec : want) {
        const route::TensorSignature* found = nullptr;
        for (const route::TensorSignature& t : have) {
          if (t.name == spec.name) found = &t;
        }
        if (found == nullptr || found->dtype != spec.dtype) {
          return absl::InvalidArgumentError(StrCat(
              "router '", name, "': variant '", variant.name, "' (model '", variant.model_name,
              "') has no ", what, " '", spec.name, "' of type ", DataTypeName(spec.dtype)));
        }
      }
      return absl::OkStatus();
    };
    BRIGADE_RETURN_IF_ERROR(check("input", inputs, signature->inputs));
    BRIGADE_RETURN_IF_ERROR(check("output", outputs, signature->outputs));
  }
  auto stats = std::make_shared<telemetry::ModelStats>(name, std::to_string(options.version),
                                                       config.max_batch_size());
  BRIGADE_RETURN_IF_ERROR(AttachLabels(options.model_dir, config, &outputs));
  auto shared_policy = std::shared_ptr<const route::RoutingPolicy>(std::move(policy));
  auto loaded = std::make_shared<ModelVersion>(
      ConstructionTag(), options.version, std::move(options.fingerprint), std::move(config),
      std::move(inputs), std::move(outputs), std::move(stats), nullptr, nullptr, shared_policy);
  loaded->metrics_ = options.metrics;
  if (shared_policy->cascade().has_value()) {
    loaded->cascade_ = route::Cascade::Create(shared_policy, options.version,
                                              loaded->config().max_batch_size() > 0, options.clock);
  }
  return loaded;
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::Load(Options options) {
  const std::string name = options.config.name();
  const int64_t version = options.version;
  // Resource exhaustion fails this load, never the process: nothing our own code allocates
  // while loading is unbounded, but a backend's allocations and the system's threads may still
  // be refused.
  try {
    if (options.config.platform() == "ensemble") return LoadEnsemble(std::move(options));
    if (options.config.platform() == "brigade_router") return LoadRouter(std::move(options));
    return LoadOnBackend(std::move(options));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        StrCat("model '", name, "' version ", version, ": out of memory while loading"));
  } catch (const std::system_error& error) {
    return absl::ResourceExhaustedError(
        StrCat("model '", name, "' version ", version,
               ": the system refused a resource while loading: ", error.what()));
  }
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelVersion::LoadOnBackend(Options options) {
  config::ModelConfig config = options.config;
  const std::string& name = config.name();
  if (options.backends == nullptr) return absl::InvalidArgumentError("no backend registry");
  const std::filesystem::path version_dir =
      std::filesystem::path(options.model_dir) / std::to_string(options.version);

  engine::Backend* backend = nullptr;
  if (config.platform().empty() && config.backend().empty()) {
    backend = options.backends->FindByModelFile(version_dir.string());
    if (backend == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("model '", name,
                 "': config.pbtxt names no platform or backend and no known model file "
                 "is in ",
                 version_dir.string()));
    }
  } else {
    BRIGADE_ASSIGN_OR_RETURN(backend, options.backends->Find(config.platform(), config.backend()));
  }
  if (config.platform().empty()) config.set_platform(std::string(backend->platform()));
  if (config.backend().empty()) config.set_backend(std::string(backend->name()));

  const std::string file_name = config.default_model_filename().empty()
                                    ? std::string(backend->default_model_filename())
                                    : config.default_model_filename();
  // A configured name may have directories in it, but must resolve (links and "..") inside the
  // version directory.
  if (!config.default_model_filename().empty()) {
    absl::StatusOr<std::filesystem::path> inside = ResolveInsideDir(version_dir, file_name);
    if (!inside.ok() && !absl::IsNotFound(inside.status())) {
      return absl::Status(inside.status().code(),
                          StrCat("model '", name, "' version ", options.version,
                                 ": default_model_filename ", inside.status().message()));
    }
  }
  const std::filesystem::path model_path =
      file_name.empty() ? version_dir : version_dir / file_name;
  std::error_code error;
  if (!std::filesystem::exists(model_path, error)) {
    return absl::NotFoundError(StrCat("model '", name, "' version ", options.version,
                                      ": model file ", model_path.string(), " not found"));
  }

  const bool batching = config.max_batch_size() > 0;
  engine::ModelLoadOptions load;
  load.model_name = name;
  load.version = options.version;
  load.model_path = model_path.string();
  load.max_batch_size = config.max_batch_size();
  load.declared_inputs = Declared(config.input(), batching);
  load.declared_outputs = Declared(config.output(), batching);
  for (const auto& [key, value] : config.parameters()) load.parameters[key] = value.string_value();
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<engine::Model> model, backend->Load(load));

  const engine::ModelSignature& signature = model->signature();
  BRIGADE_ASSIGN_OR_RETURN(std::vector<IoSpec> inputs, Reconcile(name, "input", signature.inputs,
                                                                 batching, config.mutable_input()));
  BRIGADE_ASSIGN_OR_RETURN(
      std::vector<IoSpec> outputs,
      Reconcile(name, "output", signature.outputs, batching, config.mutable_output()));
  BRIGADE_RETURN_IF_ERROR(AttachLabels(options.model_dir, config, &outputs));

  // Attached steps: the clients' tensors become the step's side; the model keeps its own.
  std::shared_ptr<const AttachedStep> preprocess;
  std::shared_ptr<const AttachedStep> postprocess;
  if (config.has_preprocess() || config.has_postprocess()) {
    absl::StatusOr<engine::Backend*> steps = options.backends->Find("brigade_process", "");
    if (!steps.ok()) {
      return absl::FailedPreconditionError(
          StrCat("model '", name, "': preprocess/postprocess need the brigade_process backend"));
    }
    auto attach = [&](bool pre) -> absl::StatusOr<std::shared_ptr<const AttachedStep>> {
      const config::ModelProcessStep& section = pre ? config.preprocess() : config.postprocess();
      AttachedStep::Options step;
      step.name = StrCat(name, pre ? ".preprocess" : ".postprocess");
      step.backend = *steps;
      step.version_dir = version_dir.string();
      step.max_batch_size = config.max_batch_size();
      step.parameters = {section.parameters().begin(), section.parameters().end()};
      step.inputs = pre ? Declared(section.input(), batching) : Declared(config.output(), batching);
      step.outputs =
          pre ? Declared(config.input(), batching) : Declared(section.output(), batching);
      return AttachedStep::Create(std::move(step));
    };
    if (config.has_preprocess()) {
      for (const IoSpec& input : inputs) {
        if (input.reshaped) {
          return absl::InvalidArgumentError(StrCat("model '", name, "': input '", input.name,
                                                   "' has a reshape, which a preprocess step "
                                                   "cannot feed; reshape in the step instead"));
        }
      }
      BRIGADE_ASSIGN_OR_RETURN(preprocess, attach(true));
      inputs = DeclaredIo(config.preprocess().input(), batching);
    }
    if (config.has_postprocess()) {
      BRIGADE_ASSIGN_OR_RETURN(postprocess, attach(false));
      outputs = DeclaredIo(config.postprocess().output(), batching);
    }
  }

  auto stats = std::make_shared<telemetry::ModelStats>(name, std::to_string(options.version),
                                                       config.max_batch_size());
  scheduler::Scheduler::Options scheduler_options = SchedulerOptions(options, config);
  BRIGADE_ASSIGN_OR_RETURN(WarmupPlan warmup,
                           BuildWarmupPlan(config, signature, options.model_dir));
  for (const std::string& skipped : warmup.skipped) {
    spdlog::warn("model '{}' version {}: warm-up {} skipped", name, options.version, skipped);
  }
  scheduler_options.warmups = std::move(warmup.runs);
  BRIGADE_ASSIGN_OR_RETURN(
      std::unique_ptr<scheduler::Scheduler> scheduler,
      scheduler::Scheduler::Create(std::move(scheduler_options), std::move(model), stats));
  telemetry::ModelRequestMetrics* metrics = options.metrics;
  auto loaded = std::make_shared<ModelVersion>(
      ConstructionTag(), options.version, std::move(options.fingerprint), std::move(config),
      std::move(inputs), std::move(outputs), std::move(stats), std::move(scheduler), nullptr,
      nullptr);
  loaded->metrics_ = metrics;
  loaded->preprocess_ = std::move(preprocess);
  loaded->postprocess_ = std::move(postprocess);
  return loaded;
}

ModelVersion::ModelVersion(ConstructionTag, int64_t version, std::string fingerprint,
                           config::ModelConfig config, std::vector<IoSpec> inputs,
                           std::vector<IoSpec> outputs,
                           std::shared_ptr<telemetry::ModelStats> stats,
                           std::unique_ptr<scheduler::Scheduler> scheduler,
                           std::shared_ptr<const route::Ensemble> ensemble,
                           std::shared_ptr<const route::RoutingPolicy> routing)
    : version_(version),
      fingerprint_(std::move(fingerprint)),
      config_(std::move(config)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      stats_(std::move(stats)),
      scheduler_(std::move(scheduler)),
      ensemble_(std::move(ensemble)),
      routing_(std::move(routing)) {
  BRIGADE_CHECK((scheduler_ != nullptr) + (ensemble_ != nullptr) + (routing_ != nullptr) == 1,
                "a model version runs on a scheduler, is an ensemble or is a router: one of them");
}

ModelVersion::~ModelVersion() { Drain(); }

void ModelVersion::Enqueue(std::unique_ptr<InferRequest> request) {
  BRIGADE_CHECK(scheduler_ != nullptr, "ensembles and routers have no queue of their own");
  scheduler_->Enqueue(std::move(request));
}

std::optional<scheduler::SchedulerSnapshot> ModelVersion::scheduler_snapshot() const {
  if (scheduler_ == nullptr) return std::nullopt;
  return scheduler_->Snapshot();
}

}  // namespace brigade::repository
