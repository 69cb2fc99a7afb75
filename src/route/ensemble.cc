#include "route/ensemble.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/check.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "route/branch_rows.h"
#include "route/control_step.h"
#include "route/step_request.h"

namespace brigade::route {
namespace {

// taken_'s value for a switch whose rows went down different branches.
constexpr int kSplitBranches = -2;

}  // namespace

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
        batch_rows_(BatchRows(plan_, *request_)),
        values_(plan_.tensor_count()),
        rows_(plan_.tensor_count()),
        waiting_for_(plan_.steps().size()),
        steps_left_(static_cast<int>(plan_.steps().size())),
        taken_(plan_.steps().size(), -1),
        split_(plan_.steps().size()),
        step_rows_(plan_.steps().size()),
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
  // The rows of the request's batch: dimension 0 of its first input when the plan batches.
  static int64_t BatchRows(const EnsemblePlan& plan, const InferRequest& request) {
    if (!plan.batching()) return 1;
    for (const InferInput& input : request.inputs) {
      if (!input.tensor.empty() && !input.tensor.shape().empty()) return input.tensor.shape()[0];
    }
    return 1;
  }

  // Runs or skips each step of `ready` (everything it waits for is settled), and in turn those
  // that makes ready. Model steps are sent; switches and in-server fusions run here, off the lock.
  void Advance(std::vector<int> ready) {
    // In the order they became ready (independent model steps are sent in config order).
    for (size_t next = 0; next < ready.size(); ++next) {
      const int step = ready[next];
      const PlanStep& plan_step = plan_.steps()[step];
      bool skipped = false;
      bool done = false;
      // What a switch or an in-server fusion reads that exists, the rows each holds and their
      // names; the rows the step runs on.
      std::vector<Tensor> present;
      std::vector<Rows> present_rows;
      std::vector<std::string_view> present_names;
      std::vector<float> weights;
      Rows step_rows;
      {
        absl::MutexLock lock(&mu_);
        if (finished_) return;
        skipped = SkippedLocked(step);
        if (skipped) {
          // Nothing it writes will exist, and a skipped switch takes no branch.
          for (const auto& [unused, id] : plan_step.outputs) {
            SettleLocked(id, Tensor(), nullptr, ready);
          }
          if (plan_step.kind == StepKind::kSwitch) DecideLocked(step, -1, {}, ready);
          done = --steps_left_ == 0;
          if (done) finished_ = true;
        } else if (plan_step.kind != StepKind::kModel) {
          step_rows = StepRowsLocked(step);
          for (size_t i = 0; i < plan_step.inputs.size(); ++i) {
            const int id = plan_step.inputs[i].second;
            const Tensor& value = values_[id];
            if (value.empty() && plan_step.kind == StepKind::kFusion) continue;
            present.push_back(value);
            present_rows.push_back(rows_[id]);
            present_names.push_back(plan_.tensor_name(id));
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
      absl::Status status;
      int branch = -1;
      std::vector<Rows> split;
      absl::StatusOr<Tensor> fused;
      if (plan_step.kind == StepKind::kSwitch) {
        status = Switch(step, present, present_rows, step_rows, &branch, &split, &record.branch);
      } else {
        fused = RunFusion(plan_step, present, present_rows, present_names, step_rows, weights);
        status = fused.status();
      }
      record.clock.Mark(Stage::kInferEnd, ensemble_->clock_->NowNs());
      if (!status.ok()) {
        Fail(step, status);
        return;
      }
      {
        absl::MutexLock lock(&mu_);
        if (finished_) return;
        steps_.push_back(std::move(record));
        if (plan_step.kind == StepKind::kSwitch) {
          DecideLocked(step, branch, std::move(split), ready);
        } else {
          SettleLocked(plan_step.outputs[0].second, *std::move(fused), step_rows, ready);
        }
        done = --steps_left_ == 0;
        if (done) finished_ = true;
      }
      if (done) Finish();
    }
  }

  // Decides switch `step` on the rows `step_rows` it runs on: one `branch` when every row
  // picks the same (the fast path: nothing is copied), else kSplitBranches and each branch's
  // rows in `split` (null for a branch no row takes). `names` gets the branches taken.
  absl::Status Switch(int step, std::vector<Tensor>& present, const std::vector<Rows>& present_rows,
                      const Rows& step_rows, int* branch, std::vector<Rows>* split,
                      std::string* names) const {
    const PlanStep& plan_step = plan_.steps()[step];
    if (!present.empty() && !present[0].empty()) {
      // A switch inside a branch whose rows were split reads only that branch's rows.
      BRIGADE_ASSIGN_OR_RETURN(present[0],
                               AlignRows(present[0], present_rows[0], step_rows, batch_rows_,
                                         plan_.tensor_name(plan_step.switch_plan.tensor)));
    }
    BRIGADE_ASSIGN_OR_RETURN(Choice choice, Decide(plan_step, present));
    const PlanSwitch& plan_switch = plan_step.switch_plan;
    const size_t branches = plan_switch.branch_names.size();
    const bool one = std::all_of(choice.branches.begin(), choice.branches.end(),
                                 [&](int b) { return b == choice.branches[0]; });
    const auto rows_here =
        step_rows == nullptr ? batch_rows_ : static_cast<int64_t>(step_rows->size());
    if (!one && static_cast<int64_t>(choice.branches.size()) != rows_here) {
      return absl::InvalidArgumentError(StrCat(
          "tensor '", plan_.tensor_name(plan_switch.tensor), "' has ", choice.branches.size(),
          " rows, but the switch runs on ", rows_here, " rows of the batch"));
    }
    // Count each branch once per request, by why it was taken (a value or the default).
    std::vector<uint8_t> counted(2 * branches, 0);
    for (size_t row = 0; row < choice.branches.size(); ++row) {
      counted[2 * choice.branches[row] + choice.by_default[row]] = 1;
    }
    for (size_t b = 0; b < branches; ++b) {
      for (int by_default = 0; by_default < 2; ++by_default) {
        if (counted[2 * b + by_default]) {
          ensemble_->CountBranch(step, static_cast<int>(b), by_default != 0);
        }
      }
    }
    if (one) {
      *branch = choice.branches[0];
      *names = plan_switch.branch_names[*branch];
      return absl::OkStatus();
    }
    // Rows of the request by branch, in their order.
    std::vector<std::vector<int64_t>> rows(branches);
    for (size_t row = 0; row < choice.branches.size(); ++row) {
      rows[choice.branches[row]].push_back(step_rows == nullptr ? static_cast<int64_t>(row)
                                                                : (*step_rows)[row]);
    }
    *branch = kSplitBranches;
    split->assign(branches, nullptr);
    for (size_t b = 0; b < branches; ++b) {
      if (rows[b].empty()) continue;
      (*split)[b] = std::make_shared<const std::vector<int64_t>>(std::move(rows[b]));
      if (!names->empty()) *names += ",";
      *names += plan_switch.branch_names[b];
    }
    return absl::OkStatus();
  }

  // An in-server fusion on the rows `step_rows`. SELECT takes each row from the one input
  // holding it (the branch the row went down); the others join inputs that hold every row.
  absl::StatusOr<Tensor> RunFusion(const PlanStep& plan_step, const std::vector<Tensor>& present,
                                   const std::vector<Rows>& present_rows,
                                   const std::vector<std::string_view>& present_names,
                                   const Rows& step_rows, const std::vector<float>& weights) const {
    const bool same_rows = std::all_of(present_rows.begin(), present_rows.end(),
                                       [&](const Rows& rows) { return rows == step_rows; });
    if (same_rows) {
      return Fuse(plan_step.fusion.op, present, plan_step.fusion.axis, weights);
    }
    if (plan_step.fusion.op == config::ModelEnsembling::StepFusion::SELECT) {
      return SelectRows(present, present_rows, present_names, step_rows, batch_rows_);
    }
    std::vector<Tensor> aligned;
    for (size_t i = 0; i < present.size(); ++i) {
      absl::StatusOr<Tensor> rows =
          AlignRows(present[i], present_rows[i], step_rows, batch_rows_, present_names[i]);
      if (!rows.ok()) {
        return absl::InvalidArgumentError(
            StrCat(config::ModelEnsembling::StepFusion::Op_Name(plan_step.fusion.op),
                   " joins its inputs row by row, but the rows of this request went down different "
                   "branches (",
                   rows.status().message(), "); only SELECT joins rows of different branches"));
      }
      aligned.push_back(*std::move(rows));
    }
    return Fuse(plan_step.fusion.op, aligned, plan_step.fusion.axis, weights);
  }

  // The rows switch `step`'s `branch` runs on: its own when the switch split its rows, else
  // those of the switch's own condition (null: every row).
  Rows ConditionRowsLocked(int step, int branch) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (step >= 0) {
      if (taken_[step] == kSplitBranches) return split_[step][branch];
      const PlanStep& plan_step = plan_.steps()[step];
      step = plan_step.condition_switch;
      branch = plan_step.condition_branch;
    }
    return nullptr;
  }

  Rows StepRowsLocked(int step) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ConditionRowsLocked(plan_.steps()[step].condition_switch,
                               plan_.steps()[step].condition_branch);
  }

  bool TakenLocked(int step, int branch) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return taken_[step] == branch ||
           (taken_[step] == kSplitBranches && split_[step][branch] != nullptr);
  }

