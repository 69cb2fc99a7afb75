#include "scheduler/scheduler.h"

#include <algorithm>
#include <exception>
#include <new>
#include <system_error>
#include <utility>

#include "absl/strings/cord.h"
#include "core/strings.h"
#include "protocol/error_payload.h"
#include "scheduler/cpu_affinity.h"
#include "spdlog/spdlog.h"

namespace brigade::scheduler {
namespace {

int ChooseIntraOpThreads(const Scheduler::Options& options) {
  if (options.intra_op_threads > 0) return options.intra_op_threads;
  const int cores =
      static_cast<int>(options.cpus.empty() ? AvailableCpus().size() : options.cpus.size());
  return std::max(1, cores / std::max(1, options.instance_count));
}

BatchQueueOptions QueueOptions(const Scheduler::Options& options) {
  BatchQueueOptions queue = options.queue;
  queue.instances = std::max(1, options.instance_count);
  return queue;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(
    Options options, std::shared_ptr<engine::Model> model,
    std::shared_ptr<telemetry::ModelStats> stats) {
  if (model == nullptr || stats == nullptr) {
    return absl::InvalidArgumentError("scheduler needs a model and a stats object");
  }
  if (options.instance_count < 1) {
    return absl::InvalidArgumentError(StrCat("model '", options.model_name,
                                             "': instance count must be >= 1, got ",
                                             options.instance_count));
  }
  if (options.instance_count > kMaxInstanceCount) {
    return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': instance count ",
                                             options.instance_count, " exceeds the limit of ",
                                             kMaxInstanceCount));
  }
  if (options.queue.max_batch_size > kMaxBatchSize) {
    return absl::InvalidArgumentError(StrCat("model '", options.model_name, "': max_batch_size ",
                                             options.queue.max_batch_size, " exceeds the limit of ",
                                             kMaxBatchSize));
  }
  if (options.queue.max_queue_size == 0) {
    return absl::InvalidArgumentError(
        StrCat("model '", options.model_name, "': max_queue_size must be > 0"));
  }
  if (options.queue.policy == BatchPolicyKind::kP99Model && options.queue.target_p99_us <= 0) {
    return absl::InvalidArgumentError(StrCat(
        "model '", options.model_name, "': the p99 model policy needs target_p99_microseconds"));
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
                     std::shared_ptr<telemetry::ModelStats> stats)
    : options_(std::move(options)),
      model_(std::move(model)),
      stats_(std::move(stats)),
      intra_op_threads_(ChooseIntraOpThreads(options_)),
      runner_(
          options_.model_name, options_.version, options_.queue.max_batch_size,
          &model_->signature(), stats_.get(), options_.clock,
          [this](QueuedRequest& queued, absl::StatusOr<InferResponse> result) {
            Respond(queued, std::move(result));
          },
          options_.metrics),
      queue_(QueueOptions(options_)),
      decisions_(std::max(1, options_.queue.max_batch_size)),
      slots_(static_cast<size_t>(std::max(1, options_.instance_count))) {}

Scheduler::~Scheduler() { Drain(); }

std::thread Scheduler::StartThread(std::function<void()> body) const {
  if (options_.start_thread) return options_.start_thread(std::move(body));
  return std::thread(std::move(body));
}

absl::Status Scheduler::StartInstances() {
  const auto count = static_cast<size_t>(options_.instance_count);
  // Each thread writes its own slot, then signals under mu_; we read them after all signalled.
  std::vector<absl::Status> statuses(count);
  size_t started = 0;
  absl::Status refused;
  {
    absl::MutexLock lock(&drain_mu_);
    // Reserved first, so that adding a started thread never throws and leaves it unowned.
    try {
      threads_.reserve(count);
      for (; started < count; ++started) {
        threads_.push_back(
            StartThread([this, index = static_cast<int>(started), status = &statuses[started]] {
              InstanceMain(index, status);
            }));
      }
      timer_thread_ = StartThread([this] { TimerLoop(); });
    } catch (const std::system_error& error) {
      refused = absl::ResourceExhaustedError(
          StrCat("model '", options_.model_name, "' version ", options_.version,
                 ": the system refused a thread (", started, " of ", count,
                 " instances started, and the timer): ", error.what()));
    } catch (const std::bad_alloc&) {
      refused = absl::ResourceExhaustedError(StrCat("model '", options_.model_name, "' version ",
                                                    options_.version,
                                                    ": out of memory starting its threads"));
    }
  }
  // Every thread that started reports once; only then may `statuses` go.
  {
    absl::MutexLock lock(&mu_);
    while (started_instances_ < static_cast<int>(started)) start_cv_.Wait(&mu_);
  }
  if (!refused.ok()) return refused;
  for (const absl::Status& status : statuses) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void Scheduler::InstanceMain(int index, absl::Status* start_status) {
  absl::Status status;
  std::unique_ptr<engine::ModelInstance> instance;
  // An exception leaving this thread would end the process; what a backend or a warm-up throws
  // while the instance starts fails this load instead.
  try {
    StartInstance(index, &instance, &status);
  } catch (const std::bad_alloc&) {
    status = absl::ResourceExhaustedError(StrCat("model '", options_.model_name, "' version ",
                                                 options_.version, " instance ", index,
                                                 ": out of memory while starting or warming up"));
  } catch (const std::exception& error) {
    status = absl::InternalError(
        StrCat("model '", options_.model_name, "' version ", options_.version, " instance ", index,
               ": exception while starting or warming up: ", error.what()));
  }
  if (!status.ok()) instance.reset();
  {
    absl::MutexLock lock(&mu_);
    *start_status = status;
    ++started_instances_;
    start_cv_.SignalAll();
  }
  if (status.ok()) ServeLoop(index, instance.get());
}

void Scheduler::StartInstance(int index, std::unique_ptr<engine::ModelInstance>* instance,
                              absl::Status* status) {
  if (options_.pin_threads) {
    *status = PinCurrentThread(InstanceCpus(index, intra_op_threads_, options_.cpus));
  }
  if (status->ok()) {
    absl::StatusOr<std::unique_ptr<engine::ModelInstance>> created =
        model_->CreateInstance({index, intra_op_threads_});
    if (created.ok()) {
      *instance = *std::move(created);
    } else {
      *status = created.status();
    }
  }
  for (size_t w = 0; status->ok() && w < options_.warmups.size(); ++w) {
    std::vector<Tensor> outputs;
    absl::Status warm = (*instance)->Execute(options_.warmups[w].inputs, &outputs);
    if (warm.ok()) continue;
    const std::string& name = options_.warmups[w].name;
    const std::string warmup = name.empty() ? StrCat(w) : StrCat("'", name, "'");
    if (options_.warmup_required || options_.warmups[w].required) {
      *status = absl::Status(warm.code(), StrCat("model '", options_.model_name, "' warm-up ",
                                                 warmup, " failed: ", warm.message()));
    } else {
      spdlog::warn("model '{}' version {}: warm-up {} failed (serving anyway): {}",
                   options_.model_name, options_.version, warmup, warm.message());
    }
  }
}

void Scheduler::ServeLoop(int index, engine::ModelInstance* instance) {
  // A batch is charged from the moment this instance was free to take it — after its previous
  // batch, or on waking — to its end: the lock waits and the decision are part of what a batch
  // costs the instance, and at small batches they are a large part (a profile of execution alone
  // would show no gain from batching where the real throughput doubles).
  int64_t ready_ns = -1;
  mu_.Lock();
  InstanceSlot& slot = slots_[static_cast<size_t>(index)];
  slot.instance = instance;
  slot.lendable = options_.run_inline_max_us > 0 && instance->RunsOnAnyThread();
  while (true) {
    if (slot.lent) {
      // A caller runs a batch on this instance: neither take work nor exit (which would destroy
      // the instance) until it is back.
      slot.idle = false;
      mu_.Await(absl::Condition(
          +[](InstanceSlot* lent_slot) { return !lent_slot->lent; }, &slot));
      ready_ns = -1;
      continue;
    }
    const int64_t now_ns = options_.clock->NowNs();
    if (ready_ns < 0) ready_ns = now_ns;
    BatchQueue::Decision decision = queue_.Next(now_ns, /*flush=*/stopping_, index);
    if (!decision.batch.empty() || !decision.expired.empty()) {
      PublishQueueLength();
      decisions_.RecordRemoved(decision.expired);
      const bool has_batch = !decision.batch.empty();
      if (has_batch) decisions_.RecordRelease(decision, /*inline_run=*/false);
      mu_.Unlock();
      AnswerRemoved(decision.expired);
      int rows = 0;
      int64_t start_ns = 0, end_ns = 0;
      ExpectedDone expected;
      if (has_batch) {
        start_ns = options_.clock->NowNs();
        rows = RunBatch(instance, std::move(decision.batch), &expected);
        end_ns = options_.clock->NowNs();
      }
      mu_.Lock();
      if (has_batch) {
        const int64_t busy_ns = end_ns - std::min(ready_ns, start_ns);
        queue_.OnBatchDone(index, rows, busy_ns, end_ns);
        queue_.mutable_load().OnAnswered(expected, end_ns);
        if (rows > 0) {
          decisions_.RecordOutcome(decision.predicted_p50_ns, decision.predicted_p99_ns, busy_ns);
        }
        ready_ns = end_ns;
      }
      continue;
    }
    if (stopping_) break;
    slot.waiting = true;
    slot.idle = decision.wake_at_ns == INT64_MAX;
    if (decision.wake_at_ns == INT64_MAX) {
      slot.wake.Wait(&mu_);
    } else {
      slot.wake.WaitWithTimeout(&mu_, absl::Nanoseconds(decision.wake_at_ns - now_ns));
    }
    slot.waiting = false;
    slot.idle = false;
    ready_ns = -1;
  }
  slot.instance = nullptr;
  slot.lendable = false;
  mu_.Unlock();
}

Scheduler::Loan Scheduler::TryLend(int rows, int64_t now_ns, std::vector<QueuedRequest>* removed) {
  Loan loan;
  const int64_t max_ns = options_.run_inline_max_us * 1000;
  for (size_t i = 0; i < slots_.size(); ++i) {
    InstanceSlot& slot = slots_[i];
    if (!slot.lendable || !slot.idle || slot.lent) continue;
    const LatencyProfile::Estimate estimate =
        queue_.load().profile().Predict(static_cast<int>(i), rows);
    if (estimate.source == LatencyProfile::Source::kUnknown || estimate.p99_ns > max_ns) continue;
    BatchQueue::Decision decision = queue_.Next(now_ns, /*flush=*/false, static_cast<int>(i));
    for (QueuedRequest& gone : decision.expired) removed->push_back(std::move(gone));
    if (decision.batch.empty()) return loan;  // the policy waits: an instance thread will look
    slot.lent = true;
    ++lent_;
    loan.index = static_cast<int>(i);
    loan.instance = slot.instance;
    loan.decision = std::move(decision);
    return loan;
  }
  return loan;
}

void Scheduler::RunLoan(Loan loan) {
  // What queues behind a lent instance is the lender's to serve while it stays short: waking the
  // instance's thread for it would cost the hand-off run to completion saves. Bounded, so that
  // the lender's own connections wait at most about run_inline_max_us plus one batch.
  const int64_t max_ns = options_.run_inline_max_us * 1000;
  const int64_t loan_start_ns = options_.clock->NowNs();
  std::vector<QueuedRequest> removed;
  while (true) {
    const int64_t start_ns = options_.clock->NowNs();
    ExpectedDone expected;
    const int rows = RunBatch(loan.instance, std::move(loan.decision.batch), &expected);
    const int64_t end_ns = options_.clock->NowNs();
    mu_.Lock();
    queue_.OnBatchDone(loan.index, rows, end_ns - start_ns, end_ns);
    queue_.mutable_load().OnAnswered(expected, end_ns);
    if (rows > 0) {
      decisions_.RecordOutcome(loan.decision.predicted_p50_ns, loan.decision.predicted_p99_ns,
                               end_ns - start_ns);
    }
    loan.decision = {};
    const LatencyProfile::Estimate largest =
        queue_.load().profile().Predict(loan.index, queue_.batch_limit());
    if (!stopping_ && !queue_.empty() && end_ns - loan_start_ns < max_ns &&
        largest.source != LatencyProfile::Source::kUnknown && largest.p99_ns <= max_ns) {
      loan.decision = queue_.Next(end_ns, /*flush=*/false, loan.index);
      PublishQueueLength();
      decisions_.RecordRemoved(loan.decision.expired);
      removed = std::move(loan.decision.expired);
      if (!loan.decision.batch.empty()) {
        decisions_.RecordRelease(loan.decision, /*inline_run=*/true);
        mu_.Unlock();
        AnswerRemoved(removed);
        removed.clear();
        continue;
      }
    }
    slots_[static_cast<size_t>(loan.index)].lent = false;
    --lent_;
    // What is still queued waits for an instance thread that may be asleep.
    if (!queue_.empty() || stopping_) SignalWork();
    mu_.Unlock();
    break;
  }
  AnswerRemoved(removed);
}

void Scheduler::SignalWork() {
  for (InstanceSlot& slot : slots_) {
    if (slot.waiting && !slot.lent) {
      // Counted as awake from now, so the next signal goes to another waiting thread.
      slot.waiting = false;
      slot.wake.Signal();
      return;
    }
  }
  // None waits: the busy ones look at the queue when their batch ends, a lent one when it is
  // back.
}

void Scheduler::SignalAllInstances() {
  for (InstanceSlot& slot : slots_) {
    slot.waiting = false;
    slot.wake.Signal();
  }
}

void Scheduler::TimerLoop() {
  mu_.Lock();
  while (!stopping_) {
    const int64_t now_ns = options_.clock->NowNs();
    std::vector<QueuedRequest> removed = queue_.Expire(now_ns);
    if (!removed.empty()) {
      PublishQueueLength();
      decisions_.RecordRemoved(removed);
      // Freed slots may let a waiting decision change (fewer rows); let an instance look again.
      SignalWork();
      mu_.Unlock();
      AnswerRemoved(removed);
      mu_.Lock();
      continue;
    }
    int64_t wake_ns = queue_.next_expiry_ns();
    if (queue_.cancellable() > 0 && options_.cancel_poll_us > 0) {
      wake_ns = std::min(wake_ns, now_ns + options_.cancel_poll_us * 1000);
    }
    timer_wake_ns_ = wake_ns;
    if (wake_ns == INT64_MAX) {
      timer_cv_.Wait(&mu_);
    } else if (wake_ns > now_ns) {
      timer_cv_.WaitWithTimeout(&mu_, absl::Nanoseconds(wake_ns - now_ns));
    }
  }
  timer_wake_ns_ = INT64_MAX;
  mu_.Unlock();
}

void Scheduler::AnswerRemoved(std::vector<QueuedRequest>& removed) {
  for (QueuedRequest& queued : removed) {
    if (options_.preserve_ordering) orderer_.Skip(queued.sequence);
    if (queued.request->cancelled()) {
      queued.request->Complete(absl::CancelledError(
          StrCat("model '", options_.model_name, "': request cancelled by the client")));
    } else {
      queued.request->Complete(absl::DeadlineExceededError(
          StrCat("model '", options_.model_name, "': request timed out in the queue")));
    }
  }
}

int Scheduler::RunBatch(engine::ModelInstance* instance, std::vector<QueuedRequest> batch,
                        ExpectedDone* expected) {
  // A client that went away between the decision and now: skip its work.
  std::vector<QueuedRequest> cancelled;
  for (auto it = batch.begin(); it != batch.end();) {
    if (it->request->cancelled()) {
      cancelled.push_back(std::move(*it));
      it = batch.erase(it);
    } else {
      ++it;
    }
  }
  if (!cancelled.empty()) {
    {
      absl::MutexLock lock(&mu_);
      decisions_.RecordCancelledBeforeStart(cancelled.size());
    }
    AnswerRemoved(cancelled);
  }
  int rows = 0;
  for (const QueuedRequest& queued : batch) {
    rows += queued.rows;
    expected->push_back(queued.expected_done_ns);
  }
  runner_.Run(instance, std::move(batch));
  return rows;
}

void Scheduler::Respond(QueuedRequest& queued, absl::StatusOr<InferResponse> result) {
  if (options_.preserve_ordering) {
    orderer_.Complete(queued.sequence, std::move(queued.request), std::move(result));
  } else {
    queued.request->Complete(std::move(result));
  }
}

absl::Status Scheduler::RefusalStatus(const BatchQueue::Admission& admission,
                                      int64_t now_ns) const {
  const std::string& model = options_.model_name;
  switch (admission.refusal) {
    case Refusal::kQueueFull:
      return protocol::WithRetryAfter(
          absl::UnavailableError(StrCat("model '", model, "': queue is full (",
                                        options_.queue.max_queue_size, " requests)")),
          1);
    case Refusal::kLevelFull:
      return protocol::WithRetryAfter(
          absl::UnavailableError(
              StrCat("model '", model, "': priority level ", admission.level, " queue is full")),
          1);
    case Refusal::kExpired:
      return absl::DeadlineExceededError(
          StrCat("model '", model, "': the request's deadline passed before it was queued"));
    case Refusal::kPredictedLate: {
      const int64_t predicted_us = (admission.predicted_completion_ns - now_ns) / 1000;
      const int64_t allowed_us = (admission.admission_deadline_ns - now_ns) / 1000;
      return protocol::WithRetryAfter(
          absl::UnavailableError(StrCat("model '", model, "': overloaded; predicted completion in ",
                                        predicted_us, " us exceeds the request's budget of ",
                                        allowed_us, " us")),
          (admission.predicted_completion_ns - now_ns + 999'999'999) / 1'000'000'000);
    }
    case Refusal::kNone:
      break;
  }
  return absl::OkStatus();
}

void Scheduler::Enqueue(std::unique_ptr<InferRequest> request) {
  const int64_t now_ns = options_.clock->NowNs();
  request->clock.Mark(Stage::kQueueEnter, now_ns);
  const bool cancellable = request->cancel != nullptr;
  const int rows = RequestRows(*request, options_.queue.max_batch_size);
  bool stopping = false;
  BatchQueue::Admission admission;
  // The request when it is not admitted (draining, or refused by the queue).
  std::unique_ptr<InferRequest> refused;
  Loan loan;
  std::vector<QueuedRequest> removed;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
    if (stopping) {
      refused = std::move(request);
    } else {
      const bool alone = queue_.empty();
      admission = queue_.Push(std::move(request), now_ns);
      refused = std::move(admission.refused);
      if (refused == nullptr) {
        decisions_.RecordAdmitted();
        if (alone && options_.run_inline_max_us > 0) loan = TryLend(rows, now_ns, &removed);
        PublishQueueLength();
        decisions_.RecordRemoved(removed);
        if (loan.index >= 0) {
          decisions_.RecordRelease(loan.decision, /*inline_run=*/true);
        } else {
          SignalWork();
          // Wake the timer for an earlier timeout, or to start polling cancel flags.
          if (admission.deadline_ns < timer_wake_ns_ ||
              (cancellable && timer_wake_ns_ == INT64_MAX && options_.cancel_poll_us > 0)) {
            timer_cv_.Signal();
          }
        }
      }
    }
  }
  if (refused == nullptr) {
    AnswerRemoved(removed);
    if (loan.index >= 0) RunLoan(std::move(loan));
    return;
  }
  absl::Status status =
      stopping ? absl::UnavailableError(StrCat("model '", options_.model_name, "' version ",
                                               options_.version, " is being unloaded"))
               : RefusalStatus(admission, now_ns);
  refused->Complete(std::move(status));
  const int64_t latency_ns = options_.clock->NowNs() - now_ns;
  absl::MutexLock lock(&mu_);
  if (stopping) {
    decisions_.RecordRefusedDraining(latency_ns);
  } else {
    decisions_.RecordRefusal(admission.refusal, latency_ns);
  }
}

void Scheduler::Drain() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    SignalAllInstances();
    timer_cv_.SignalAll();
  }
  {
    absl::MutexLock lock(&drain_mu_);
    for (std::thread& thread : threads_) {
      if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
    }
    if (timer_thread_.joinable() && timer_thread_.get_id() != std::this_thread::get_id()) {
      timer_thread_.join();
    }
  }
  // Only reached with work left if no instance ever started.
  std::vector<QueuedRequest> left;
  {
    absl::MutexLock lock(&mu_);
    left = queue_.TakeAll();
    PublishQueueLength();
  }
  for (QueuedRequest& queued : left) {
    if (options_.preserve_ordering) orderer_.Skip(queued.sequence);
    queued.request->Complete(absl::UnavailableError(
        StrCat("model '", options_.model_name, "' version ", options_.version, " stopped")));
  }
}

void Scheduler::PublishQueueLength() {
  if (options_.metrics == nullptr) return;
  // Moved by the change, not set: a version reloaded in place shares its gauge with the
  // scheduler it replaces while that one drains.
  const auto size = static_cast<int64_t>(queue_.size());
  options_.metrics->queue_length().Add(size - published_queue_length_);
  published_queue_length_ = size;
}

size_t Scheduler::queue_size() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

int64_t Scheduler::PredictCompletionNs(int rows) const {
  absl::MutexLock lock(&mu_);
  return queue_.PredictCompletionNs(rows, options_.clock->NowNs());
}

SchedulerSnapshot Scheduler::Snapshot() const {
  const size_t held = orderer_.held();
  absl::MutexLock lock(&mu_);
  const int64_t now_ns = options_.clock->NowNs();
  SchedulerSnapshot snapshot = decisions_.counters();
  snapshot.model_name = options_.model_name;
  snapshot.version = options_.version;
  snapshot.policy = std::string(queue_.policy().name());
  snapshot.delayed = queue_.delayed_total();
  snapshot.queue_size = queue_.size();
  const int levels = std::max(1, options_.queue.priority_levels);
  for (int level = 1; level <= levels; ++level) {
    snapshot.level_sizes.push_back(queue_.level_size(level));
  }
  snapshot.held_for_ordering = held;
  const LoadSignals signals = queue_.load().Signals(now_ns);
  snapshot.arrival_rows_per_s = signals.arrival_rows_per_s;
  snapshot.utilization = signals.utilization;
  snapshot.busy_instances = signals.busy_instances;
  snapshot.profile = queue_.load().profile().Points(now_ns);
  return snapshot;
}

}  // namespace brigade::scheduler
