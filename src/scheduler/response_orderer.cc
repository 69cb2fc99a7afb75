#include "scheduler/response_orderer.h"

#include <utility>
#include <vector>

namespace brigade::scheduler {

void ResponseOrderer::Complete(uint64_t sequence, std::unique_ptr<InferRequest> request,
                               absl::StatusOr<InferResponse> result) {
  Deposit(sequence, {std::move(request), std::move(result)});
}

void ResponseOrderer::Skip(uint64_t sequence) {
  Deposit(sequence, {nullptr, absl::CancelledError("skipped")});
}

size_t ResponseOrderer::held() const {
  absl::MutexLock lock(&mu_);
  size_t held = 0;
  for (const auto& [sequence, entry] : pending_) held += entry.request != nullptr ? 1 : 0;
  return held;
}

void ResponseOrderer::Deposit(uint64_t sequence, Entry entry) {
  std::vector<Entry> ready;
  {
    absl::MutexLock lock(&mu_);
    pending_.emplace(sequence, std::move(entry));
    // Another thread is answering: it will find this entry when it looks again.
    if (releasing_) return;
    releasing_ = true;
  }
  while (true) {
    ready.clear();
    {
      absl::MutexLock lock(&mu_);
      for (auto it = pending_.begin(); it != pending_.end() && it->first == next_;
           it = pending_.erase(it)) {
        ready.push_back(std::move(it->second));
        ++next_;
      }
      if (ready.empty()) {
        releasing_ = false;
        return;
      }
    }
    for (Entry& item : ready) {
      if (item.request != nullptr) item.request->Complete(std::move(item.result));
    }
  }
}

}  // namespace brigade::scheduler
