#include "route/ensemble_plan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"
#include "protocol/model_config_parser.h"
#include "route/control_step.h"

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
  plan->batching_ = batching;

  // Every tensor by name: its id, its declared signature and who writes it (-1: a request input).
  std::map<std::string, int, std::less<>> ids;
  std::vector<TensorSignature> declared;
  std::vector<int> producer;
  // What each step's model expects of each tensor it reads, in PlanStep::inputs order (kInvalid:
  // a switch's or an in-server fusion's input, checked on its own).
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
  // Steps by their Brigade `name`, for the branches that list them.
  std::map<std::string, int, std::less<>> named;
  for (int index = 0; index < scheduling.step_size(); ++index) {
    const std::string& step_name = scheduling.step(index).name();
    if (step_name.empty()) continue;
    auto [it, added] = named.emplace(step_name, index);
    if (!added) {
      return fail(StrCat("steps ", it->second + 1, " and ", index + 1, " are both named '",
                         step_name, "'"));
    }
  }
  auto writes = [&](PlanStep& out, int index, const std::string& tensor) -> absl::Status {
    const int id = intern(tensor);
    if (producer[id] != -2) {
      return fail(StrCat("tensor '", tensor, "' is written by ", out.label, " and also by ",
                         producer[id] == -1 ? std::string("the request (an ensemble input)")
                                            : plan->steps_[producer[id]].label));
    }
    producer[id] = index;
    return absl::OkStatus();
  };

  for (int index = 0; index < scheduling.step_size(); ++index) {
    const config::ModelEnsembling::Step& step = scheduling.step(index);
    PlanStep out;
    out.model_name = step.model_name();
    const bool in_server_fusion =
        step.has_fusion() && step.fusion().op() != config::ModelEnsembling::StepFusion::MODEL;
    if (step.has_switch_() || in_server_fusion) {
      const std::string_view what = step.has_switch_() ? "switch" : "fusion";
      out.kind = step.has_switch_() ? StepKind::kSwitch : StepKind::kFusion;
      out.label = step.name().empty()
                      ? StrCat("step ", index + 1, " (", what, ")")
                      : StrCat("step ", index + 1, " (", what, " '", step.name(), "')");
      if (step.has_switch_() && step.has_fusion()) {
        return fail(StrCat(out.label, " is both a switch and a fusion"));
      }
      if (!step.model_name().empty() || step.model_version() > 0 || !step.input_map().empty() ||
          !step.output_map().empty() || !step.fallback_model_name().empty() || step.retries() > 0 ||
          step.timeout_microseconds() > 0) {
        return fail(StrCat(out.label, " runs no model: it takes no model_name, model_version, ",
                           "input_map, output_map, fallback_model_name, retries or ",
                           "timeout_microseconds"));
      }
      if (step.has_switch_()) {
        const config::ModelEnsembling::StepSwitch& choice = step.switch_();
        PlanSwitch& plan_switch = out.switch_plan;
        if (choice.parameter().empty() == choice.tensor().empty()) {
          return fail(StrCat(out.label, " reads one of parameter or tensor"));
        }
        plan_switch.parameter = choice.parameter();
        plan_switch.argmax = choice.select() == config::ModelEnsembling::StepSwitch::ARGMAX;
        if (plan_switch.argmax && !choice.parameter().empty()) {
          return fail(StrCat(out.label, ": ARGMAX reads a tensor, not a parameter"));
        }
        if (!choice.tensor().empty()) {
          plan_switch.tensor = intern(choice.tensor());
          out.inputs.emplace_back("", plan_switch.tensor);
          expected[index].emplace_back();
        }
        if (choice.branch_size() == 0) return fail(StrCat(out.label, " has no branch"));
        std::map<std::string, int, std::less<>> values;
        for (int b = 0; b < choice.branch_size(); ++b) {
          const auto& branch = choice.branch(b);
          std::string branch_name =
              branch.name().empty() ? StrCat("branch ", b + 1) : branch.name();
          for (int other = 0; other < b; ++other) {
            if (plan_switch.branch_names[other] == branch_name) {
              return fail(StrCat(out.label, ": two branches are called '", branch_name, "'"));
            }
          }
          for (const std::string& value : branch.value()) {
            auto [it, added] = values.emplace(value, b);
            if (!added) {
              return fail(StrCat(out.label, ": value '", value, "' is listed by branch '",
                                 plan_switch.branch_names[it->second], "' and by branch '",
                                 branch_name, "'"));
            }
            plan_switch.values.emplace_back(value, b);
          }
          plan_switch.branch_names.push_back(std::move(branch_name));
          plan_switch.branch_steps.emplace_back();
        }
        for (int b = 0; b < choice.branch_size(); ++b) {
          // A branch nothing takes would be config that silently never runs.
          if (choice.branch(b).value_size() == 0 &&
              choice.default_branch() != plan_switch.branch_names[b]) {
            return fail(StrCat(out.label, ": branch '", plan_switch.branch_names[b],
                               "' lists no value and is not the default_branch"));
          }
        }
        if (!choice.default_branch().empty()) {
          for (size_t b = 0; b < plan_switch.branch_names.size(); ++b) {
            if (plan_switch.branch_names[b] == choice.default_branch()) {
              plan_switch.default_branch = static_cast<int>(b);
            }
          }
          if (plan_switch.default_branch < 0) {
            return fail(StrCat(out.label, ": default_branch '", choice.default_branch(),
                               "' is no branch's name"));
          }
        }
      } else {
        const config::ModelEnsembling::StepFusion& fusion = step.fusion();
        out.fuses = true;
        out.fusion.op = fusion.op();
        out.fusion.axis = fusion.axis();
        out.fusion.weights.assign(fusion.weight().begin(), fusion.weight().end());
        if (fusion.input_size() == 0) return fail(StrCat(out.label, " reads no tensor"));
        if (fusion.axis() != 0 && fusion.op() != config::ModelEnsembling::StepFusion::CONCAT) {
          return fail(StrCat(out.label, ": axis is for CONCAT, not ",
                             config::ModelEnsembling::StepFusion::Op_Name(fusion.op())));
        }
        if (fusion.output().empty()) return fail(StrCat(out.label, " writes no output"));
        std::set<std::string, std::less<>> seen;
        for (const std::string& tensor : fusion.input()) {
          if (!seen.insert(tensor).second) {
            return fail(StrCat(out.label, " reads tensor '", tensor, "' twice"));
          }
          out.inputs.emplace_back("", intern(tensor));
          expected[index].emplace_back();
        }
        BRIGADE_RETURN_IF_ERROR(writes(out, index, fusion.output()));
        out.outputs.emplace_back("", ids.find(fusion.output())->second);
      }
      plan->steps_.push_back(std::move(out));
      continue;
    }

    out.label = StrCat("step ", index + 1, " (model '", step.model_name(), "')");
    if (step.model_name().empty()) return fail(StrCat("step ", index + 1, " names no model"));
    if (step.has_fusion()) {
      // A MODEL fusion: the step's own maps say what it reads and writes.
      out.fuses = true;
      out.fusion.op = config::ModelEnsembling::StepFusion::MODEL;
      const auto& fusion = step.fusion();
      if (fusion.input_size() > 0 || !fusion.output().empty() || fusion.weight_size() > 0) {
        return fail(StrCat(out.label, ": a MODEL fusion reads and writes through input_map and ",
                           "output_map, not fusion's input, output or weight"));
      }
    }
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
      BRIGADE_RETURN_IF_ERROR(writes(out, index, tensor));
      const int id = ids.find(tensor)->second;
      declared[id] = *signature;
      declared[id].name = tensor;
      out.outputs.emplace_back(model_output, id);
    }
    plan->steps_.push_back(std::move(out));
  }

  // The steps each branch lists: they wait for their switch's decision.
  std::vector<std::vector<int>> downstream(plan->steps_.size());
  std::vector<int> pending(plan->steps_.size(), 0);
  for (size_t index = 0; index < plan->steps_.size(); ++index) {
    if (plan->steps_[index].kind != StepKind::kSwitch) continue;
    const config::ModelEnsembling::StepSwitch& choice = scheduling.step(index).switch_();
    PlanSwitch& plan_switch = plan->steps_[index].switch_plan;
    for (int b = 0; b < choice.branch_size(); ++b) {
      const std::string where =
          StrCat("branch '", plan_switch.branch_names[b], "' of ", plan->steps_[index].label);
      for (const std::string& step_name : choice.branch(b).step()) {
        auto it = named.find(step_name);
        if (it == named.end()) {
          return fail(StrCat(where, " lists step '", step_name, "', but no step has that name"));
        }
        PlanStep& member = plan->steps_[it->second];
        if (it->second == static_cast<int>(index)) {
          return fail(StrCat(where, " lists the switch itself: the steps form a cycle through ",
                             member.label));
        }
        if (member.switch_step >= 0) {
          return fail(
              StrCat(where, " lists ", member.label, ", which branch '",
                     plan->steps_[member.switch_step].switch_plan.branch_names[member.branch],
                     "' of ", plan->steps_[member.switch_step].label, " lists too"));
        }
        member.switch_step = static_cast<int>(index);
        member.branch = b;
        ++member.dependency_count;
        ++pending[it->second];
        downstream[index].push_back(it->second);
        plan_switch.branch_steps[b].push_back(it->second);
      }
    }
  }

  // Every read has a writer; a step's dependencies are the steps writing what it reads (the
  // request's inputs are there from the start).
  plan->consumers_.resize(plan->tensor_names_.size());
  for (size_t index = 0; index < plan->steps_.size(); ++index) {
    PlanStep& step = plan->steps_[index];
    std::set<int> from_steps;
    std::set<int> step_tensors;
    for (const auto& [unused, id] : step.inputs) {
      if (producer[id] == -2) {
        return fail(StrCat(step.label, " reads tensor '", plan->tensor_names_[id],
                           "', which is neither an ensemble input nor written by a step"));
      }
      std::vector<int>& readers = plan->consumers_[id];
      if (std::find(readers.begin(), readers.end(), static_cast<int>(index)) == readers.end()) {
        readers.push_back(static_cast<int>(index));
      }
      if (producer[id] >= 0) {
        from_steps.insert(producer[id]);
        step_tensors.insert(id);
      }
    }
    // A step becomes ready when every tensor it reads from other steps is settled.
    step.dependency_count += static_cast<int>(step_tensors.size());
    if (step.dependency_count == 0) plan->initial_steps_.push_back(static_cast<int>(index));
    for (int from : from_steps) downstream[from].push_back(static_cast<int>(index));
    pending[index] += static_cast<int>(from_steps.size());
  }

  // Kahn's order: whatever is never released sits on a cycle.
  std::vector<int> ready = plan->initial_steps_;
  std::vector<int> order;
  while (!ready.empty()) {
    const int step = ready.back();
    ready.pop_back();
    order.push_back(step);
    for (int next : downstream[step]) {
      if (--pending[next] == 0) ready.push_back(next);
    }
  }
  if (order.size() != plan->steps_.size()) {
    for (size_t index = 0; index < plan->steps_.size(); ++index) {
      if (pending[index] > 0) {
        return fail(StrCat("the steps form a cycle through ", plan->steps_[index].label));
      }
    }
  }

  // In dependency order, so a fusion's output is known before its readers are checked: the
  // datatype and shape each reader accepts, and the condition (the branch) under which each
  // step runs. Condition 0 always holds; the others are switch branches, each under its switch's.
  struct Condition {
    int parent = -1;
    int depth = 0;
    std::string label;
  };
  std::vector<Condition> conditions = {Condition{-1, 0, "every request"}};
  // Per condition, the switch step and branch it is (-1, -1: condition 0).
  std::vector<std::pair<int, int>> condition_branch = {{-1, -1}};
  std::vector<std::vector<int>> branch_condition(plan->steps_.size());
  std::vector<std::vector<int>> switches_under(1);  // per condition, the switches running under it
  std::vector<int> step_condition(plan->steps_.size(), 0);
  auto tensor_condition = [&](int id) {
    return producer[id] >= 0 ? step_condition[producer[id]] : 0;
  };
  auto is_ancestor = [&](int ancestor, int of) {
    while (conditions[of].depth > conditions[ancestor].depth) of = conditions[of].parent;
    return of == ancestor;
  };
  // The first branch under `root` where none of `have` exists ("" when they cover every way).
  std::function<std::string(int, const std::set<int>&)> uncovered = [&](int root,
                                                                        const std::set<int>& have) {
    if (have.count(root) > 0) return std::string();
    std::string missing = conditions[root].label;
    for (int choice : switches_under[root]) {
      std::string first;
      for (int branch : branch_condition[choice]) {
        first = uncovered(branch, have);
        if (!first.empty()) break;
      }
      if (first.empty()) return std::string();
      missing = first;
    }
    return missing;
  };
  for (int index : order) {
    PlanStep& step = plan->steps_[index];
    // The condition: the deepest of the step's branch and those of what it reads; a step other
    // than a fusion runs only where all of them hold, so they must lie on one path of the tree.
    std::vector<std::pair<int, std::string>> reads;  // condition, and what brings it
    if (step.switch_step >= 0) {
      reads.emplace_back(branch_condition[step.switch_step][step.branch], "its branch");
    }
    std::set<int> fused;
    for (const auto& [unused, id] : step.inputs) {
      if (step.fuses) {
        fused.insert(tensor_condition(id));
        continue;
      }
      reads.emplace_back(tensor_condition(id), StrCat("tensor '", plan->tensor_names_[id], "'"));
    }
    if (step.fuses && !fused.empty()) {
      int common = *fused.begin();
      for (int condition : fused) {
        while (!is_ancestor(common, condition)) common = conditions[common].parent;
      }
      const std::string missing = uncovered(common, fused);
      if (!missing.empty()) {
        return fail(StrCat(step.label, ": none of its inputs exists when ", missing, " is taken"));
      }
      // A switch that answers at all takes one of its branches: inputs covering every branch of
      // a switch exist whenever the switch runs (a switch of one branch included).
      while (common != 0 && uncovered(conditions[common].parent, fused).empty()) {
        common = conditions[common].parent;
      }
      reads.emplace_back(common, "its inputs");
    }
    int deepest = 0;
    for (const auto& [condition, unused] : reads) {
      if (conditions[condition].depth > conditions[deepest].depth) deepest = condition;
    }
    for (const auto& [condition, why] : reads) {
      if (!is_ancestor(condition, deepest)) {
        return fail(StrCat(step.label, " reads what exists only when ", conditions[condition].label,
                           " is taken (", why, ") and what exists only when ",
                           conditions[deepest].label,
                           " is taken: only a fusion step joins branches"));
      }
    }
    step_condition[index] = deepest;
    step.condition_switch = condition_branch[deepest].first;
    step.condition_branch = condition_branch[deepest].second;

    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const auto& [model_input, id] = step.inputs[i];
      const TensorSignature& want = expected[index][i];
      const TensorSignature& have = declared[id];
      const std::string& tensor = plan->tensor_names_[id];
      if (want.dtype == DataType::kInvalid) continue;  // a switch's or an in-server fusion's
      if (want.dtype != have.dtype) {
        return fail(StrCat(step.label, ": input '", model_input, "' is ", DataTypeName(want.dtype),
                           " but tensor '", tensor, "' is ", DataTypeName(have.dtype)));
      }
      if (!Compatible(want.shape, have.shape)) {
        return fail(StrCat(step.label, ": input '", model_input, "' has shape ",
                           ShapeToString(want.shape), " but tensor '", tensor, "' has shape ",
                           ShapeToString(have.shape)));
      }
      if (step.fuses && tensor_condition(id) != deepest && !want.optional) {
        return fail(StrCat(step.label, ": input '", model_input, "' reads tensor '", tensor,
                           "', which exists only when ", conditions[tensor_condition(id)].label,
                           " is taken, so the model must declare it optional"));
      }
    }
    if (step.kind == StepKind::kSwitch) {
      switches_under[deepest].push_back(index);
      for (size_t b = 0; b < step.switch_plan.branch_names.size(); ++b) {
        const std::string& branch = step.switch_plan.branch_names[b];
        condition_branch.emplace_back(index, static_cast<int>(b));
        branch_condition[index].push_back(static_cast<int>(conditions.size()));
        conditions.push_back(Condition{deepest, conditions[deepest].depth + 1,
                                       StrCat("branch '", branch, "' of ", step.label)});
        switches_under.emplace_back();
      }
      if (step.switch_plan.tensor >= 0) {
        const TensorSignature& have = declared[step.switch_plan.tensor];
        const std::string& tensor = plan->tensor_names_[step.switch_plan.tensor];
        int64_t per_row = 1;
        for (size_t d = batching ? 1 : 0; d < have.shape.size(); ++d) {
          per_row = have.shape[d] < 0 || per_row < 0 ? -1 : per_row * have.shape[d];
        }
        if (step.switch_plan.argmax
                ? (have.dtype != DataType::kFp32 && have.dtype != DataType::kFp64 &&
                   have.dtype != DataType::kInt32 && have.dtype != DataType::kInt64 &&
                   have.dtype != DataType::kUint8)
                : (have.dtype == DataType::kFp16 || have.dtype == DataType::kBf16)) {
          return fail(StrCat(step.label, ": it cannot read ", DataTypeName(have.dtype), " tensor '",
                             tensor, "' with select ",
                             step.switch_plan.argmax ? "ARGMAX" : "VALUE"));
        }
        if (!step.switch_plan.argmax && per_row > 1) {
          return fail(StrCat(step.label, ": tensor '", tensor, "' has shape ",
                             ShapeToString(have.shape), ", ", per_row,
                             " values per row; VALUE reads one (ARGMAX reads scores)"));
        }
      }
    }
    if (step.kind == StepKind::kFusion) {
      std::vector<TensorSignature> inputs;
      for (const auto& [unused, id] : step.inputs) {
        inputs.push_back(declared[id]);
        inputs.back().name = plan->tensor_names_[id];
      }
      int axis = step.fusion.axis;
      if (axis == 0) axis = static_cast<int>(inputs[0].shape.size()) - 1;
      absl::StatusOr<TensorSignature> written =
          FusionSignature(step.fusion.op, inputs, axis, step.fusion.weights);
      if (!written.ok()) return fail(StrCat(step.label, ": ", written.status().message()));
      step.fusion.axis = axis;
      const int id = step.outputs[0].second;
      declared[id] = *std::move(written);
      declared[id].name = plan->tensor_names_[id];
    }
  }

  for (const auto& output : config.output()) {
    auto it = ids.find(output.name());
    if (it == ids.end() || producer[it->second] < 0) {
      return fail(StrCat("output '", output.name(), "' is written by no step"));
    }
    const TensorSignature want = FromConfig(output, batching);
    const TensorSignature& have = declared[it->second];
    const PlanStep& writer = plan->steps_[producer[it->second]];
    if (want.dtype != have.dtype || !Compatible(want.shape, have.shape)) {
      return fail(StrCat("output '", output.name(), "' is declared ", DataTypeName(want.dtype), " ",
                         ShapeToString(want.shape), " but ", writer.label, " writes ",
                         DataTypeName(have.dtype), " ", ShapeToString(have.shape)));
    }
    const int condition = step_condition[producer[it->second]];
    if (condition != 0) {
      return fail(StrCat("output '", output.name(), "' exists only when ",
                         conditions[condition].label, " is taken (", writer.label,
                         " writes it): a fusion step can join the branches"));
    }
    plan->outputs_.emplace_back(output.name(), it->second);
  }
  plan->producer_ = std::move(producer);
  for (const auto& step : scheduling.step()) plan->step_names_.push_back(step.name());
  return std::shared_ptr<const EnsemblePlan>(std::move(plan));
}

}  // namespace brigade::route
