// Run to completion (Scheduler::Options::run_inline_max_us): which requests run on the thread
// that enqueues them, and that lending an instance keeps the scheduler's guarantees (one caller
// per instance, nothing lost, drain waits for a lent instance).

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "engine/builtin/builtin_backend.h"
#include "gtest/gtest.h"
#include "scheduler/scheduler.h"

namespace brigade::scheduler {
namespace {

std::shared_ptr<engine::Model> AddSubModel(int max_batch_size) {
  engine::ModelLoadOptions options;
  options.model_name = "simple";
  options.max_batch_size = max_batch_size;
  options.parameters["op"] = "add_sub";
  options.declared_inputs = {{"INPUT0", DataType::kInt32, {-1, 2}},
                             {"INPUT1", DataType::kInt32, {-1, 2}}};
  options.declared_outputs = {{"OUTPUT0", DataType::kInt32, {-1, 2}},
                              {"OUTPUT1", DataType::kInt32, {-1, 2}}};
  engine::BuiltinBackend backend;
  return *backend.Load(options);
}

// add_sub that records which thread ran each batch and how many ran at once on one instance, and
// can hold the batch whose INPUT0 is `gate_value` until Open(), or spin `cost` per batch.
class RecordingModel : public engine::Model {
 public:
  struct Options {
    bool any_thread = true;
    int32_t gate_value = -1;
    absl::Duration cost = absl::ZeroDuration();
  };
  explicit RecordingModel(Options options) : inner_(AddSubModel(8)), options_(options) {}

  const engine::ModelSignature& signature() const override { return inner_->signature(); }
  absl::StatusOr<std::unique_ptr<engine::ModelInstance>> CreateInstance(
      const engine::InstanceOptions& options) override {
    BRIGADE_ASSIGN_OR_RETURN(auto inner, inner_->CreateInstance(options));
    return std::make_unique<Instance>(this, std::move(inner));
  }

  void Open() { open_.Notify(); }
  void WaitUntilHeld() { held_.WaitForNotification(); }
  // Threads that ran a batch whose INPUT0 was `value`.
  std::vector<std::thread::id> ThreadsOf(int32_t value) {
    absl::MutexLock lock(&mu_);
    std::vector<std::thread::id> threads;
    for (const auto& [v, id] : runs_) {
      if (v == value) threads.push_back(id);
    }
    return threads;
  }
  // Most Execute calls ever in progress at once on one instance.
  int max_overlap() const { return max_overlap_.load(); }

 private:
  class Instance : public engine::ModelInstance {
   public:
    Instance(RecordingModel* model, std::unique_ptr<engine::ModelInstance> inner)
        : model_(model), inner_(std::move(inner)) {}
    absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) override {
      const int overlap = in_execute_.fetch_add(1) + 1;
      int seen = model_->max_overlap_.load();
      while (overlap > seen && !model_->max_overlap_.compare_exchange_weak(seen, overlap)) {
      }
      const int32_t value = inputs[0].values<int32_t>()[0];
      {
        absl::MutexLock lock(&model_->mu_);
        model_->runs_.emplace_back(value, std::this_thread::get_id());
      }
      if (value == model_->options_.gate_value) {
        model_->held_.Notify();
        model_->open_.WaitForNotification();
      }
      if (model_->options_.cost > absl::ZeroDuration()) {
        const absl::Time until = absl::Now() + model_->options_.cost;
        while (absl::Now() < until) {
        }
      }
      absl::Status status = inner_->Execute(inputs, outputs);
      in_execute_.fetch_sub(1);
      return status;
    }
    bool RunsOnAnyThread() const override { return model_->options_.any_thread; }

   private:
    RecordingModel* model_;
    std::unique_ptr<engine::ModelInstance> inner_;
    std::atomic<int> in_execute_{0};
  };

