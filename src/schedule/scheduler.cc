#include "schedule/scheduler.h"

#include <algorithm>
#include <utility>

#include "core/strings.h"
#include "schedule/cpu_affinity.h"
#include "spdlog/spdlog.h"

namespace brigade::schedule {
namespace {

int ChooseIntraOpThreads(const Scheduler::Options& options) {
  if (options.intra_op_threads > 0) return options.intra_op_threads;
  const int cores =
      static_cast<int>(options.cpus.empty() ? AvailableCpus().size() : options.cpus.size());
  return std::max(1, cores / std::max(1, options.instance_count));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    Options options, std::shared_ptr<engine::Model> model,
    std::shared_ptr<observe::ModelStats> stats) {
  if (model == nullptr || stats == nullptr) {
    return absl::InvalidArgumentError("scheduler needs a model and a stats object");
  }
  if (options.instance_count < 1) {
    return absl::InvalidArgumentError(StrCat("model '", options.model_name,
                                             "': instance count must be >= 1, got ",
                                             options.instance_count));
  }
  if (options.queue.max_queue_size == 0) {
    return absl::InvalidArgumentError(
        StrCat("model '", options.model_name, "': max_queue_size must be > 0"));
  }
  auto scheduler = std::make_unique<Scheduler>(ConstructionTag(), std::move(options),
                                               std::move(model), std::move(stats));
  absl::Status status = scheduler->StartInstances();
  if (!status.ok()) {
    scheduler->Drain();
    return status;
  }
  return scheduler;
}

Scheduler::Scheduler(ConstructionTag, Options options, std::shared_ptr<engine::Model> model,
                     std::shared_ptr<observe::ModelStats> stats)
    : options_(std::move(options)),
      model_(std::move(model)),
      stats_(std::move(stats)),
      intra_op_threads_(ChooseIntraOpThreads(options_)),
      runner_(options_.model_name, options_.version, options_.queue.max_batch_size,
              &model_->signature(), stats_.get(), options_.clock),
      queue_(options_.queue) {}

Scheduler::~Scheduler() { Drain(); }

absl::Status Scheduler::StartInstances() {
  const auto count = static_cast<size_t>(options_.instance_count);
  // Each thread writes its own slot, then signals under mu_; we read them after all signalled.
  std::vector<absl::Status> statuses(count);
  {
    absl::MutexLock lock(&drain_mu_);
    threads_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      threads_.emplace_back(&Scheduler::InstanceMain, this, static_cast<int>(i), &statuses[i]);
    }
  }
  {
    absl::MutexLock lock(&mu_);
    while (started_instances_ < options_.instance_count) start_cv_.Wait(&mu_);
  }
  for (const absl::Status& status : statuses) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void Scheduler::InstanceMain(int index, absl::Status* start_status) {
  absl::Status status;
  std::unique_ptr<engine::ModelInstance> instance;
  if (options_.pin_threads) {
    status = PinCurrentThread(InstanceCpus(index, intra_op_threads_, options_.cpus));
  }
  if (status.ok()) {
    absl::StatusOr<std::unique_ptr<engine::ModelInstance>> created =
        model_->CreateInstance({index, intra_op_threads_});
    if (created.ok()) {
      instance = *std::move(created);
    } else {
      status = created.status();
    }
  }
  for (size_t w = 0; status.ok() && w < options_.warmup_inputs.size(); ++w) {
    std::vector<Tensor> outputs;
    absl::Status warm = instance->Execute(options_.warmup_inputs[w], &outputs);
    if (warm.ok()) continue;
    if (options_.warmup_required) {
      status = absl::Status(warm.code(), StrCat("model '", options_.model_name, "' warm-up ", w,
                                                " failed: ", warm.message()));
    } else {
      spdlog::warn("model '{}' version {}: warm-up {} failed (serving anyway): {}",
                   options_.model_name, options_.version, w, warm.message());
    }
  }
  {
    absl::MutexLock lock(&mu_);
    *start_status = status;
    ++started_instances_;
    start_cv_.SignalAll();
  }
  if (status.ok()) ServeLoop(instance.get());
}

void Scheduler::ServeLoop(engine::ModelInstance* instance) {
  mu_.Lock();
  while (true) {
    const int64_t now_ns = options_.clock->NowNs();
    BatchQueue::Decision decision = queue_.Next(now_ns, /*flush=*/stopping_);
    if (!decision.batch.empty() || !decision.expired.empty()) {
      mu_.Unlock();
      AnswerExpired(decision.expired);
      runner_.Run(instance, std::move(decision.batch));
      mu_.Lock();
      continue;
    }
    if (stopping_) break;
    if (decision.wake_at_ns == INT64_MAX) {
      work_cv_.Wait(&mu_);
    } else {
      work_cv_.WaitWithTimeout(&mu_, absl::Nanoseconds(decision.wake_at_ns - now_ns));
    }
  }
  mu_.Unlock();
}

void Scheduler::AnswerExpired(std::vector<QueuedRequest>& expired) const {
  for (QueuedRequest& queued : expired) {
    if (queued.request->cancelled()) {
      queued.request->Complete(absl::CancelledError(
          StrCat("model '", options_.model_name, "': request cancelled by the client")));
    } else {
      queued.request->Complete(absl::DeadlineExceededError(
          StrCat("model '", options_.model_name, "': request timed out in the queue")));
    }
  }
}

void Scheduler::Enqueue(std::unique_ptr<InferRequest> request) {
  const int64_t now_ns = options_.clock->NowNs();
  request->clock.Mark(Stage::kQueueEnter, now_ns);
  bool stopping = false;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
    if (!stopping) {
      request = queue_.Push(std::move(request), now_ns);
      if (request == nullptr) work_cv_.Signal();
    }
  }
  if (request == nullptr) return;
  request->Complete(
      absl::UnavailableError(stopping ? StrCat("model '", options_.model_name, "' version ",
                                               options_.version, " is being unloaded")
                                      : StrCat("model '", options_.model_name, "': queue is full (",
                                               options_.queue.max_queue_size, " requests)")));
}

void Scheduler::Drain() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_cv_.SignalAll();
  }
  {
    absl::MutexLock lock(&drain_mu_);
    for (std::thread& thread : threads_) {
      if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
    }
  }
  // Only reached with work left if no instance ever started.
  std::vector<QueuedRequest> left;
  {
    absl::MutexLock lock(&mu_);
    left = queue_.TakeAll();
  }
  for (QueuedRequest& queued : left) {
    queued.request->Complete(absl::UnavailableError(
        StrCat("model '", options_.model_name, "' version ", options_.version, " stopped")));
  }
}

size_t Scheduler::queue_size() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

}  // namespace brigade::schedule
