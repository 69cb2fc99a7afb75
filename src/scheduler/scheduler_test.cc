#include "scheduler/scheduler.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "engine/builtin/builtin_backend.h"
#include "gtest/gtest.h"
#include "protocol/error_payload.h"
#include "telemetry/metrics_registry.h"
#include "telemetry/request_metrics.h"

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

// Collects answers and the order they arrived in; Wait() blocks until `expected` arrived.
class Answers {
 public:
  explicit Answers(int expected) : remaining_(expected) {}
  InferCallback Callback(int slot) {
    return [this, slot](absl::StatusOr<InferResponse> result) {
      absl::MutexLock lock(&mu_);
      results_[slot] = std::move(result);
      order_.push_back(slot);
      --remaining_;
    };
  }
  void Wait() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* remaining) { return *remaining <= 0; }, &remaining_));
  }
  // Blocks until the answer for `slot` arrived.
  void WaitFor(int slot) {
    absl::MutexLock lock(&mu_);
    auto arrived = [this, slot]()
                       ABSL_SHARED_LOCKS_REQUIRED(mu_) { return results_.count(slot) > 0; };
    mu_.Await(absl::Condition(&arrived));
  }
  bool has(int slot) {
    absl::MutexLock lock(&mu_);
    return results_.count(slot) > 0;
  }
  int count() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(order_.size());
  }
  std::vector<int> order() {
    absl::MutexLock lock(&mu_);
    return order_;
  }
  absl::StatusOr<InferResponse>& at(int slot) {
    absl::MutexLock lock(&mu_);
    return results_[slot];
  }

 private:
  absl::Mutex mu_;
  int remaining_ ABSL_GUARDED_BY(mu_);
  std::map<int, absl::StatusOr<InferResponse>> results_ ABSL_GUARDED_BY(mu_);
  std::vector<int> order_ ABSL_GUARDED_BY(mu_);
};

std::unique_ptr<InferRequest> AddSubRequest(int32_t a, int32_t b, InferCallback callback) {
  auto request = std::make_unique<InferRequest>();
  std::vector<int32_t> x = {a, a}, y = {b, b};
  request->inputs.push_back({"INPUT0", *Tensor::FromValues<int32_t>({1, 2}, x), {}});
  request->inputs.push_back({"INPUT1", *Tensor::FromValues<int32_t>({1, 2}, y), {}});
  request->on_complete = std::move(callback);
  return request;
}

std::optional<std::string> RetryAfter(const absl::StatusOr<InferResponse>& answer) {
  return protocol::RetryAfterSeconds(answer.status());
}

Scheduler::Options BatchingOptions(int max_batch, int64_t delay_us, size_t max_queue = 64) {
  Scheduler::Options options;
  options.model_name = "simple";
  options.queue.max_batch_size = max_batch;
  options.queue.dynamic_batching = true;
  options.queue.max_queue_delay_us = delay_us;
  options.queue.max_queue_size = max_queue;
  options.pin_threads = false;
  return options;
}

TEST(SchedulerTest, AnswersEachRequestWithItsOwnRows) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(BatchingOptions(8, 0), AddSubModel(8), stats);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  Answers answers(3);
  for (int i = 0; i < 3; ++i) (*scheduler)->Enqueue(AddSubRequest(i, 10, answers.Callback(i)));
  answers.Wait();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(answers.at(i).ok()) << answers.at(i).status();
    const InferResponse& response = *answers.at(i);
    ASSERT_EQ(response.outputs.size(), 2u);
    EXPECT_EQ(response.outputs[0].name, "OUTPUT0");
    EXPECT_EQ(response.outputs[0].tensor.shape(), (Shape{1, 2}));
    EXPECT_EQ(response.outputs[0].tensor.values<int32_t>()[0], i + 10);
    EXPECT_EQ(response.outputs[1].tensor.values<int32_t>()[1], i - 10);
    EXPECT_GT(response.clock.at(Stage::kInferEnd), 0);
  }
}

