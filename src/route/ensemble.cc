#include "route/ensemble.h"

#include <optional>
#include <utility>

#include "core/check.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "route/control_step.h"
#include "route/step_request.h"

namespace brigade::route {

// One ensemble request on its way through the plan. Shared by the callbacks of its step
// requests; the last of them to finish releases it.
class EnsembleRun : public std::enable_shared_from_this<EnsembleRun> {
 public:
  EnsembleRun(std::shared_ptr<const Ensemble> ensemble, std::unique_ptr<InferRequest> request,
              StepRunner* runner)
      : ensemble_(std::move(ensemble)),
        plan_(*ensemble_->plan_),
        runner_(runner),
        request_(std::move(request)),
        values_(plan_.tensor_count()),
        waiting_for_(plan_.steps().size()),
        steps_left_(static_cast<int>(plan_.steps().size())),
        taken_(plan_.steps().size(), -1),
        attempts_(plan_.steps().size(), 0),
        on_fallback_(plan_.steps().size(), 0) {
    for (size_t i = 0; i < plan_.steps().size(); ++i) {
      waiting_for_[i] = plan_.steps()[i].dependency_count;
    }
    steps_.reserve(plan_.steps().size());
    // The validator put the inputs in the ensemble's order.
    for (size_t i = 0; i < plan_.inputs().size() && i < request_->inputs.size(); ++i) {
      values_[plan_.inputs()[i].second] = request_->inputs[i].tensor;
    }
  }

  void Start() {
    request_->clock.Mark(Stage::kInferStart, ensemble_->clock_->NowNs());
    Advance(plan_.initial_steps());
  }

 private:
  // Runs or skips each step of `ready` (everything it waits for is settled), and in turn those
  // that makes ready. Model steps are sent; switches and in-server fusions run here, off the lock.
  void Advance(std::vector<int> ready) {
    // In the order they became ready (independent model steps are sent in config order).
    for (size_t next = 0; next < ready.size(); ++next) {
      const int step = ready[next];
      const PlanStep& plan_step = plan_.steps()[step];
      bool skipped = false;
      bool done = false;
      std::vector<Tensor> present;  // what a switch or an in-server fusion reads that exists
      std::vector<float> weights;
      {
        absl::MutexLock lock(&mu_);
        if (finished_) return;
        skipped = SkippedLocked(step);
        if (skipped) {
          // Nothing it writes will exist, and a skipped switch takes no branch.
          for (const auto& [unused, id] : plan_step.outputs) SettleLocked(id, Tensor(), ready);
          if (plan_step.kind == StepKind::kSwitch) DecideLocked(step, -1, ready);
          done = --steps_left_ == 0;
          if (done) finished_ = true;
        } else if (plan_step.kind != StepKind::kModel) {
          for (size_t i = 0; i < plan_step.inputs.size(); ++i) {
            const Tensor& value = values_[plan_step.inputs[i].second];
            if (value.empty() && plan_step.kind == StepKind::kFusion) continue;
            present.push_back(value);
            if (!plan_step.fusion.weights.empty()) weights.push_back(plan_step.fusion.weights[i]);
          }
        }
      }
      if (skipped) {
        if (done) Finish();
        continue;
      }
      if (plan_step.kind == StepKind::kModel) {
        Send(step);
        continue;
      }
      StepRecord record;
      record.step = plan_step.label;
      record.clock.Mark(Stage::kInferStart, ensemble_->clock_->NowNs());
      absl::StatusOr<int> branch = -1;
      absl::StatusOr<Tensor> fused;
      if (plan_step.kind == StepKind::kSwitch) {
        bool by_default = false;
        branch = Decide(plan_step, present, &by_default);
        if (branch.ok()) {
          record.branch = plan_step.switch_plan.branch_names[*branch];
          ensemble_->CountBranch(step, *branch, by_default);
        }
      } else {
        fused = Fuse(plan_step.fusion.op, present, plan_step.fusion.axis, weights);
      }
      record.clock.Mark(Stage::kInferEnd, ensemble_->clock_->NowNs());
      const absl::Status status =
          plan_step.kind == StepKind::kSwitch ? branch.status() : fused.status();
      if (!status.ok()) {
        Fail(step, status);
        return;
      }
      {
        absl::MutexLock lock(&mu_);
        if (finished_) return;
        steps_.push_back(std::move(record));
        if (plan_step.kind == StepKind::kSwitch) {
          DecideLocked(step, *branch, ready);
        } else {
          SettleLocked(plan_step.outputs[0].second, *std::move(fused), ready);
        }
        done = --steps_left_ == 0;
        if (done) finished_ = true;
      }
      if (done) Finish();
    }
  }

