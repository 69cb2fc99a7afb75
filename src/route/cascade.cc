#include "route/cascade.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/check.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "route/row_assembly.h"
#include "route/step_request.h"

namespace brigade::route {

// One request through the cascade: the first variant's answer, then maybe the second's, for
// all of the request's rows or for the uncertain ones.
class CascadeRun : public std::enable_shared_from_this<CascadeRun> {
 public:
  CascadeRun(std::shared_ptr<const Cascade> cascade, std::unique_ptr<InferRequest> request,
             StepRunner* runner)
      : cascade_(std::move(cascade)),
        runner_(runner),
        request_(std::move(request)),
        batch_rows_(BatchRows(*request_, cascade_->batching_)) {}

  void Start() {
    request_->clock.Mark(Stage::kInferStart, cascade_->clock_->NowNs());
    Send(cascade_->spec_.first, WholeInputs());
  }

 private:
  // The rows of the request's batch: dimension 0 shared by every input it gives, when the
  // router batches; 0 when there is none, so its rows cannot be split.
  static int64_t BatchRows(const InferRequest& request, bool batching) {
    if (!batching) return 0;
    int64_t rows = -1;
    for (const InferInput& input : request.inputs) {
      if (input.tensor.empty()) continue;
      if (input.tensor.shape().empty()) return 0;
      if (rows >= 0 && input.tensor.shape()[0] != rows) return 0;
      rows = input.tensor.shape()[0];
    }
    return rows > 0 ? rows : 0;
  }

  const RouteVariant& variant(int index) const { return cascade_->policy_->variants()[index]; }

  // The request's inputs, shared, not copied: the second variant may read the same bytes. An
  // optional input the request left out stays out.
  std::vector<InferInput> WholeInputs() const {
    std::vector<InferInput> inputs;
    inputs.reserve(request_->inputs.size());
    for (const InferInput& input : request_->inputs) {
      if (!input.tensor.empty()) inputs.push_back(input);
    }
    return inputs;
  }

  // The request's inputs (those it gives), moved out of it for its last step (the whole request
  // escalated): nothing reads them after that.
  std::vector<InferInput> TakeWholeInputs() {
    std::vector<InferInput>& inputs = request_->inputs;
    std::erase_if(inputs, [](const InferInput& input) { return input.tensor.empty(); });
    return std::move(inputs);
  }

  // The second variant's step is the last (Create refuses a cascade whose two variants are the
  // same): nothing reads the request's requested outputs after it, so it takes them, not a copy.
  void Send(int index, std::vector<InferInput> inputs) {
    std::unique_ptr<InferRequest> step =
        NewStepRequest(*request_, variant(index).model_name, variant(index).model_version,
                       cascade_->clock_->NowNs());
    step->inputs = std::move(inputs);
    if (index == cascade_->spec_.second) {
      step->outputs = std::move(request_->outputs);
    } else {
      step->outputs = request_->outputs;
    }
    if (!step->outputs.empty() && index == cascade_->spec_.first) {
      // The first variant must also give the scored output, even if the client did not ask.
      const std::string& scored = cascade_->spec_.output;
      const bool asked = std::any_of(step->outputs.begin(), step->outputs.end(),
                                     [&](const RequestedOutput& o) { return o.name == scored; });
      if (!scored.empty() && !asked) step->outputs.push_back(RequestedOutput{scored, {}, false});
    }
    step->on_complete = [self = shared_from_this(), index](absl::StatusOr<InferResponse> result) {
      self->OnAnswer(index, std::move(result));
    };
    runner_->RunStep(std::move(step));
  }

  // The whole request goes to the second variant, its last step.
  void Escalate() {
    escalated_rows_ = std::max<int64_t>(batch_rows_, 1);
    Send(cascade_->spec_.second, TakeWholeInputs());
  }

