#include "route/ensemble_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/strings.h"
#include "protocol/model_config_parser.h"

namespace brigade::route {
namespace {

constexpr int kMaxRetries = 8;
constexpr uint64_t kMaxStepTimeoutUs = uint64_t{24} * 3600 * 1'000'000;
constexpr int kDefaultStepQueueSize = 1024;

template <typename ConfigTensor>
TensorSignature FromConfig(const ConfigTensor& tensor, bool batching) {
  TensorSignature signature;
  signature.name = tensor.name();
  signature.dtype = protocol::FromConfigDataType(tensor.data_type());
  if (batching) signature.shape.push_back(-1);
  for (int64_t dim : tensor.dims()) signature.shape.push_back(dim);
  return signature;
}

// Shapes a producer writes and a reader accepts are compatible when they have the same rank and
// every pair of dimensions is equal or one of them is variable (-1).
bool Compatible(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != -1 && b[i] != -1 && a[i] != b[i]) return false;
  }
  return true;
}

const TensorSignature* FindTensor(const std::vector<TensorSignature>& tensors,
                                  std::string_view name) {
  for (const TensorSignature& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const EnsemblePlan>> EnsemblePlan::Create(
    const config::ModelConfig& config, SignatureLookup lookup) {
  const std::string& name = config.name();
  auto fail = [&](std::string_view what) {
    return absl::InvalidArgumentError(StrCat("ensemble '", name, "': ", what));
  };
  const config::ModelEnsembling& scheduling = config.ensemble_scheduling();
  if (scheduling.step_size() == 0) return fail("ensemble_scheduling has no step");

  auto plan = std::make_shared<EnsemblePlan>();
  plan->name_ = name;
  plan->max_inflight_per_step_ = static_cast<int>(scheduling.max_inflight_requests());
  plan->step_queue_size_ =
      scheduling.step_queue_size() > 0
          ? static_cast<int>(std::min<uint32_t>(scheduling.step_queue_size(), 1u << 20))
          : kDefaultStepQueueSize;
  const bool batching = config.max_batch_size() > 0;

  // Every tensor by name: its id, its declared signature and who writes it (-1: a request input).
  std::map<std::string, int, std::less<>> ids;
  std::vector<TensorSignature> declared;
  std::vector<int> producer;
  // What each step's model expects of each tensor it reads, in PlanStep::inputs order.
  std::vector<std::vector<TensorSignature>> expected(scheduling.step_size());
  auto intern = [&](const std::string& tensor) {
    auto [it, added] = ids.emplace(tensor, static_cast<int>(plan->tensor_names_.size()));
    if (added) {
      plan->tensor_names_.push_back(tensor);
      declared.emplace_back();
      producer.push_back(-2);  // nothing writes it (yet)
    }
    return it->second;
  };
  for (const auto& input : config.input()) {
    const int id = intern(input.name());
    declared[id] = FromConfig(input, batching);
    producer[id] = -1;
    plan->inputs_.emplace_back(input.name(), id);
  }

  for (int index = 0; index < scheduling.step_size(); ++index) {
    const config::ModelEnsembling::Step& step = scheduling.step(index);
    PlanStep out;
    out.model_name = step.model_name();
    out.label = StrCat("step ", index + 1, " (model '", step.model_name(), "')");
    if (step.model_name().empty()) return fail(StrCat("step ", index + 1, " names no model"));
    out.model_version = step.model_version() > 0 ? step.model_version() : -1;
    absl::StatusOr<StepModelSignature> model = lookup(step.model_name(), out.model_version);
    if (!model.ok()) return fail(StrCat(out.label, ": ", model.status().message()));
    if (batching && model->max_batch_size < config.max_batch_size()) {
      return fail(StrCat(out.label, ": the model's max_batch_size ", model->max_batch_size,
                         " is below the ensemble's ", config.max_batch_size()));
    }
    if (!batching && model->max_batch_size > 0) {
      return fail(StrCat(out.label, ": the model batches, so the ensemble needs max_batch_size"));
    }
    if (step.retries() > kMaxRetries) {
      return fail(StrCat(out.label, ": retries ", step.retries(), " exceeds ", kMaxRetries));
    }
    out.retries = static_cast<int>(step.retries());
    if (step.timeout_microseconds() > kMaxStepTimeoutUs) {
      return fail(StrCat(out.label, ": timeout_microseconds exceeds a day"));
    }
    if (step.timeout_microseconds() > 0) {
      out.timeout = absl::Microseconds(static_cast<int64_t>(step.timeout_microseconds()));
    }
    out.fallback_model_name = step.fallback_model_name();
    out.fallback_model_version =
        step.fallback_model_version() > 0 ? step.fallback_model_version() : -1;
    if (!out.fallback_model_name.empty()) {
      // The fallback need not be loaded now (it may come later), but when it is, it must fit.
      absl::StatusOr<StepModelSignature> fallback =
          lookup(out.fallback_model_name, out.fallback_model_version);
      if (fallback.ok()) {
        for (const auto& [input, unused] : step.input_map()) {
          if (FindTensor(fallback->inputs, input) == nullptr) {
            return fail(StrCat(out.label, ": fallback model '", out.fallback_model_name,
                               "' has no input '", input, "'"));
          }
        }
        for (const auto& [output, unused] : step.output_map()) {
          if (FindTensor(fallback->outputs, output) == nullptr) {
            return fail(StrCat(out.label, ": fallback model '", out.fallback_model_name,
                               "' has no output '", output, "'"));
          }
        }
      }
    }

    // Sorted so the plan (and its messages) do not depend on the config map's order.
    std::map<std::string, std::string> input_map(step.input_map().begin(), step.input_map().end());
    std::map<std::string, std::string> output_map(step.output_map().begin(),
                                                  step.output_map().end());
    if (output_map.empty()) return fail(StrCat(out.label, " has no output_map"));
    for (const auto& [model_input, tensor] : input_map) {
      const TensorSignature* signature = FindTensor(model->inputs, model_input);
      if (signature == nullptr) {
        return fail(StrCat(out.label, ": the model has no input '", model_input, "'"));
      }
      const int id = intern(tensor);
      out.inputs.emplace_back(model_input, id);
      expected[index].push_back(*signature);
    }
    for (const TensorSignature& required : model->inputs) {
      if (!required.optional && input_map.find(required.name) == input_map.end()) {
        return fail(
            StrCat(out.label, ": input_map does not give the model's input '", required.name, "'"));
      }
    }
    for (const auto& [model_output, tensor] : output_map) {
      const TensorSignature* signature = FindTensor(model->outputs, model_output);
      if (signature == nullptr) {
        return fail(StrCat(out.label, ": the model has no output '", model_output, "'"));
      }
      const int id = intern(tensor);
      if (producer[id] != -2) {
        return fail(StrCat("tensor '", tensor, "' is written by ", out.label, " and also by ",
                           producer[id] == -1 ? std::string("the request (an ensemble input)")
                                              : plan->steps_[producer[id]].label));
      }
      producer[id] = index;
      declared[id] = *signature;
      declared[id].name = tensor;
      out.outputs.emplace_back(model_output, id);
    }
    plan->steps_.push_back(std::move(out));
  }

  // Every read has a writer whose datatype and shape the reader accepts; a step's dependencies
  // are the steps writing what it reads (the request's inputs are there from the start).
  plan->consumers_.resize(plan->tensor_names_.size());
  std::vector<std::vector<int>> downstream(plan->steps_.size());
  std::vector<int> pending(plan->steps_.size(), 0);
  for (size_t index = 0; index < plan->steps_.size(); ++index) {
    PlanStep& step = plan->steps_[index];
    std::set<int> from_steps;
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const auto& [model_input, id] = step.inputs[i];
      const std::string& tensor = plan->tensor_names_[id];
      if (producer[id] == -2) {
        return fail(StrCat(step.label, " reads tensor '", tensor,
                           "', which is neither an ensemble input nor written by a step"));
      }
      const TensorSignature& want = expected[index][i];
      const TensorSignature& have = declared[id];
      if (want.dtype != have.dtype) {
        return fail(StrCat(step.label, ": input '", model_input, "' is ", DataTypeName(want.dtype),
                           " but tensor '", tensor, "' is ", DataTypeName(have.dtype)));
      }
      if (!Compatible(want.shape, have.shape)) {
        return fail(StrCat(step.label, ": input '", model_input, "' has shape ",
                           ShapeToString(want.shape), " but tensor '", tensor, "' has shape ",
                           ShapeToString(have.shape)));
      }
      std::vector<int>& readers = plan->consumers_[id];
      if (std::find(readers.begin(), readers.end(), static_cast<int>(index)) == readers.end()) {
        readers.push_back(static_cast<int>(index));
      }
      if (producer[id] >= 0) from_steps.insert(producer[id]);
    }
    // A step becomes ready when every tensor it reads from other steps exists.
    std::set<int> step_tensors;
    for (const auto& [unused, id] : step.inputs) {
      if (producer[id] >= 0) step_tensors.insert(id);
    }
    step.dependency_count = static_cast<int>(step_tensors.size());
    if (step.dependency_count == 0) plan->initial_steps_.push_back(static_cast<int>(index));
    for (int from : from_steps) downstream[from].push_back(static_cast<int>(index));
    pending[index] = static_cast<int>(from_steps.size());
  }

  // Kahn's order: whatever is never released sits on a cycle.
  std::vector<int> ready = plan->initial_steps_;
  size_t ordered = 0;
  while (!ready.empty()) {
    const int step = ready.back();
    ready.pop_back();
    ++ordered;
    for (int next : downstream[step]) {
      if (--pending[next] == 0) ready.push_back(next);
    }
  }
  if (ordered != plan->steps_.size()) {
    for (size_t index = 0; index < plan->steps_.size(); ++index) {
      if (pending[index] > 0) {
        return fail(StrCat("the steps form a cycle through ", plan->steps_[index].label));
      }
    }
  }

  for (const auto& output : config.output()) {
    auto it = ids.find(output.name());
    if (it == ids.end() || producer[it->second] < 0) {
      return fail(StrCat("output '", output.name(), "' is written by no step"));
    }
    const TensorSignature want = FromConfig(output, batching);
    const TensorSignature& have = declared[it->second];
    if (want.dtype != have.dtype || !Compatible(want.shape, have.shape)) {
      return fail(StrCat("output '", output.name(), "' is declared ", DataTypeName(want.dtype), " ",
                         ShapeToString(want.shape), " but ",
                         plan->steps_[producer[it->second]].label, " writes ",
                         DataTypeName(have.dtype), " ", ShapeToString(have.shape)));
    }
    plan->outputs_.emplace_back(output.name(), it->second);
  }
  return std::shared_ptr<const EnsemblePlan>(std::move(plan));
}

}  // namespace brigade::route