  // A step does not run when its branch is not taken, when a step it reads did not run (unless
  // it is a fusion), or when none of a fusion's inputs exists.
  bool SkippedLocked(int step) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const PlanStep& plan_step = plan_.steps()[step];
    if (plan_step.switch_step >= 0 && taken_[plan_step.switch_step] != plan_step.branch) {
      return true;
    }
    for (const auto& [unused, id] : plan_step.inputs) {
      const bool exists = !values_[id].empty();
      if (plan_step.fuses && exists) return false;
      if (!plan_step.fuses && !exists && plan_.producer(id) >= 0) return true;
    }
    return plan_step.fuses;
  }

  // Tensor `id` is written (or, empty, known never to be): its readers wait for one less.
  void SettleLocked(int id, Tensor value, std::vector<int>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    values_[id] = std::move(value);
    for (int reader : plan_.consumers(id)) {
      if (--waiting_for_[reader] == 0) ready.push_back(reader);
    }
  }

  // Switch `step` took `branch` (-1: none): the steps of every branch stop waiting for it.
  void DecideLocked(int step, int branch, std::vector<int>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    taken_[step] = branch;
    for (const std::vector<int>& members : plan_.steps()[step].switch_plan.branch_steps) {
      for (int member : members) {
        if (--waiting_for_[member] == 0) ready.push_back(member);
      }
    }
  }

  // The branch a switch takes for this request. `present` is its tensor, when it reads one.
  absl::StatusOr<int> Decide(const PlanStep& plan_step, const std::vector<Tensor>& present,
                             bool* by_default) const {
    const PlanSwitch& choice = plan_step.switch_plan;
    std::optional<std::string> value;
    std::string source;
    if (!choice.parameter.empty()) {
      value = SwitchParameterText(request_->parameters, choice.parameter);
      source = StrCat("parameter '", choice.parameter, "'");
    } else {
      const std::string& tensor = plan_.tensor_name(choice.tensor);
      source = StrCat("tensor '", tensor, "'");
      if (!present.empty() && !present[0].empty()) {
        BRIGADE_ASSIGN_OR_RETURN(
            value, SwitchTensorValue(present[0], tensor, choice.argmax, plan_.batching()));
      }
    }
    if (value.has_value()) {
      for (const auto& [listed, branch] : choice.values) {
        if (listed == *value) return branch;
      }
    }
    if (choice.default_branch >= 0) {
      *by_default = true;
      return choice.default_branch;
    }
    if (!value.has_value()) {
      return absl::InvalidArgumentError(
          StrCat("the request has no ", source, ", and the switch has no default_branch"));
    }
    return absl::InvalidArgumentError(StrCat(source, " is '", *value,
                                             "', which no branch lists, and the switch has no "
                                             "default_branch"));
  }

  // Admits `step` through its gate and sends it (now or when the gate lets it through).
  void Send(int step) {
    if (plan_.max_inflight_per_step() <= 0) {
      Dispatch(step);
      return;
    }
    if (!ensemble_->Admit(step, [self = shared_from_this(), step] { self->Dispatch(step); })) {
      Fail(step, absl::UnavailableError(
                     StrCat("its wait queue is full (", plan_.step_queue_size(), " requests)")));
    }
  }

  // Builds the step's request from the tensors it reads and hands it to the runner.
  void Dispatch(int step) {
    const PlanStep& plan_step = plan_.steps()[step];
    const int64_t now = ensemble_->clock_->NowNs();
    absl::Status stop;
    if (request_->cancelled()) {
      stop = absl::CancelledError("the request was cancelled");
    } else if (request_->deadline.ExpiredAt(now)) {
      stop = absl::DeadlineExceededError("the request's deadline passed before the step ran");
    }
    bool send = false;
    std::vector<InferInput> inputs;
    {
      absl::MutexLock lock(&mu_);
      // Nothing more is sent once the request is settled or cannot be served any more.
      send = !finished_ && stop.ok();
      // An optional ensemble input the request left out is left out of the step as well.
      for (const auto& [model_input, id] : plan_step.inputs) {
        if (send && !values_[id].empty()) {
          inputs.push_back(InferInput{model_input, values_[id], {}});
        }
      }
    }
    if (!send) {
      Released(step);
      if (!stop.ok()) Fail(step, stop);
      return;
    }
    const bool fallback = on_fallback_[step];
    std::unique_ptr<InferRequest> sub =
        NewStepRequest(*request_, fallback ? plan_step.fallback_model_name : plan_step.model_name,
                       fallback ? plan_step.fallback_model_version : plan_step.model_version, now);
    sub->inputs = std::move(inputs);
    if (plan_step.timeout != absl::InfiniteDuration()) {
      sub->deadline = Deadline::Earliest(
          sub->deadline, Deadline::AtNs(now + absl::ToInt64Nanoseconds(plan_step.timeout)));
    }
    for (const auto& [model_output, unused] : plan_step.outputs) {
      sub->outputs.push_back(RequestedOutput{model_output, {}, false});
    }
    sub->on_complete = [self = shared_from_this(), step](absl::StatusOr<InferResponse> result) {
      self->OnStepDone(step, std::move(result));
    };
    runner_->RunStep(std::move(sub));
  }