TEST(SchedulerTest, AFullBatchIsFormedFromQueuedRequests) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 4);
  // A one-minute delay: only a full batch can leave, so the four requests must run together.
  auto scheduler = Scheduler::Create(BatchingOptions(4, 60'000'000), AddSubModel(4), stats);
  ASSERT_TRUE(scheduler.ok());
  Answers answers(4);
  for (int i = 0; i < 4; ++i) (*scheduler)->Enqueue(AddSubRequest(i, 1, answers.Callback(i)));
  answers.Wait();
  const auto snapshot = stats->Snapshot();
  EXPECT_EQ(snapshot.execution_count, 1u);
  EXPECT_EQ(snapshot.inference_count, 4u);
  ASSERT_EQ(snapshot.batch_stats.size(), 1u);
  EXPECT_EQ(snapshot.batch_stats[0].batch_size, 4u);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(answers.at(i)->outputs[0].tensor.values<int32_t>()[0], i + 1);
  (*scheduler)->Drain();  // the batch's measured time is recorded after its answers
  const SchedulerSnapshot decisions = (*scheduler)->Snapshot();
  EXPECT_EQ(decisions.admitted, 4u);
  EXPECT_EQ(decisions.batches, 1u);
  EXPECT_EQ(decisions.batch_rows[4], 1u);
  EXPECT_EQ(decisions.reasons[static_cast<size_t>(BatchReason::kFull)], 1u);
  EXPECT_EQ(decisions.policy, "fixed_delay");
  EXPECT_EQ(decisions.service.count, 1u);
  ASSERT_FALSE(decisions.profile.empty());
  EXPECT_EQ(decisions.profile[0].rows, 4);
}

TEST(SchedulerTest, RequestedOutputsAreTheOnlyOnesReturned) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(BatchingOptions(8, 0), AddSubModel(8), stats);
  Answers answers(1);
  auto request = AddSubRequest(5, 3, answers.Callback(0));
  request->outputs.push_back({"OUTPUT1", {}, false});
  (*scheduler)->Enqueue(std::move(request));
  answers.Wait();
  ASSERT_TRUE(answers.at(0).ok());
  ASSERT_EQ(answers.at(0)->outputs.size(), 1u);
  EXPECT_EQ(answers.at(0)->outputs[0].name, "OUTPUT1");
  EXPECT_EQ(answers.at(0)->outputs[0].tensor.values<int32_t>()[0], 2);
}

TEST(SchedulerTest, AFullQueueAnswersUnavailableAtOnce) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler =
      Scheduler::Create(BatchingOptions(8, 60'000'000, /*max_queue=*/2), AddSubModel(8), stats);
  Answers answers(3);
  for (int i = 0; i < 3; ++i) (*scheduler)->Enqueue(AddSubRequest(i, 0, answers.Callback(i)));
  // The third was refused synchronously; drain releases the two queued ones.
  (*scheduler)->Drain();
  answers.Wait();
  EXPECT_TRUE(answers.at(0).ok());
  EXPECT_TRUE(answers.at(1).ok());
  EXPECT_EQ(answers.at(2).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(answers.at(2).status().message().find("queue is full"), std::string::npos);
  EXPECT_TRUE(RetryAfter(answers.at(2)).has_value());
  EXPECT_EQ((*scheduler)->Snapshot().refused_queue_full, 1u);
}

TEST(SchedulerTest, DrainFinishesQueuedWorkThenRefusesNewWork) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(BatchingOptions(8, 60'000'000), AddSubModel(8), stats);
  Answers answers(3);
  (*scheduler)->Enqueue(AddSubRequest(1, 1, answers.Callback(0)));
  (*scheduler)->Enqueue(AddSubRequest(2, 2, answers.Callback(1)));
  (*scheduler)->Drain();
  (*scheduler)->Enqueue(AddSubRequest(3, 3, answers.Callback(2)));
  answers.Wait();
  EXPECT_TRUE(answers.at(0).ok());
  EXPECT_TRUE(answers.at(1).ok());
  EXPECT_EQ(answers.at(2).status().code(), absl::StatusCode::kUnavailable);
}

TEST(SchedulerTest, AnExpiredDeadlineIsAnsweredWithoutRunning) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto scheduler = Scheduler::Create(BatchingOptions(8, 0), AddSubModel(8), stats);
  Answers answers(1);
  auto request = AddSubRequest(1, 1, answers.Callback(0));
  request->deadline = Deadline::AtNs(Clock::Real()->NowNs() - 1);
  (*scheduler)->Enqueue(std::move(request));
  answers.Wait();
  EXPECT_EQ(answers.at(0).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(stats->Snapshot().execution_count, 0u);
}