  std::shared_ptr<engine::Model> inner_;
  const Options options_;
  absl::Mutex mu_;
  std::vector<std::pair<int32_t, std::thread::id>> runs_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> max_overlap_{0};
  absl::Notification held_;
  absl::Notification open_;
};

std::unique_ptr<InferRequest> Request(int32_t value, InferCallback callback) {
  auto request = std::make_unique<InferRequest>();
  std::vector<int32_t> x = {value, value}, y = {1, 1};
  request->inputs.push_back({"INPUT0", *Tensor::FromValues<int32_t>({1, 2}, x), {}});
  request->inputs.push_back({"INPUT1", *Tensor::FromValues<int32_t>({1, 2}, y), {}});
  request->on_complete = std::move(callback);
  return request;
}

Scheduler::Options InlineOptions(int64_t run_inline_max_us, int instances = 1) {
  Scheduler::Options options;
  options.model_name = "simple";
  options.queue.max_batch_size = 8;
  options.instance_count = instances;
  options.pin_threads = false;
  options.run_inline_max_us = run_inline_max_us;
  return options;
}

// Counts answers; Wait() blocks until `expected` arrived.
class Answers {
 public:
  InferCallback Callback() {
    return [this](const absl::StatusOr<InferResponse>& result) {
      absl::MutexLock lock(&mu_);
      ok_ += result.ok() ? 1 : 0;
      ++count_;
    };
  }
  void Wait(int expected) {
    absl::MutexLock lock(&mu_);
    auto arrived = [this, expected]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return count_ >= expected; };
    mu_.Await(absl::Condition(&arrived));
  }
  int count() {
    absl::MutexLock lock(&mu_);
    return count_;
  }
  int ok() {
    absl::MutexLock lock(&mu_);
    return ok_;
  }

 private:
  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  int ok_ ABSL_GUARDED_BY(mu_) = 0;
};

// Sends `count` requests with INPUT0 = `value` one after another, each once the previous one is
// answered and its instance is idle again (as a client over a network finds it: an instance
// thread answers from inside its batch and is back waiting within microseconds, long before the
// next request can arrive); returns how many were answered before Enqueue returned (an instance
// thread may answer that fast too: only the thread that ran a batch tells the paths apart).
int SendOneByOne(Scheduler& scheduler, int32_t value, int count) {
  int answered_inside = 0;
  for (int i = 0; i < count; ++i) {
    Answers answers;
    scheduler.Enqueue(Request(value, answers.Callback()));
    answered_inside += answers.count();
    answers.Wait(1);
    while (scheduler.Snapshot().busy_instances > 0) std::this_thread::yield();
  }
  return answered_inside;
}

TEST(SchedulerRunInlineTest, AnIdleModelRunsTheRequestOnTheEnqueuingThreadOnceProfiled) {
  auto model = std::make_shared<RecordingModel>(RecordingModel::Options{});
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(InlineOptions(1'000'000), model, stats);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  // Unknown models hand off: nothing runs inline before the profile can predict the batch.
  SendOneByOne(**scheduler, 1, 16);
  ASSERT_FALSE(model->ThreadsOf(1).empty());
  EXPECT_NE(model->ThreadsOf(1).front(), std::this_thread::get_id());

  EXPECT_EQ(SendOneByOne(**scheduler, 2, 10), 10);
  const std::vector<std::thread::id> threads = model->ThreadsOf(2);
  ASSERT_EQ(threads.size(), 10u);
  for (const std::thread::id id : threads) EXPECT_EQ(id, std::this_thread::get_id());
  EXPECT_GE((*scheduler)->Snapshot().inline_batches, 10u);
  EXPECT_EQ(stats->Snapshot().inference_count, 26u);
}

TEST(SchedulerRunInlineTest, AnInstanceBoundToItsThreadIsNeverLent) {
  auto model = std::make_shared<RecordingModel>(RecordingModel::Options{.any_thread = false});
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(InlineOptions(1'000'000), model, stats);
  ASSERT_TRUE(scheduler.ok());
  SendOneByOne(**scheduler, 1, 30);
  ASSERT_EQ(model->ThreadsOf(1).size(), 30u);
  for (const std::thread::id id : model->ThreadsOf(1)) EXPECT_NE(id, std::this_thread::get_id());
  EXPECT_EQ((*scheduler)->Snapshot().inline_batches, 0u);
}

TEST(SchedulerRunInlineTest, ABatchPredictedLongerThanTheBoundRunsOnTheInstanceThread) {
  auto model =
      std::make_shared<RecordingModel>(RecordingModel::Options{.cost = absl::Milliseconds(2)});
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(InlineOptions(500), model, stats);
  ASSERT_TRUE(scheduler.ok());
  SendOneByOne(**scheduler, 1, 20);
  ASSERT_EQ(model->ThreadsOf(1).size(), 20u);
  for (const std::thread::id id : model->ThreadsOf(1)) EXPECT_NE(id, std::this_thread::get_id());
  EXPECT_EQ((*scheduler)->Snapshot().inline_batches, 0u);
}

TEST(SchedulerRunInlineTest, ZeroBoundAlwaysHandsOff) {
  auto model = std::make_shared<RecordingModel>(RecordingModel::Options{});
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(InlineOptions(0), model, stats);
  ASSERT_TRUE(scheduler.ok());
  SendOneByOne(**scheduler, 1, 30);
  ASSERT_EQ(model->ThreadsOf(1).size(), 30u);
  for (const std::thread::id id : model->ThreadsOf(1)) EXPECT_NE(id, std::this_thread::get_id());
  EXPECT_EQ((*scheduler)->Snapshot().inline_batches, 0u);
}