  static bool Retryable(const absl::Status& status) {
    return absl::IsUnavailable(status) || absl::IsResourceExhausted(status) ||
           absl::IsDeadlineExceeded(status);
  }

  void OnStepDone(int step, absl::StatusOr<InferResponse> result) {
    const PlanStep& plan_step = plan_.steps()[step];
    if (!result.ok()) {
      if (Retryable(result.status()) && attempts_[step] < plan_step.retries) {
        ++attempts_[step];
        Dispatch(step);
        return;
      }
      if (!plan_step.fallback_model_name.empty() && !on_fallback_[step]) {
        on_fallback_[step] = 1;
        Dispatch(step);
        return;
      }
      Released(step);
      Fail(step, result.status());
      return;
    }
    Released(step);
    std::vector<int> ready;
    bool done = false;
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      steps_.push_back(StepRecord{result->model_name, result->model_version, result->clock,
                                  result->execution, plan_step.label, ""});
      for (const auto& [model_output, id] : plan_step.outputs) {
        const InferOutput* output = result->FindOutput(model_output);
        // The step's model answered without an output it was asked for: it broke its contract.
        BRIGADE_CHECK(output != nullptr, "a step's answer lacks an output the step asked for");
        SettleLocked(id, output->tensor, ready);
      }
      done = --steps_left_ == 0;
      if (done) finished_ = true;
    }
    if (done) {
      Finish();
      return;
    }
    Advance(std::move(ready));
  }

  // Lets the next waiting request of `step` through its gate.
  void Released(int step) {
    if (plan_.max_inflight_per_step() > 0) ensemble_->Release(step);
  }

  void Fail(int step, const absl::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      finished_ = true;
    }
    request_->Complete(
        absl::Status(status.code(), StrCat("ensemble '", plan_.name(), "' ",
                                           plan_.steps()[step].label, ": ", status.message())));
  }

  // Every step is done (finished_ is set): answers with the outputs the request asked for.
  void Finish() {
    InferResponse response;
    response.model_name = plan_.name();
    response.model_version = ensemble_->version_;
    response.id = request_->id;
    {
      // Nothing writes values_ any more; the lock is for the analysis, and it is uncontended.
      absl::MutexLock lock(&mu_);
      auto add = [&](const std::string& name, int id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        response.outputs.push_back(InferOutput{name, values_[id], {}});
      };
      if (request_->outputs.empty()) {
        for (const auto& [name, id] : plan_.outputs()) add(name, id);
      } else {
        for (const RequestedOutput& wanted : request_->outputs) {
          for (const auto& [name, id] : plan_.outputs()) {
            if (name == wanted.name) add(name, id);
          }
        }
      }
    }
    const int64_t now = ensemble_->clock_->NowNs();
    request_->clock.Mark(Stage::kInferEnd, now);
    request_->clock.Mark(Stage::kPostprocessed, now);
    response.clock = request_->clock;
    {
      absl::MutexLock lock(&mu_);
      response.steps = std::move(steps_);
    }
    request_->Complete(std::move(response));
  }

  const std::shared_ptr<const Ensemble> ensemble_;
  const EnsemblePlan& plan_;
  StepRunner* const runner_;
  // Answered once, by Fail() or Finish(), whoever sets finished_ first.
  const std::unique_ptr<InferRequest> request_;

  absl::Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Tensor> values_ ABSL_GUARDED_BY(mu_);
  std::vector<int> waiting_for_ ABSL_GUARDED_BY(mu_);
  int steps_left_ ABSL_GUARDED_BY(mu_);
  // Each finished step, for the trace.
  std::vector<StepRecord> steps_ ABSL_GUARDED_BY(mu_);
  // Per switch step, the branch it took (-1: none yet, or it did not run).
  std::vector<int> taken_ ABSL_GUARDED_BY(mu_);
  // Only the thread handling a step's answer touches that step's entries, and a step has at
  // most one request in flight, so these need no lock.
  std::vector<int> attempts_;
  std::vector<uint8_t> on_fallback_;  // not vector<bool>: steps write theirs concurrently
};