class BrokenModel : public engine::Model {
 public:
  const engine::ModelSignature& signature() const override { return signature_; }
  absl::StatusOr<std::unique_ptr<engine::ModelInstance>> CreateInstance(
      const engine::InstanceOptions& options) override {
    if (options.index == 1) return absl::InternalError("instance 1 cannot start");
    return AddSubModel(8)->CreateInstance(options);
  }

 private:
  engine::ModelSignature signature_;
};

TEST(SchedulerTest, CreateFailsWhenAnyInstanceFailsToStart) {
  auto stats = std::make_shared<telemetry::ModelStats>("broken", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  options.instance_count = 2;
  auto scheduler = Scheduler::Create(options, std::make_shared<BrokenModel>(), stats);
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(scheduler.status().message().find("instance 1"), std::string::npos);
}

TEST(SchedulerTest, RequiredWarmupFailureFailsCreate) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  // add_sub with mismatched shapes fails inside Execute.
  options.warmups.push_back(
      {"mismatched",
       {*Tensor::Zeros(DataType::kInt32, {1, 2}), *Tensor::Zeros(DataType::kInt32, {1, 3})}});
  options.warmup_required = true;
  auto scheduler = Scheduler::Create(options, AddSubModel(8), stats);
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(scheduler.status().message().find("warm-up"), std::string::npos);
}

// Starts threads until the `fail_at`-th (counting from 1), which the "system" refuses as
// std::thread does; counts the started threads that have finished.
struct RefusingThreads {
  int fail_at = 0;
  int calls = 0;
  std::atomic<int> finished{0};

  std::function<std::thread(std::function<void()>)> Starter() {
    return [this](std::function<void()> body) {
      if (++calls == fail_at) {
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                "thread refused");
      }
      return std::thread([this, body = std::move(body)] {
        body();
        ++finished;
      });
    };
  }
};

// Before, the exception left Create() and (thrown through a load) ended the process.
TEST(SchedulerTest, ARefusedThreadFailsCreateWithResourceExhaustedAfterJoiningTheStartedOnes) {
  // The third of four instance threads, then the timer (the fifth thread).
  for (int fail_at : {3, 5}) {
    auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
    Scheduler::Options options = BatchingOptions(8, 0);
    options.instance_count = 4;
    RefusingThreads threads;
    threads.fail_at = fail_at;
    options.start_thread = threads.Starter();
    auto scheduler = Scheduler::Create(options, AddSubModel(8), stats);
    EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kResourceExhausted)
        << scheduler.status();
    EXPECT_NE(scheduler.status().message().find("refused a thread"), std::string::npos)
        << scheduler.status();
    // Every thread that started ran to its end before Create returned.
    EXPECT_EQ(threads.finished.load(), fail_at - 1);
  }
}

// An instance whose warm-up allocates more than there is.
class GreedyModel : public engine::Model {
 public:
  const engine::ModelSignature& signature() const override { return signature_; }
  absl::StatusOr<std::unique_ptr<engine::ModelInstance>> CreateInstance(
      const engine::InstanceOptions&) override {
    return std::make_unique<Instance>();
  }

 private:
  class Instance : public engine::ModelInstance {
   public:
    absl::Status Execute(std::span<const Tensor>, std::vector<Tensor>*) override {
      throw std::bad_alloc();
    }
  };
  engine::ModelSignature signature_;
};

// Before, std::bad_alloc escaped the instance thread: std::terminate, every model down.
TEST(SchedulerTest, RunningOutOfMemoryInAWarmUpFailsCreateWithResourceExhausted) {
  for (bool required : {true, false}) {
    auto stats = std::make_shared<telemetry::ModelStats>("greedy", "1", 8);
    Scheduler::Options options = BatchingOptions(8, 0);
    options.model_name = "greedy";
    options.instance_count = 2;
    options.warmups.push_back({"huge", {}});
    options.warmup_required = required;
    auto scheduler = Scheduler::Create(options, std::make_shared<GreedyModel>(), stats);
    EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kResourceExhausted)
        << scheduler.status();
    EXPECT_NE(scheduler.status().message().find("model 'greedy' version 1 instance"),
              std::string::npos)
        << scheduler.status();
  }
}

