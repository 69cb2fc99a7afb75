#include "pipeline/admission.h"

namespace brigade::pipeline {

absl::Status Admission::Admit(InferRequest& request) const {
  request.clock.MarkOnce(Stage::kArrival, clock_->NowNs());
  if (draining()) return absl::UnavailableError("server is shutting down");
  return absl::OkStatus();
}

void Admission::Enter() {
  absl::MutexLock lock(&mu_);
  ++in_flight_;
}

void Admission::Leave() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

void Admission::StartDrain() { draining_.store(true, std::memory_order_release); }

bool Admission::draining() const { return draining_.load(std::memory_order_acquire); }

bool Admission::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

int64_t Admission::in_flight() {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

}  // namespace brigade::pipeline
