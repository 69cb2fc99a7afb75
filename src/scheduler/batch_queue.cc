#include "scheduler/batch_queue.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "scheduler/p99_model_policy.h"

namespace brigade::scheduler {

int RequestRows(const InferRequest& request, int max_batch_size) {
  if (max_batch_size <= 0) return 1;
  for (const InferInput& input : request.inputs) {
    if (input.tensor.empty()) continue;  // an omitted optional input
    const Shape& shape = input.tensor.shape();
    return shape.empty() ? 1 : static_cast<int>(shape[0]);
  }
  return 1;
}

std::unique_ptr<BatchPolicy> MakeBatchPolicy(const BatchQueueOptions& options) {
  switch (options.policy) {
    case BatchPolicyKind::kQueueFormula:
      return std::make_unique<QueueFormulaPolicy>(options.target_p99_us);
    case BatchPolicyKind::kP99Model: {
      P99ModelPolicy::Options p99;
      p99.target_p99_us = options.target_p99_us;
      return std::make_unique<P99ModelPolicy>(p99);
    }
    case BatchPolicyKind::kFixedDelay:
      break;
  }
  return std::make_unique<FixedDelayPolicy>(options.max_queue_delay_us,
                                            options.preferred_batch_sizes);
}

namespace {

int BatchLimit(const BatchQueueOptions& options) {
  if (!options.dynamic_batching || options.max_batch_size <= 0) return 1;
  if (options.policy != BatchPolicyKind::kFixedDelay && options.adaptive_max_batch_size > 0) {
    return std::min(options.max_batch_size, options.adaptive_max_batch_size);
  }
  return options.max_batch_size;
}

}  // namespace

BatchQueue::BatchQueue(BatchQueueOptions options, std::unique_ptr<BatchPolicy> policy)
    : options_(std::move(options)),
      batching_(options_.dynamic_batching && options_.max_batch_size > 0),
      batch_limit_(BatchLimit(options_)),
      policy_(policy != nullptr ? std::move(policy) : MakeBatchPolicy(options_)),
      load_({std::max(1, options_.instances), std::max(1, options_.max_batch_size),
             options_.profile_half_life_us * 1000}),
      levels_(static_cast<size_t>(std::max(1, options_.priority_levels))) {
  for (size_t l = 0; l < levels_.size(); ++l) {
    auto it = options_.priority_queue_policy.find(static_cast<int>(l) + 1);
    levels_[l].policy =
        it != options_.priority_queue_policy.end() ? it->second : options_.default_queue_policy;
  }
}

int BatchQueue::LevelOf(const InferRequest& request) const {
  const int levels = static_cast<int>(levels_.size());
  // Triton: 0, or a level the model does not have, means the default level.
  const int level = request.priority == 0 || request.priority > static_cast<uint32_t>(levels)
                        ? options_.default_priority_level
                        : static_cast<int>(request.priority);
  return std::clamp(level, 1, levels) - 1;
}

size_t BatchQueue::level_size(int level) const {
  if (level < 1 || level > static_cast<int>(levels_.size())) return 0;
  return levels_[static_cast<size_t>(level - 1)].size();
}

BatchQueue::Admission BatchQueue::Push(std::unique_ptr<InferRequest> request, int64_t now_ns) {
  Admission admission;
  const int level = LevelOf(*request);
  Level& slot = levels_[static_cast<size_t>(level)];
  const QueuePolicy& policy = slot.policy;
  admission.level = level + 1;
  auto refuse = [&](Refusal why) {
    admission.refused = std::move(request);
    admission.refusal = why;
    return std::move(admission);
  };
  if (size_ >= options_.max_queue_size) return refuse(Refusal::kQueueFull);
  if (policy.max_queue_size > 0 && slot.size() >= policy.max_queue_size) {
    return refuse(Refusal::kLevelFull);
  }

  QueuedRequest queued;
  queued.enqueue_ns = now_ns;
  queued.rows = RequestRows(*request, options_.max_batch_size);
  queued.level = level;
  const Deadline timeout = Deadline::AfterUs(now_ns, policy.default_timeout_us);
  queued.deadline = policy.default_timeout_us == 0 || policy.allow_timeout_override
                        ? Deadline::Earliest(request->deadline, timeout)
                        : timeout;
  const bool rejects = policy.timeout_action == QueuePolicy::TimeoutAction::kReject;
  if (rejects && queued.deadline.ExpiredAt(now_ns)) return refuse(Refusal::kExpired);
  queued.slo_deadline_ns = rejects ? queued.deadline.ns() : INT64_MAX;
  if (options_.target_p99_us > 0) {
    queued.slo_deadline_ns =
        std::min(queued.slo_deadline_ns, Deadline::AfterUs(now_ns, options_.target_p99_us).ns());
  }

  // Predicted for every request, not only under admission control: the answer's lateness
  // against it is what SLO routing adds to its predictions (PredictCompletionNs).
  AdmissionView view;
  view.now_ns = now_ns;
  view.rows = queued.rows;
  for (int l = 0; l <= level; ++l) view.rows_ahead += levels_[static_cast<size_t>(l)].rows;
  view.max_batch_size = batch_limit_;
  view.load = load_.Signals(now_ns);
  const int64_t predicted_ns = policy_->PredictCompletionNs(view);
  if (options_.admission_control) {
    admission.predicted_completion_ns = predicted_ns;
    admission.admission_deadline_ns = queued.slo_deadline_ns;
    if (predicted_ns >= 0 && predicted_ns > admission.admission_deadline_ns) {
      return refuse(Refusal::kPredictedLate);
    }
  }
  if (predicted_ns >= 0) {
    const int64_t arrival_ns = request->clock.at(Stage::kArrival);
    const int64_t before_queue_ns =
        arrival_ns > 0 && arrival_ns <= now_ns ? now_ns - arrival_ns : 0;
    queued.expected_done_ns = predicted_ns - before_queue_ns;
  }

  queued.sequence = next_sequence_++;
  admission.deadline_ns = queued.deadline.ns();
  next_expiry_ns_ = std::min(next_expiry_ns_, queued.deadline.ns());
  if (request->cancel != nullptr) ++cancellable_;
  load_.OnArrival(queued.rows, now_ns);
  slot.rows += queued.rows;
  queued.request = std::move(request);
  slot.waiting.push_back(std::move(queued));
  ++size_;
  return admission;
}

bool BatchQueue::Compatible(const InferRequest& a, const InferRequest& b) const {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    // Requests that omit an optional input run on its default; ones that give it cannot share
    // that batch (there is nothing to concatenate the given rows with).
    if (a.inputs[i].tensor.empty() != b.inputs[i].tensor.empty()) return false;
    const Shape& x = a.inputs[i].tensor.shape();
    const Shape& y = b.inputs[i].tensor.shape();
    if (x.size() != y.size() || a.inputs[i].tensor.dtype() != b.inputs[i].tensor.dtype()) {
      return false;
    }
    if (!std::equal(x.begin() + (x.empty() ? 0 : 1), x.end(), y.begin() + (y.empty() ? 0 : 1))) {
      return false;
    }
  }
  return true;
}

