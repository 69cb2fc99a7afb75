#include "schedule/batch_queue.h"

#include <algorithm>
#include <utility>

namespace brigade::schedule {

int RequestRows(const InferRequest& request, int max_batch_size) {
  if (max_batch_size <= 0 || request.inputs.empty()) return 1;
  const Shape& shape = request.inputs[0].tensor.shape();
  return shape.empty() ? 1 : static_cast<int>(shape[0]);
}

BatchQueue::BatchQueue(BatchQueueOptions options)
    : options_(std::move(options)),
      levels_(static_cast<size_t>(std::max(1, options_.priority_levels))) {}

int BatchQueue::LevelOf(const InferRequest& request) const {
  const int levels = static_cast<int>(levels_.size());
  int level = request.priority == 0
                  ? options_.default_priority_level
                  : static_cast<int>(std::min<uint32_t>(request.priority, 1u << 30));
  return std::clamp(level, 1, levels) - 1;
}

std::unique_ptr<InferRequest> BatchQueue::Push(std::unique_ptr<InferRequest> request,
                                               int64_t now_ns) {
  if (size_ >= options_.max_queue_size) return request;
  const int rows = RequestRows(*request, options_.max_batch_size);
  const int level = LevelOf(*request);
  levels_[static_cast<size_t>(level)].push_back({std::move(request), now_ns, rows});
  ++size_;
  return nullptr;
}

bool BatchQueue::Compatible(const InferRequest& a, const InferRequest& b) const {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
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

void BatchQueue::CollectExpired(int64_t now_ns, std::vector<QueuedRequest>* expired) {
  for (auto& level : levels_) {
    for (auto it = level.begin(); it != level.end();) {
      if (it->request->deadline.ExpiredAt(now_ns) || it->request->cancelled()) {
        expired->push_back(std::move(*it));
        it = level.erase(it);
        --size_;
      } else {
        ++it;
      }
    }
  }
}

BatchQueue::Decision BatchQueue::Next(int64_t now_ns, bool flush) {
  Decision decision;
  CollectExpired(now_ns, &decision.expired);
  if (size_ == 0) return decision;

  // Earliest deadline among what stays queued: the next time something may expire.
  int64_t earliest_deadline = INT64_MAX;
  for (const auto& level : levels_) {
    for (const QueuedRequest& queued : level) {
      earliest_deadline = std::min(earliest_deadline, queued.request->deadline.ns());
    }
  }

  // The head of the highest non-empty level leads the batch.
  size_t lead_level = 0;
  while (levels_[lead_level].empty()) ++lead_level;
  const bool batching = options_.dynamic_batching && options_.max_batch_size > 0;
  if (!batching) {
    decision.batch.push_back(std::move(levels_[lead_level].front()));
    levels_[lead_level].pop_front();
    --size_;
    return decision;
  }

  // Candidates in priority-then-FIFO order: compatible with the leader, rows within the limit.
  const InferRequest& lead = *levels_[lead_level].front().request;
  struct Pick {
    size_t level;
    size_t index;
    int rows;
  };
  std::vector<Pick> picks;
  int rows = 0;
  int64_t oldest_ns = INT64_MAX;
  for (size_t l = lead_level; l < levels_.size() && rows < options_.max_batch_size; ++l) {
    for (size_t i = 0; i < levels_[l].size() && rows < options_.max_batch_size; ++i) {
      const QueuedRequest& queued = levels_[l][i];
      if (rows + queued.rows > options_.max_batch_size && !picks.empty()) continue;
      if (!picks.empty() && !Compatible(lead, *queued.request)) continue;
      picks.push_back({l, i, queued.rows});
      rows += queued.rows;
      oldest_ns = std::min(oldest_ns, queued.enqueue_ns);
    }
  }

  const auto& preferred = options_.preferred_batch_sizes;
  const bool full = rows >= options_.max_batch_size;
  const bool exactly_preferred =
      std::find(preferred.begin(), preferred.end(), rows) != preferred.end();
  const int64_t delay_ns = options_.max_queue_delay_us * 1000;
  const bool delay_expired = flush || now_ns - oldest_ns >= delay_ns;
  if (!full && !exactly_preferred && !delay_expired) {
    decision.wake_at_ns = std::min(oldest_ns + delay_ns, earliest_deadline);
    return decision;
  }

  // Released. When the delay forced it and preferred sizes exist, cut to the largest one that
  // the picked prefix can fill exactly or under.
  if (!full && !exactly_preferred && !preferred.empty()) {
    int best = 0;
    for (int size : preferred) {
      if (size <= rows) best = std::max(best, size);
    }
    if (best > 0) {
      int kept = 0;
      size_t count = 0;
      while (count < picks.size() && kept + picks[count].rows <= best) kept += picks[count++].rows;
      if (count > 0) picks.resize(count);
    }
  }

  decision.batch.reserve(picks.size());
  for (const Pick& pick : picks) {
    decision.batch.push_back(std::move(levels_[pick.level][pick.index]));
  }
  // Erase the moved-from slots, back to front per level so indices stay valid.
  for (auto it = picks.rbegin(); it != picks.rend(); ++it) {
    auto& level = levels_[it->level];
    level.erase(level.begin() + static_cast<std::ptrdiff_t>(it->index));
  }
  size_ -= picks.size();
  return decision;
}

std::vector<QueuedRequest> BatchQueue::TakeAll() {
  std::vector<QueuedRequest> all;
  for (auto& level : levels_) {
    for (QueuedRequest& queued : level) all.push_back(std::move(queued));
    level.clear();
  }
  size_ = 0;
  return all;
}

}  // namespace brigade::schedule
