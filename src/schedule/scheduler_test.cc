#include "schedule/scheduler.h"

#include <atomic>
#include <memory>
#include <vector>

#include "absl/synchronization/notification.h"
#include "engine/builtin/builtin_backend.h"
#include "gtest/gtest.h"

namespace brigade::schedule {
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

// Collects answers; Wait() blocks until `expected` arrived.
class Answers {
 public:
  explicit Answers(int expected) : remaining_(expected) {}
  InferCallback Callback(int slot) {
    return [this, slot](absl::StatusOr<InferResponse> result) {
      {
        absl::MutexLock lock(&mu_);
        results_[slot] = std::move(result);
        if (--remaining_ == 0) done_.Notify();
      }
    };
  }
  void Wait() { done_.WaitForNotification(); }
  absl::StatusOr<InferResponse>& at(int slot) { return results_[slot]; }

 private:
  absl::Mutex mu_;
  int remaining_;
  absl::Notification done_;
  std::map<int, absl::StatusOr<InferResponse>> results_;
};

std::unique_ptr<InferRequest> AddSubRequest(int32_t a, int32_t b, InferCallback callback) {
  auto request = std::make_unique<InferRequest>();
  std::vector<int32_t> x = {a, a}, y = {b, b};
  request->inputs.push_back({"INPUT0", *Tensor::FromValues<int32_t>({1, 2}, x), {}});
  request->inputs.push_back({"INPUT1", *Tensor::FromValues<int32_t>({1, 2}, y), {}});
  request->on_complete = std::move(callback);
  return request;
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
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 8);
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
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 4);
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
}

TEST(SchedulerTest, RequestedOutputsAreTheOnlyOnesReturned) {
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 8);
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
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 8);
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
}

TEST(SchedulerTest, DrainFinishesQueuedWorkThenRefusesNewWork) {
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 8);
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
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 8);
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
  auto stats = std::make_shared<observe::ModelStats>("broken", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  options.instance_count = 2;
  auto scheduler = Scheduler::Create(options, std::make_shared<BrokenModel>(), stats);
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(scheduler.status().message().find("instance 1"), std::string::npos);
}

TEST(SchedulerTest, RequiredWarmupFailureFailsCreate) {
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  // add_sub with mismatched shapes fails inside Execute.
  options.warmup_inputs.push_back(
      {*Tensor::Zeros(DataType::kInt32, {1, 2}), *Tensor::Zeros(DataType::kInt32, {1, 3})});
  options.warmup_required = true;
  auto scheduler = Scheduler::Create(options, AddSubModel(8), stats);
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(scheduler.status().message().find("warm-up"), std::string::npos);
}

TEST(SchedulerTest, IntraOpThreadsSplitTheCoresAcrossInstances) {
  auto stats = std::make_shared<observe::ModelStats>("simple", "1", 8);
  Scheduler::Options options = BatchingOptions(8, 0);
  options.cpus = {0, 1, 2, 3};
  options.instance_count = 2;
  auto scheduler = Scheduler::Create(options, AddSubModel(8), stats);
  ASSERT_TRUE(scheduler.ok());
  EXPECT_EQ((*scheduler)->intra_op_threads(), 2);
}

}  // namespace
}  // namespace brigade::schedule