void BatchQueue::Forget(const QueuedRequest& queued) {
  levels_[static_cast<size_t>(queued.level)].rows -= queued.rows;
  if (queued.request != nullptr && queued.request->cancel != nullptr) --cancellable_;
  --size_;
}

std::vector<QueuedRequest> BatchQueue::Expire(int64_t now_ns) {
  std::vector<QueuedRequest> expired;
  next_expiry_ns_ = INT64_MAX;
  if (size_ == 0) return expired;
  for (Level& level : levels_) {
    const bool delays = level.policy.timeout_action == QueuePolicy::TimeoutAction::kDelay;
    for (auto it = level.waiting.begin(); it != level.waiting.end();) {
      if (it->request->cancelled()) {
        Forget(*it);
        expired.push_back(std::move(*it));
        it = level.waiting.erase(it);
      } else if (it->deadline.ExpiredAt(now_ns)) {
        if (delays) {
          it->delayed = true;
          ++delayed_total_;
          level.delayed.push_back(std::move(*it));
        } else {
          Forget(*it);
          expired.push_back(std::move(*it));
        }
        it = level.waiting.erase(it);
      } else {
        next_expiry_ns_ = std::min(next_expiry_ns_, it->deadline.ns());
        ++it;
      }
    }
    for (auto it = level.delayed.begin(); it != level.delayed.end();) {
      if (it->request->cancelled()) {
        Forget(*it);
        expired.push_back(std::move(*it));
        it = level.delayed.erase(it);
      } else {
        ++it;
      }
    }
  }
  return expired;
}

QueuedRequest& BatchQueue::At(const Slot& slot) {
  Level& level = levels_[slot.level];
  return slot.delayed ? level.delayed[slot.index] : level.waiting[slot.index];
}