  void OnAnswer(int index, absl::StatusOr<InferResponse> result) {
    const CascadeSpec& spec = cascade_->spec_;
    if (index == spec.second) {
      if (!uncertain_.empty() && result.ok()) {
        Merge(*std::move(result));
        return;
      }
      Finish(index,
             uncertain_.empty() ? RouteReason::kCascadeEscalated : RouteReason::kCascadePartial,
             std::move(result));
      return;
    }
    if (!result.ok()) {
      // The small variant failing is no reason to fail the request while the large one may
      // answer it.
      Escalate();
      return;
    }
    const InferOutput* scored = spec.output.empty()
                                    ? (result->outputs.empty() ? nullptr : &result->outputs[0])
                                    : result->FindOutput(spec.output);
    if (scored == nullptr) {
      Finish(index, RouteReason::kCascadeAccepted,
             absl::InvalidArgumentError(StrCat("variant '", variant(index).name,
                                               "' gave no output '", spec.output, "' to score")));
      return;
    }
    absl::StatusOr<std::vector<double>> scores =
        Cascade::RowScores(scored->tensor, spec.score, spec.softmax);
    if (!scores.ok()) {
      Finish(index, RouteReason::kCascadeAccepted,
             absl::InvalidArgumentError(StrCat("output '", scored->name, "' of variant '",
                                               variant(index).name,
                                               "': ", scores.status().message())));
      return;
    }
    std::vector<int64_t> uncertain;
    for (size_t row = 0; row < scores->size(); ++row) {
      if ((*scores)[row] < spec.threshold) uncertain.push_back(static_cast<int64_t>(row));
    }
    if (uncertain.empty()) {
      KeepAsked(*result);
      Finish(index, RouteReason::kCascadeAccepted, std::move(result));
      return;
    }
    if (request_->cancelled()) {
      Finish(index, RouteReason::kCascadeEscalated,
             absl::CancelledError("the request was cancelled"));
      return;
    }
    KeepAsked(*result);
    if (static_cast<int64_t>(uncertain.size()) == batch_rows_ &&
        scores->size() == uncertain.size()) {
      Escalate();  // every row: the request as it is, without a gather
      return;
    }
    if (!RowsSplit(*result, static_cast<int64_t>(scores->size()))) {
      Escalate();
      return;
    }
    // Only the uncertain rows, in their order, go to the second variant.
    std::vector<RowRef> rows;
    rows.reserve(uncertain.size());
    for (int64_t row : uncertain) rows.push_back(RowRef{0, row});
    std::vector<InferInput> inputs = WholeInputs();
    for (InferInput& input : inputs) {
      absl::StatusOr<Tensor> gathered = AssembleRows({&input.tensor, 1}, rows);
      if (!gathered.ok()) {
        Finish(spec.second, RouteReason::kCascadePartial,
               absl::Status(gathered.status().code(),
                            StrCat("input '", input.name, "': ", gathered.status().message())));
        return;
      }
      input.tensor = *std::move(gathered);
    }
    first_answer_ = *std::move(result);
    uncertain_ = std::move(uncertain);
    escalated_rows_ = static_cast<int64_t>(uncertain_.size());
    Send(spec.second, std::move(inputs));
  }

  // Whether the first variant's answer can be split by row: the scored output has one row per
  // row of the batch, and so does every output the client gets.
  bool RowsSplit(const InferResponse& answer, int64_t scored_rows) const {
    if (batch_rows_ <= 1 || scored_rows != batch_rows_) return false;
    return std::all_of(answer.outputs.begin(), answer.outputs.end(), [&](const InferOutput& out) {
      return !out.tensor.shape().empty() && out.tensor.shape()[0] == batch_rows_;
    });
  }

  // Answers with what the client asked for only (the scored output may have been added).
  void KeepAsked(InferResponse& answer) const {
    if (request_->outputs.empty()) return;
    std::erase_if(answer.outputs, [&](const InferOutput& output) {
      return std::none_of(request_->outputs.begin(), request_->outputs.end(),
                          [&](const RequestedOutput& o) { return o.name == output.name; });
    });
  }