TEST(SchedulerTest, InstanceCountsAndBatchSizesPastTheLimitsAreRefused) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  options.instance_count = Scheduler::kMaxInstanceCount + 1;
  auto scheduler = Scheduler::Create(options, AddSubModel(8), stats);
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(scheduler.status().message().find("exceeds the limit of 256"), std::string::npos)
      << scheduler.status();
  options = BatchingOptions(Scheduler::kMaxBatchSize + 1, 0);
  scheduler = Scheduler::Create(options, AddSubModel(8), stats);
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(scheduler.status().message().find("exceeds the limit of 65536"), std::string::npos)
      << scheduler.status();
}

TEST(SchedulerTest, IntraOpThreadsSplitTheCoresAcrossInstances) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  options.cpus = {0, 1, 2, 3};
  options.instance_count = 2;
  auto scheduler = Scheduler::Create(options, AddSubModel(8), stats);
  ASSERT_TRUE(scheduler.ok());
  EXPECT_EQ((*scheduler)->intra_op_threads(), 2);
}

// An add_sub model that can hold an execution: the request whose INPUT0 is `gate_value` blocks
// until Open(). With a FakeClock it also advances the clock by `cost_us` per batch row, so the
// latency profile learns a known cost without anyone sleeping.
class GateModel : public engine::Model {
 public:
  GateModel(int32_t gate_value, FakeClock* clock = nullptr, int64_t cost_us = 0)
      : inner_(AddSubModel(8)), gate_value_(gate_value), clock_(clock), cost_us_(cost_us) {}

  const engine::ModelSignature& signature() const override { return inner_->signature(); }
  absl::StatusOr<std::unique_ptr<engine::ModelInstance>> CreateInstance(
      const engine::InstanceOptions& options) override {
    BRIGADE_ASSIGN_OR_RETURN(auto inner, inner_->CreateInstance(options));
    return std::make_unique<Instance>(this, std::move(inner));
  }

  void Open() { open_.Notify(); }
  void WaitUntilHeld() { held_.WaitForNotification(); }
  // Rows executed so far, any instance.
  int executed() const { return executed_.load(); }

 private:
  class Instance : public engine::ModelInstance {
   public:
    Instance(GateModel* model, std::unique_ptr<engine::ModelInstance> inner)
        : model_(model), inner_(std::move(inner)) {}
    absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) override {
      const int64_t rows = inputs[0].shape()[0];
      if (model_->clock_ != nullptr) model_->clock_->AdvanceUs(model_->cost_us_ * rows);
      if (inputs[0].values<int32_t>()[0] == model_->gate_value_) {
        model_->held_.Notify();
        model_->open_.WaitForNotification();
      }
      model_->executed_.fetch_add(static_cast<int>(rows));
      return inner_->Execute(inputs, outputs);
    }

   private:
    GateModel* model_;
    std::unique_ptr<engine::ModelInstance> inner_;
  };

  std::shared_ptr<engine::Model> inner_;
  const int32_t gate_value_;
  FakeClock* clock_;
  const int64_t cost_us_;
  absl::Notification held_;
  absl::Notification open_;
  std::atomic<int> executed_{0};
};

// y = x + bias per row, with bias an optional input whose default is 100; records each batch's
// rows and whether bias was given.
class OptionalBiasModel : public engine::Model {
 public:
  struct Batch {
    int64_t rows;
    bool bias_given;
  };

  OptionalBiasModel() {
    signature_.inputs = {{"x", DataType::kInt32, {-1, 2}},
                         {"bias", DataType::kInt32, {-1, 2}, /*optional=*/true}};
    signature_.outputs = {{"y", DataType::kInt32, {-1, 2}}};
  }
  const engine::ModelSignature& signature() const override { return signature_; }
  absl::StatusOr<std::unique_ptr<engine::ModelInstance>> CreateInstance(
      const engine::InstanceOptions&) override {
    return std::make_unique<Instance>(this);
  }
  std::vector<Batch> batches() {
    absl::MutexLock lock(&mu_);
    return batches_;
  }