// One instance, lent to `lender` for a request held while two more arrive and the scheduler's
// (fake) clock moves `hold_us`; returns the threads that ran the two (after checking both were
// answered and nothing overlapped).
struct LentScenario {
  std::thread::id lender;
  std::vector<std::thread::id> queued;
};
LentScenario QueueBehindALoan(int64_t run_inline_max_us, int64_t hold_us) {
  auto model = std::make_shared<RecordingModel>(RecordingModel::Options{.gate_value = 7});
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  FakeClock clock;
  Scheduler::Options options = InlineOptions(run_inline_max_us);
  options.clock = &clock;
  auto scheduler = Scheduler::Create(options, model, stats);
  if (!scheduler.ok()) {
    ADD_FAILURE() << scheduler.status();
    return {};
  }
  SendOneByOne(**scheduler, 1, 16);  // profiled
  Answers held;
  std::thread lender([&] { (*scheduler)->Enqueue(Request(7, held.Callback())); });
  model->WaitUntilHeld();
  Answers later;
  (*scheduler)->Enqueue(Request(8, later.Callback()));
  (*scheduler)->Enqueue(Request(9, later.Callback()));
  EXPECT_EQ(later.count(), 0);  // the only instance is lent: nothing can run them yet
  clock.AdvanceUs(hold_us);
  model->Open();
  LentScenario scenario{lender.get_id(), {}};
  lender.join();
  later.Wait(2);
  EXPECT_EQ(held.ok(), 1);
  EXPECT_EQ(later.ok(), 2);
  EXPECT_EQ(model->max_overlap(), 1);
  for (const int32_t value : {8, 9}) {
    for (const std::thread::id id : model->ThreadsOf(value)) scenario.queued.push_back(id);
  }
  EXPECT_EQ(scenario.queued.size(), 2u);
  return scenario;
}

TEST(SchedulerRunInlineTest, WhatQueuesBehindALoanIsServedByTheLenderWithoutAWakeUp) {
  const LentScenario scenario = QueueBehindALoan(1'000'000, 0);
  for (const std::thread::id id : scenario.queued) EXPECT_EQ(id, scenario.lender);
}

TEST(SchedulerRunInlineTest, ALoanOlderThanTheBoundGoesBackToTheInstanceThread) {
  // Held 20 ms against a 1 ms bound: the lender returns the instance, whose own thread serves
  // what queued, so the lender's connections are not kept waiting.
  const LentScenario scenario = QueueBehindALoan(1000, 20'000);
  for (const std::thread::id id : scenario.queued) {
    EXPECT_NE(id, scenario.lender);
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(SchedulerRunInlineTest, DrainWaitsForALentInstance) {
  auto model = std::make_shared<RecordingModel>(RecordingModel::Options{.gate_value = 7});
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(InlineOptions(1'000'000), model, stats);
  ASSERT_TRUE(scheduler.ok());
  SendOneByOne(**scheduler, 1, 16);
  Answers held;
  std::thread lender([&] { (*scheduler)->Enqueue(Request(7, held.Callback())); });
  model->WaitUntilHeld();
  std::atomic<bool> drained{false};
  std::thread drainer([&] {
    (*scheduler)->Drain();
    drained = true;
  });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE(drained.load());  // the instance thread cannot exit while its instance is lent
  model->Open();
  lender.join();
  drainer.join();
  EXPECT_TRUE(drained.load());
  EXPECT_EQ(held.ok(), 1);
}

TEST(SchedulerRunInlineTest, ConcurrentCallersNeverShareAnInstanceAndEveryRequestIsAnswered) {
  auto model = std::make_shared<RecordingModel>(RecordingModel::Options{});
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(InlineOptions(1'000'000, /*instances=*/2), model, stats);
  ASSERT_TRUE(scheduler.ok());
  SendOneByOne(**scheduler, 1, 16);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  Answers answers;
  std::vector<std::thread> callers;
  callers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        (*scheduler)->Enqueue(Request(100 + t, answers.Callback()));
        if (i % 16 == 0) std::this_thread::yield();
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  answers.Wait(kThreads * kPerThread);
  EXPECT_EQ(answers.ok(), kThreads * kPerThread);
  EXPECT_EQ(model->max_overlap(), 1);
  EXPECT_GT((*scheduler)->Snapshot().inline_batches, 0u);
}

}  // namespace
}  // namespace brigade::scheduler
