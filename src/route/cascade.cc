#include "route/cascade.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/check.h"
#include "core/strings.h"
#include "route/step_request.h"

namespace brigade::route {

// One request through the cascade: the first variant's answer, then maybe the second's.
class CascadeRun : public std::enable_shared_from_this<CascadeRun> {
 public:
  CascadeRun(std::shared_ptr<const Cascade> cascade, std::unique_ptr<InferRequest> request,
             StepRunner* runner)
      : cascade_(std::move(cascade)), runner_(runner), request_(std::move(request)) {}

  void Start() {
    request_->clock.Mark(Stage::kInferStart, cascade_->clock_->NowNs());
    Send(cascade_->spec_.first);
  }

 private:
  const RouteVariant& variant(int index) const { return cascade_->policy_->variants()[index]; }

  void Send(int index) {
    std::unique_ptr<InferRequest> step =
        NewStepRequest(*request_, variant(index).model_name, variant(index).model_version,
                       cascade_->clock_->NowNs());
    // The inputs are shared, not copied: the second variant reads the same bytes. An optional
    // input the request left out stays out.
    for (const InferInput& input : request_->inputs) {
      if (!input.tensor.empty()) step->inputs.push_back(input);
    }
    step->outputs = request_->outputs;
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

  void OnAnswer(int index, absl::StatusOr<InferResponse> result) {
    const CascadeSpec& spec = cascade_->spec_;
    if (index == spec.second) {
      Finish(index, RouteReason::kCascadeEscalated, std::move(result));
      return;
    }
    if (!result.ok()) {
      // The small variant failing is no reason to fail the request while the large one may
      // answer it.
      Send(spec.second);
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
    absl::StatusOr<double> lowest = Cascade::LowestScore(scored->tensor, spec.score, spec.softmax);
    if (!lowest.ok()) {
      Finish(index, RouteReason::kCascadeAccepted,
             absl::InvalidArgumentError(StrCat("output '", scored->name, "' of variant '",
                                               variant(index).name,
                                               "': ", lowest.status().message())));
      return;
    }
    if (*lowest < spec.threshold) {
      if (request_->cancelled()) {
        Finish(index, RouteReason::kCascadeEscalated,
               absl::CancelledError("the request was cancelled"));
        return;
      }
      Send(spec.second);
      return;
    }
    // Answer with what the client asked for only (the scored output may have been added).
    if (!request_->outputs.empty()) {
      std::erase_if(result->outputs, [&](const InferOutput& output) {
        return std::none_of(request_->outputs.begin(), request_->outputs.end(),
                            [&](const RequestedOutput& o) { return o.name == output.name; });
      });
    }
    Finish(index, RouteReason::kCascadeAccepted, std::move(result));
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
    result->parameters.Set("routed_to", StrCat(result->model_name, ":", result->model_version));
    result->parameters.Set(
        "cascade", std::string(reason == RouteReason::kCascadeAccepted ? "accepted" : "escalated"));
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
};

std::shared_ptr<Cascade> Cascade::Create(std::shared_ptr<const RoutingPolicy> policy,
                                         int64_t version, const Clock* clock) {
  BRIGADE_CHECK(policy != nullptr && policy->cascade().has_value() && clock != nullptr,
                "a cascade needs a policy with a cascade and a clock");
  return std::make_shared<Cascade>(ConstructionTag(), std::move(policy), version, clock);
}

Cascade::Cascade(ConstructionTag, std::shared_ptr<const RoutingPolicy> policy, int64_t version,
                 const Clock* clock)
    : policy_(std::move(policy)),
      spec_(*policy_->cascade()),
      version_(std::to_string(version)),
      clock_(clock) {}

void Cascade::Run(std::unique_ptr<InferRequest> request, StepRunner* runner) const {
  std::make_shared<CascadeRun>(shared_from_this(), std::move(request), runner)->Start();
}

absl::StatusOr<double> Cascade::LowestScore(const Tensor& scores,
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
  double lowest = 1.0;
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
    if (std::isnan(value)) return 0.0;  // a NaN score is no confidence at all
    lowest = std::min(lowest, value);
  }
  return lowest;
}

}  // namespace brigade::route