 private:
  class Instance : public engine::ModelInstance {
   public:
    explicit Instance(OptionalBiasModel* model) : model_(model) {}
    absl::Status Execute(std::span<const Tensor> inputs, std::vector<Tensor>* outputs) override {
      const Tensor& x = inputs[0];
      const Tensor& bias = inputs[1];
      std::vector<int32_t> y(static_cast<size_t>(x.num_elements()));
      for (size_t i = 0; i < y.size(); ++i) {
        y[i] = x.values<int32_t>()[i] + (bias.empty() ? 100 : bias.values<int32_t>()[i]);
      }
      {
        absl::MutexLock lock(&model_->mu_);
        model_->batches_.push_back({x.shape()[0], !bias.empty()});
      }
      BRIGADE_ASSIGN_OR_RETURN(Tensor out, Tensor::FromValues<int32_t>(x.shape(), y));
      outputs->push_back(std::move(out));
      return absl::OkStatus();
    }

   private:
    OptionalBiasModel* model_;
  };

  engine::ModelSignature signature_;
  absl::Mutex mu_;
  std::vector<Batch> batches_ ABSL_GUARDED_BY(mu_);
};

TEST(SchedulerTest, RequestsOmittingAnOptionalInputBatchTogetherAndApartFromOnesGivingIt) {
  auto model = std::make_shared<OptionalBiasModel>();
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 2);
  // A one-minute delay: only full batches of two leave.
  auto scheduler = Scheduler::Create(BatchingOptions(2, 60'000'000), model, stats);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  Answers answers(4);
  for (int i = 0; i < 4; ++i) {
    auto request = std::make_unique<InferRequest>();
    const std::vector<int32_t> x = {i, i}, bias = {7, 7};
    request->inputs.push_back({"x", *Tensor::FromValues<int32_t>({1, 2}, x), {}});
    if (i % 2 == 1) {
      request->inputs.push_back({"bias", *Tensor::FromValues<int32_t>({1, 2}, bias), {}});
    } else {
      request->inputs.push_back({"bias", Tensor(), {}});  // omitted, as the validator leaves it
    }
    request->on_complete = answers.Callback(i);
    (*scheduler)->Enqueue(std::move(request));
  }
  answers.Wait();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(answers.at(i).ok()) << answers.at(i).status();
    EXPECT_EQ(answers.at(i)->outputs[0].tensor.values<int32_t>()[1], i + (i % 2 == 1 ? 7 : 100))
        << "request " << i;
  }
  const std::vector<OptionalBiasModel::Batch> batches = model->batches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].rows, 2);
  EXPECT_EQ(batches[1].rows, 2);
  EXPECT_NE(batches[0].bias_given, batches[1].bias_given);
}

Scheduler::Options Unbatched(int instances = 1) {
  Scheduler::Options options;
  options.model_name = "simple";
  options.queue.max_batch_size = 8;
  options.queue.max_queue_size = 64;
  options.instance_count = instances;
  options.pin_threads = false;
  return options;
}

TEST(SchedulerTest, ATimedOutRequestLeavesWhileEveryInstanceIsBusy) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto model = std::make_shared<GateModel>(/*gate_value=*/7);
  auto scheduler = Scheduler::Create(Unbatched(), model, stats);
  ASSERT_TRUE(scheduler.ok());
  Answers answers(2);
  (*scheduler)->Enqueue(AddSubRequest(7, 0, answers.Callback(0)));
  model->WaitUntilHeld();  // the only instance is busy until Open()
  auto request = AddSubRequest(1, 1, answers.Callback(1));
  request->deadline = Deadline::AfterUs(Clock::Real()->NowNs(), 2000);
  (*scheduler)->Enqueue(std::move(request));
  // Answered by the timer while the instance is still held: no batch decision was involved.
  answers.WaitFor(1);
  EXPECT_EQ(answers.at(1).status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(answers.has(0));
  EXPECT_EQ((*scheduler)->queue_size(), 0u);
  model->Open();
  answers.Wait();
  EXPECT_TRUE(answers.at(0).ok());
  EXPECT_EQ(model->executed(), 1);
  EXPECT_EQ((*scheduler)->Snapshot().timed_out, 1u);
}