  // The second variant answered the uncertain rows: each takes its place in the first
  // variant's outputs. The first answer's tensors are never written (a cached answer may share
  // them); each merged output is a new tensor of the first one's size.
  void Merge(InferResponse second) {
    const CascadeSpec& spec = cascade_->spec_;
    const auto uncertain_rows = static_cast<int64_t>(uncertain_.size());
    for (InferOutput& output : first_answer_.outputs) {
      const InferOutput* other = second.FindOutput(output.name);
      const Tensor& mine = output.tensor;
      bool fits = other != nullptr && other->tensor.dtype() == mine.dtype() &&
                  other->tensor.shape().size() == mine.shape().size() &&
                  other->tensor.shape()[0] == uncertain_rows;
      for (size_t d = 1; fits && d < mine.shape().size(); ++d) {
        fits = other->tensor.shape()[d] == mine.shape()[d];
      }
      if (!fits) {
        const std::string theirs = other == nullptr
                                       ? std::string("no such output")
                                       : StrCat(DataTypeName(other->tensor.dtype()), " ",
                                                ShapeToString(other->tensor.shape()));
        Finish(spec.second, RouteReason::kCascadePartial,
               absl::InvalidArgumentError(StrCat(
                   "output '", output.name, "': variant '", variant(spec.second).name,
                   "' answered the ", uncertain_rows, " uncertain rows with ", theirs,
                   " but variant '", variant(spec.first).name, "' answered ", batch_rows_,
                   " rows with ", DataTypeName(mine.dtype()), " ", ShapeToString(mine.shape()),
                   ": a cascade that splits rows needs the same datatype and row shape from "
                   "both")));
        return;
      }
      std::vector<RowRef> rows(static_cast<size_t>(batch_rows_));
      int64_t next = 0;
      size_t at = 0;
      for (int64_t row = 0; row < batch_rows_; ++row) {
        if (at < uncertain_.size() && uncertain_[at] == row) {
          rows[row] = RowRef{1, next++};
          ++at;
        } else {
          rows[row] = RowRef{0, row};
        }
      }
      const Tensor parts[] = {mine, other->tensor};
      absl::StatusOr<Tensor> merged = AssembleRows(parts, rows);
      if (!merged.ok()) {
        Finish(spec.second, RouteReason::kCascadePartial,
               absl::Status(merged.status().code(),
                            StrCat("output '", output.name, "': ", merged.status().message())));
        return;
      }
      output.tensor = *std::move(merged);
    }
    routed_to_ = StrCat(first_answer_.model_name, ":", first_answer_.model_version, ",",
                        second.model_name, ":", second.model_version);
    Finish(spec.second, RouteReason::kCascadePartial, std::move(first_answer_));
  }

  void Finish(int index, RouteReason reason, absl::StatusOr<InferResponse> result) {
    const std::string& router = cascade_->policy_->router_name();
    if (!result.ok()) {
      request_->Complete(absl::Status(result.status().code(),
                                      StrCat("router '", router, "' variant '", variant(index).name,
                                             "': ", result.status().message())));
      return;
    }
    cascade_->policy_->Count(index, reason);
    result->parameters.Set("routed_to", routed_to_.empty()
                                            ? StrCat(result->model_name, ":", result->model_version)
                                            : routed_to_);
    const char* outcome = reason == RouteReason::kCascadeAccepted    ? "accepted"
                          : reason == RouteReason::kCascadeEscalated ? "escalated"
                                                                     : "partial";
    result->parameters.Set("cascade", std::string(outcome));
    result->parameters.Set("cascade_escalated_rows", escalated_rows_);
    result->model_name = router;
    result->model_version = cascade_->version_;
    const int64_t now = cascade_->clock_->NowNs();
    request_->clock.Mark(Stage::kInferEnd, now);
    request_->clock.Mark(Stage::kPostprocessed, now);
    result->clock = request_->clock;
    request_->Complete(std::move(result));
  }