std::shared_ptr<Ensemble> Ensemble::Create(std::shared_ptr<const EnsemblePlan> plan,
                                           int64_t version, const Clock* clock) {
  BRIGADE_CHECK(plan != nullptr && clock != nullptr, "an ensemble needs a plan and a clock");
  return std::make_shared<Ensemble>(ConstructionTag(), std::move(plan), version, clock);
}

Ensemble::Ensemble(ConstructionTag, std::shared_ptr<const EnsemblePlan> plan, int64_t version,
                   const Clock* clock)
    : plan_(std::move(plan)),
      version_(std::to_string(version)),
      clock_(clock),
      gates_(std::make_unique<Gate[]>(plan_->steps().size())),
      branch_offset_(plan_->steps().size(), -1),
      branch_counts_([this] {
        int total = 0;
        for (size_t i = 0; i < plan_->steps().size(); ++i) {
          if (plan_->steps()[i].kind != StepKind::kSwitch) continue;
          branch_offset_[i] = total;
          total += 2 * static_cast<int>(plan_->steps()[i].switch_plan.branch_names.size());
        }
        return std::make_unique<std::atomic<uint64_t>[]>(total);
      }()) {}

void Ensemble::CountBranch(int step, int branch, bool by_default) const {
  branch_counts_[branch_offset_[step] + 2 * branch + (by_default ? 1 : 0)].fetch_add(
      1, std::memory_order_relaxed);
}

std::vector<Ensemble::BranchCount> Ensemble::BranchCounts() const {
  std::vector<BranchCount> counts;
  for (size_t i = 0; i < plan_->steps().size(); ++i) {
    if (branch_offset_[i] < 0) continue;
    const PlanStep& step = plan_->steps()[i];
    const std::string& name = plan_->step_name(static_cast<int>(i));
    for (size_t b = 0; b < step.switch_plan.branch_names.size(); ++b) {
      const int at = branch_offset_[i] + 2 * static_cast<int>(b);
      counts.push_back(BranchCount{name.empty() ? step.label : name,
                                   step.switch_plan.branch_names[b],
                                   branch_counts_[at].load(std::memory_order_relaxed),
                                   branch_counts_[at + 1].load(std::memory_order_relaxed)});
    }
  }
  return counts;
}

void Ensemble::Run(std::unique_ptr<InferRequest> request, StepRunner* runner) const {
  auto run = std::make_shared<EnsembleRun>(shared_from_this(), std::move(request), runner);
  run->Start();
}

bool Ensemble::Admit(int step, Send send) const {
  Gate& gate = gates_[step];
  {
    absl::MutexLock lock(&gate.mu);
    if (gate.in_flight >= plan_->max_inflight_per_step()) {
      if (static_cast<int>(gate.waiting.size()) >= plan_->step_queue_size()) return false;
      gate.waiting.push_back(std::move(send));
      return true;
    }
    ++gate.in_flight;
  }
  std::move(send)();
  return true;
}

void Ensemble::Release(int step) const {
  Gate& gate = gates_[step];
  std::optional<Send> next;
  {
    absl::MutexLock lock(&gate.mu);
    if (gate.waiting.empty()) {
      --gate.in_flight;
    } else {
      // The slot passes straight to the next request: in_flight stays as it is.
      next.emplace(std::move(gate.waiting.front()));
      gate.waiting.pop_front();
    }
  }
  if (next.has_value()) std::move (*next)();
}

std::vector<Ensemble::StepLoad> Ensemble::Load() const {
  std::vector<StepLoad> load(plan_->steps().size());
  for (size_t i = 0; i < load.size(); ++i) {
    absl::MutexLock lock(&gates_[i].mu);
    load[i].in_flight = gates_[i].in_flight;
    load[i].waiting = static_cast<int>(gates_[i].waiting.size());
  }
  return load;
}

}  // namespace brigade::route