  // A step does not run when its branch is not taken, when a step it reads did not run (unless
  // it is a fusion), or when none of a fusion's inputs exists.
  bool SkippedLocked(int step) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const PlanStep& plan_step = plan_.steps()[step];
    if (plan_step.switch_step >= 0 && !TakenLocked(plan_step.switch_step, plan_step.branch)) {
      return true;
    }
    for (const auto& [unused, id] : plan_step.inputs) {
      const bool exists = !values_[id].empty();
      if (plan_step.fuses && exists) return false;
      if (!plan_step.fuses && !exists && plan_.producer(id) >= 0) return true;
    }
    return plan_step.fuses;
  }

  // Tensor `id` is written (or, empty, known never to be), holding the request's rows `rows`:
  // its readers wait for one less.
  void SettleLocked(int id, Tensor value, Rows rows, std::vector<int>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    values_[id] = std::move(value);
    rows_[id] = std::move(rows);
    for (int reader : plan_.consumers(id)) {
      if (--waiting_for_[reader] == 0) ready.push_back(reader);
    }
  }

  // Switch `step` took `branch` (-1: none; kSplitBranches: each branch its rows of `split`):
  // the steps of every branch stop waiting for it.
  void DecideLocked(int step, int branch, std::vector<Rows> split, std::vector<int>& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    taken_[step] = branch;
    split_[step] = std::move(split);
    for (const std::vector<int>& members : plan_.steps()[step].switch_plan.branch_steps) {
      for (int member : members) {
        if (--waiting_for_[member] == 0) ready.push_back(member);
      }
    }
  }

  // What a switch decides: per row, the branch and whether it was the default (one entry when
  // the switch reads a parameter, which holds for every row).
  struct Choice {
    std::vector<int> branches;
    std::vector<uint8_t> by_default;
  };

  // The branch a switch takes for each row. `present` is its tensor, when it reads one.
  absl::StatusOr<Choice> Decide(const PlanStep& plan_step,
                                const std::vector<Tensor>& present) const {
    const PlanSwitch& choice = plan_step.switch_plan;
    std::vector<std::optional<std::string>> values;
    std::string source;
    if (!choice.parameter.empty()) {
      values.push_back(SwitchParameterText(request_->parameters, choice.parameter));
      source = StrCat("parameter '", choice.parameter, "'");
    } else {
      const std::string& tensor = plan_.tensor_name(choice.tensor);
      source = StrCat("tensor '", tensor, "'");
      if (!present.empty() && !present[0].empty()) {
        BRIGADE_ASSIGN_OR_RETURN(
            std::vector<std::string> rows,
            SwitchTensorValues(present[0], tensor, choice.argmax, plan_.batching()));
        for (std::string& value : rows) values.emplace_back(std::move(value));
      } else {
        values.emplace_back();
      }
    }
    Choice out;
    out.branches.reserve(values.size());
    out.by_default.reserve(values.size());
    for (size_t row = 0; row < values.size(); ++row) {
      const std::optional<std::string>& value = values[row];
      int branch = -1;
      if (value.has_value()) {
        for (const auto& [listed, listed_branch] : choice.values) {
          if (listed == *value) branch = listed_branch;
        }
      }
      const bool by_default = branch < 0;
      if (by_default) branch = choice.default_branch;
      if (branch < 0) {
        if (!value.has_value()) {
          return absl::InvalidArgumentError(
              StrCat("the request has no ", source, ", and the switch has no default_branch"));
        }
        return absl::InvalidArgumentError(
            StrCat(source, values.size() > 1 ? StrCat(" row ", row) : std::string(), " is '",
                   *value, "', which no branch lists, and the switch has no default_branch"));
      }
      out.branches.push_back(branch);
      out.by_default.push_back(by_default ? 1 : 0);
    }
    return out;
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
    std::vector<Rows> input_rows;
    std::vector<int> input_ids;
    Rows step_rows;
    {
      absl::MutexLock lock(&mu_);
      // Nothing more is sent once the request is settled or cannot be served any more.
      send = !finished_ && stop.ok();
      step_rows = StepRowsLocked(step);
      step_rows_[step] = step_rows;
      // An optional ensemble input the request left out is left out of the step as well.
      for (const auto& [model_input, id] : plan_step.inputs) {
        if (send && !values_[id].empty()) {
          inputs.push_back(InferInput{model_input, values_[id], {}});
          input_rows.push_back(rows_[id]);
          input_ids.push_back(id);
        }
      }
    }
    // A step under a branch that some of the rows took runs on those rows only.
    for (size_t i = 0; send && stop.ok() && i < inputs.size(); ++i) {
      absl::StatusOr<Tensor> rows = AlignRows(inputs[i].tensor, input_rows[i], step_rows,
                                              batch_rows_, plan_.tensor_name(input_ids[i]));
      if (rows.ok()) {
        inputs[i].tensor = *std::move(rows);
      } else {
        stop = absl::InvalidArgumentError(
            StrCat("input '", inputs[i].name, "': ", rows.status().message()));
      }
    }
    if (!send || !stop.ok()) {
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
    absl::Status bad_rows;
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      const Rows step_rows = step_rows_[step];
      // A step run on some rows of the batch must answer one row for each.
      for (const auto& [model_output, id] : plan_step.outputs) {
        const InferOutput* output = result->FindOutput(model_output);
        // The step's model answered without an output it was asked for: it broke its contract.
        BRIGADE_CHECK(output != nullptr, "a step's answer lacks an output the step asked for");
        const Shape& shape = output->tensor.shape();
        if (step_rows != nullptr && bad_rows.ok() &&
            (shape.empty() || shape[0] != static_cast<int64_t>(step_rows->size()))) {
          bad_rows = absl::InvalidArgumentError(StrCat(
              "output '", model_output, "' has shape ", ShapeToString(shape),
              ", not one row for each of the ", step_rows->size(), " rows its branch runs on"));
        }
      }
      if (bad_rows.ok()) {
        steps_.push_back(StepRecord{result->model_name, result->model_version, result->clock,
                                    result->execution, plan_step.label, ""});
        for (const auto& [model_output, id] : plan_step.outputs) {
          SettleLocked(id, result->FindOutput(model_output)->tensor, step_rows, ready);
        }
        done = --steps_left_ == 0;
        if (done) finished_ = true;
      }
    }
    if (!bad_rows.ok()) {
      Fail(step, bad_rows);
      return;
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
  // The rows of the request's batch (1 when the plan does not batch).
  const int64_t batch_rows_;

  absl::Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Tensor> values_ ABSL_GUARDED_BY(mu_);
  // Per tensor, the rows of the request it holds (null: every row; set only under a switch
  // that split its rows).
  std::vector<Rows> rows_ ABSL_GUARDED_BY(mu_);
  std::vector<int> waiting_for_ ABSL_GUARDED_BY(mu_);
  int steps_left_ ABSL_GUARDED_BY(mu_);
  // Each finished step, for the trace.
  std::vector<StepRecord> steps_ ABSL_GUARDED_BY(mu_);
  // Per switch step, the branch it took (-1: none yet, or it did not run; kSplitBranches: its
  // rows took different branches, each with its rows in split_).
  std::vector<int> taken_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<Rows>> split_ ABSL_GUARDED_BY(mu_);
  // Per model step, the rows its request was sent with (null: every row).
  std::vector<Rows> step_rows_ ABSL_GUARDED_BY(mu_);
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