  const std::shared_ptr<const Cascade> cascade_;
  StepRunner* const runner_;
  const std::unique_ptr<InferRequest> request_;
  const int64_t batch_rows_;
  // Set before the second variant is sent, read when it answers (one answer at a time: no lock).
  int64_t escalated_rows_ = 0;
  // When only some rows were escalated: those rows (ascending) and the first variant's answer.
  std::vector<int64_t> uncertain_;
  InferResponse first_answer_;
  std::string routed_to_;
};

std::shared_ptr<Cascade> Cascade::Create(std::shared_ptr<const RoutingPolicy> policy,
                                         int64_t version, bool batching, const Clock* clock) {
  BRIGADE_CHECK(policy != nullptr && policy->cascade().has_value() && clock != nullptr,
                "a cascade needs a policy with a cascade and a clock");
  return std::make_shared<Cascade>(ConstructionTag(), std::move(policy), version, batching, clock);
}

Cascade::Cascade(ConstructionTag, std::shared_ptr<const RoutingPolicy> policy, int64_t version,
                 bool batching, const Clock* clock)
    : policy_(std::move(policy)),
      spec_(*policy_->cascade()),
      version_(std::to_string(version)),
      batching_(batching),
      clock_(clock) {}

void Cascade::Run(std::unique_ptr<InferRequest> request, StepRunner* runner) const {
  std::make_shared<CascadeRun>(shared_from_this(), std::move(request), runner)->Start();
}

absl::StatusOr<double> Cascade::LowestScore(const Tensor& scores,
                                            config::ModelRouting::Cascade::Score score,
                                            bool softmax) {
  BRIGADE_ASSIGN_OR_RETURN(std::vector<double> rows, RowScores(scores, score, softmax));
  // No row is no doubt: an empty batch is accepted.
  return rows.empty() ? 1.0 : *std::min_element(rows.begin(), rows.end());
}

absl::StatusOr<std::vector<double>> Cascade::RowScores(const Tensor& scores,
                                                       config::ModelRouting::Cascade::Score score,
                                                       bool softmax) {
  if (scores.dtype() != DataType::kFp32) {
    return absl::InvalidArgumentError(
        StrCat("scores must be FP32, not ", DataTypeName(scores.dtype())));
  }
  const Shape& shape = scores.shape();
  if (shape.empty() || shape.size() > 2 || shape.back() < 2) {
    return absl::InvalidArgumentError(
        StrCat("scores must be [batch, classes] with at least two "
               "classes, not ",
               ShapeToString(shape)));
  }
  const int64_t classes = shape.back();
  const int64_t rows = shape.size() == 2 ? shape[0] : 1;
  std::span<const float> values = scores.values<float>();
  std::vector<double> out;
  out.reserve(static_cast<size_t>(rows));  // rows * classes elements exist: bounded
  for (int64_t row = 0; row < rows; ++row) {
    std::span<const float> logits = values.subspan(row * classes, classes);
    // The two largest values, then (for logits) their probabilities: p_i = exp(x_i - max) / sum.
    float top = -INFINITY;
    float runner_up = -INFINITY;
    for (float x : logits) {
      if (x > top) {
        runner_up = top;
        top = x;
      } else if (x > runner_up) {
        runner_up = x;
      }
    }
    double p1 = top;
    double p2 = runner_up;
    if (softmax) {
      double sum = 0;
      for (float x : logits) sum += std::exp(static_cast<double>(x) - top);
      p1 = 1.0 / sum;
      p2 = std::exp(static_cast<double>(runner_up) - top) / sum;
    }
    const double value = score == config::ModelRouting::Cascade::MARGIN ? p1 - p2 : p1;
    out.push_back(std::isnan(value) ? 0.0 : value);  // a NaN score is no confidence at all
  }
  return out;
}

}  // namespace brigade::route