TEST(SchedulerTest, ACancelledRequestLeavesTheQueueWhileEveryInstanceIsBusy) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto model = std::make_shared<GateModel>(/*gate_value=*/7);
  auto scheduler = Scheduler::Create(Unbatched(), model, stats);
  ASSERT_TRUE(scheduler.ok());
  Answers answers(2);
  (*scheduler)->Enqueue(AddSubRequest(7, 0, answers.Callback(0)));
  model->WaitUntilHeld();
  auto request = AddSubRequest(1, 1, answers.Callback(1));
  auto flag = std::make_shared<CancelFlag>();
  request->cancel = flag;
  (*scheduler)->Enqueue(std::move(request));
  EXPECT_EQ((*scheduler)->queue_size(), 1u);
  flag->Cancel();
  answers.WaitFor(1);
  EXPECT_EQ(answers.at(1).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ((*scheduler)->queue_size(), 0u);
  model->Open();
  answers.Wait();
  EXPECT_EQ(model->executed(), 1);  // the cancelled request's work never ran
  EXPECT_EQ((*scheduler)->Snapshot().cancelled, 1u);
}

TEST(SchedulerTest, LiveMetricsFollowTheQueueTheInstancesAndEachBatch) {
  telemetry::MetricsRegistry registry;
  auto request_metrics = telemetry::RequestMetrics::Create(&registry);
  ASSERT_TRUE(request_metrics.ok());
  telemetry::ModelRequestMetrics* metrics = (*request_metrics)->ForModel("simple", "1");
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto model = std::make_shared<GateModel>(/*gate_value=*/7);
  Scheduler::Options options = Unbatched();
  options.metrics = metrics;
  auto scheduler = Scheduler::Create(options, model, stats);
  ASSERT_TRUE(scheduler.ok());
  Answers answers(4);
  (*scheduler)->Enqueue(AddSubRequest(7, 0, answers.Callback(0)));
  model->WaitUntilHeld();
  EXPECT_EQ(metrics->busy_instances().Value(), 1);
  EXPECT_EQ(metrics->queue_length().Value(), 0);
  (*scheduler)->Enqueue(AddSubRequest(1, 0, answers.Callback(1)));
  (*scheduler)->Enqueue(AddSubRequest(2, 0, answers.Callback(2)));
  auto cancellable = AddSubRequest(3, 0, answers.Callback(3));
  auto flag = std::make_shared<CancelFlag>();
  cancellable->cancel = flag;
  (*scheduler)->Enqueue(std::move(cancellable));
  EXPECT_EQ(metrics->queue_length().Value(), 3);
  flag->Cancel();
  answers.WaitFor(3);  // removed by the timer: the gauge moved before the answer
  EXPECT_EQ(metrics->queue_length().Value(), 2);
  model->Open();
  answers.Wait();
  EXPECT_EQ(metrics->queue_length().Value(), 0);
  EXPECT_EQ(metrics->busy_instances().Value(), 0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(answers.at(i).ok());
    EXPECT_EQ(answers.at(i)->execution.batch_size, 1);
  }
  // Three executions of one row each; the cancelled request never ran.
  EXPECT_NE(registry.Text().find("brigade_batch_size_count{model=\"simple\",version=\"1\"} 3\n"),
            std::string::npos)
      << registry.Text();
}

TEST(SchedulerTest, EveryResponseCarriesTheRowsOfTheBatchItRanIn) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 4);
  // A one-minute delay: only a full batch of four rows can leave.
  auto scheduler = Scheduler::Create(BatchingOptions(4, 60'000'000), AddSubModel(4), stats);
  ASSERT_TRUE(scheduler.ok());
  Answers answers(4);
  for (int i = 0; i < 4; ++i) (*scheduler)->Enqueue(AddSubRequest(i, 1, answers.Callback(i)));
  answers.Wait();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(answers.at(i).ok());
    EXPECT_EQ(answers.at(i)->execution.batch_size, 4);
  }
}