BatchQueue::Decision BatchQueue::Next(int64_t now_ns, bool flush, int instance) {
  Decision decision;
  decision.expired = Expire(now_ns);
  if (size_ == 0) return decision;

  // Candidates in priority, then arrival (waiting before delayed) order: compatible with the
  // leader, rows within the limit.
  size_t lead_level = 0;
  while (levels_[lead_level].size() == 0) ++lead_level;
  const Level& first = levels_[lead_level];
  const InferRequest& lead =
      *(first.waiting.empty() ? first.delayed.front() : first.waiting.front()).request;
  // Inline for the common batch sizes: choosing a batch allocates nothing of its own.
  absl::InlinedVector<Slot, 16> picks;
  absl::InlinedVector<int, 16> pick_rows;
  int rows = 0;
  int queued_rows = 0;
  for (const Level& level : levels_) queued_rows += level.rows;
  int64_t oldest_ns = INT64_MAX;
  int64_t slo_deadline_ns = INT64_MAX;
  const int limit = batch_limit_;
  for (size_t l = lead_level; l < levels_.size() && rows < limit; ++l) {
    for (bool delayed : {false, true}) {
      const auto& items = delayed ? levels_[l].delayed : levels_[l].waiting;
      for (size_t i = 0; i < items.size() && rows < limit; ++i) {
        const QueuedRequest& queued = items[i];
        if (!picks.empty() && (rows + queued.rows > limit || !Compatible(lead, *queued.request))) {
          continue;
        }
        picks.push_back({l, delayed, i});
        pick_rows.push_back(queued.rows);
        rows += queued.rows;
        oldest_ns = std::min(oldest_ns, queued.enqueue_ns);
        slo_deadline_ns = std::min(slo_deadline_ns, queued.slo_deadline_ns);
      }
    }
  }

  BatchChoice choice;
  if (!batching_) {
    choice = {1, INT64_MAX, flush ? BatchReason::kFlush : BatchReason::kNoBatching};
  } else {
    BatchView view;
    view.now_ns = now_ns;
    view.instance = instance;
    view.max_batch_size = limit;
    view.request_rows = pick_rows;
    view.rows = rows;
    view.oldest_enqueue_ns = oldest_ns;
    view.slo_deadline_ns = slo_deadline_ns;
    view.queued_rows = queued_rows;
    view.flush = flush;
    view.load = load_.Signals(now_ns);
    choice = policy_->Choose(view);
    if (flush && choice.max_rows == 0) choice = {limit, INT64_MAX, BatchReason::kFlush};
  }
  if (choice.max_rows <= 0) {
    decision.wake_at_ns = std::max(choice.wake_at_ns, now_ns + 1);
    return decision;
  }

  // The longest prefix within the chosen rows; never less than the leader.
  size_t count = 0;
  int kept = 0;
  while (count < picks.size() && (count == 0 || kept + pick_rows[count] <= choice.max_rows)) {
    kept += pick_rows[count++];
  }
  picks.resize(count);
  decision.reason = choice.reason;
  decision.rows = kept;
  decision.batch.reserve(count);
  int64_t oldest_picked_ns = INT64_MAX;
  for (const Slot& slot : picks) {
    QueuedRequest& queued = At(slot);
    oldest_picked_ns = std::min(oldest_picked_ns, queued.enqueue_ns);
    Forget(queued);
    decision.batch.push_back(std::move(queued));
  }
  // Erase the moved-from slots back to front so the indices stay valid (picks ascend per deque).
  for (auto it = picks.rbegin(); it != picks.rend(); ++it) {
    auto& items = it->delayed ? levels_[it->level].delayed : levels_[it->level].waiting;
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(it->index));
  }
  decision.oldest_wait_ns = now_ns - oldest_picked_ns;
  const LatencyProfile::Estimate estimate = load_.profile().Predict(instance, kept);
  decision.predicted_p50_ns = estimate.p50_ns;
  decision.predicted_p99_ns = estimate.p99_ns;
  load_.OnBatchStart(instance, estimate.p50_ns, now_ns);
  return decision;
}

void BatchQueue::OnBatchDone(int instance, int rows, int64_t duration_ns, int64_t now_ns) {
  load_.OnBatchDone(instance, rows, duration_ns, now_ns);
}

std::vector<QueuedRequest> BatchQueue::TakeAll() {
  std::vector<QueuedRequest> all;
  for (Level& level : levels_) {
    for (auto* items : {&level.waiting, &level.delayed}) {
      for (QueuedRequest& queued : *items) all.push_back(std::move(queued));
      items->clear();
    }
    level.rows = 0;
  }
  size_ = 0;
  cancellable_ = 0;
  next_expiry_ns_ = INT64_MAX;
  return all;
}

int64_t BatchQueue::PredictCompletionNs(int rows, int64_t now_ns) const {
  AdmissionView view;
  view.now_ns = now_ns;
  view.rows = std::max(1, rows);
  for (const Level& level : levels_) view.rows_ahead += level.rows;
  view.max_batch_size = batch_limit_;
  view.load = load_.Signals(now_ns);
  const int64_t predicted_ns = policy_->PredictCompletionNs(view);
  return predicted_ns < 0 ? predicted_ns : predicted_ns + load_.lateness_p99_ns(now_ns);
}

}  // namespace brigade::scheduler