TEST(SchedulerTest, PreserveOrderingAnswersInArrivalOrderAcrossInstances) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  auto model = std::make_shared<GateModel>(/*gate_value=*/7);
  Scheduler::Options options = Unbatched(/*instances=*/2);
  options.preserve_ordering = true;
  auto scheduler = Scheduler::Create(options, model, stats);
  ASSERT_TRUE(scheduler.ok());
  Answers answers(3);
  (*scheduler)->Enqueue(AddSubRequest(7, 0, answers.Callback(0)));  // held on one instance
  model->WaitUntilHeld();
  (*scheduler)->Enqueue(AddSubRequest(1, 0, answers.Callback(1)));  // runs on the other
  (*scheduler)->Enqueue(AddSubRequest(2, 0, answers.Callback(2)));
  // Both later requests run on the other instance, but their answers wait for the first.
  const int64_t give_up_ns = Clock::Real()->NowNs() + 10'000'000'000;
  while ((*scheduler)->Snapshot().held_for_ordering < 2 && Clock::Real()->NowNs() < give_up_ns) {
    std::this_thread::yield();
  }
  EXPECT_EQ((*scheduler)->Snapshot().held_for_ordering, 2u);
  EXPECT_EQ(answers.count(), 0);
  model->Open();
  answers.Wait();
  EXPECT_EQ(answers.order(), (std::vector<int>{0, 1, 2}));
}

TEST(SchedulerTest, AdmissionControlRefusesWhatWouldMissItsSloWithRetryAfter) {
  FakeClock clock;
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  // Every row costs 400 fake µs; the SLO is 1000 µs.
  auto model = std::make_shared<GateModel>(/*gate_value=*/7, &clock, /*cost_us=*/400);
  Scheduler::Options options = Unbatched();
  options.clock = &clock;
  options.queue.admission_control = true;
  options.queue.target_p99_us = 1000;
  auto scheduler = Scheduler::Create(options, model, stats);
  ASSERT_TRUE(scheduler.ok());
  for (int i = 0; i < 10; ++i) {  // learn the cost
    Answers warm(1);
    (*scheduler)->Enqueue(AddSubRequest(1, 1, warm.Callback(0)));
    warm.Wait();
  }
  Answers answers(4);
  (*scheduler)->Enqueue(AddSubRequest(7, 0, answers.Callback(0)));
  model->WaitUntilHeld();
  // The instance frees up 400 µs after it started (now); each queued request adds 400 µs.
  for (int i = 1; i < 4; ++i) (*scheduler)->Enqueue(AddSubRequest(i, 0, answers.Callback(i)));
  ASSERT_TRUE(answers.has(3));  // refused at once
  EXPECT_EQ(answers.at(3).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(answers.at(3).status().message().find("predicted completion"), std::string::npos);
  EXPECT_EQ(RetryAfter(answers.at(3)), "1");
  model->Open();
  answers.Wait();
  EXPECT_TRUE(answers.at(1).ok());
  EXPECT_TRUE(answers.at(2).ok());
  EXPECT_EQ((*scheduler)->Snapshot().refused_predicted_late, 1u);
}

TEST(SchedulerTest, AdaptivePoliciesServeEveryRequest) {
  for (BatchPolicyKind kind : {BatchPolicyKind::kP99Model, BatchPolicyKind::kQueueFormula}) {
    auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
    Scheduler::Options options = BatchingOptions(8, 0, /*max_queue=*/256);
    options.queue.policy = kind;
    options.queue.target_p99_us = 100'000;
    options.instance_count = 2;
    auto scheduler = Scheduler::Create(options, AddSubModel(8), stats);
    ASSERT_TRUE(scheduler.ok());
    constexpr int kRequests = 200;
    Answers answers(kRequests);
    for (int i = 0; i < kRequests; ++i) {
      (*scheduler)->Enqueue(AddSubRequest(i, 1, answers.Callback(i)));
    }
    answers.Wait();
    for (int i = 0; i < kRequests; ++i) {
      ASSERT_TRUE(answers.at(i).ok()) << answers.at(i).status();
      EXPECT_EQ(answers.at(i)->outputs[0].tensor.values<int32_t>()[0], i + 1);
    }
    EXPECT_EQ((*scheduler)->Snapshot().policy,
              kind == BatchPolicyKind::kP99Model ? "p99_model" : "queue_formula");
  }
}

TEST(SchedulerTest, TheP99PolicyNeedsATarget) {
  auto stats = std::make_shared<telemetry::ModelStats>("simple", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  options.queue.policy = BatchPolicyKind::kP99Model;
  EXPECT_EQ(Scheduler::Create(options, AddSubModel(8), stats).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace brigade::scheduler
