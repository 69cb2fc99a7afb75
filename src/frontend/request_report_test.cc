#include "frontend/request_report.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::frontend {
namespace {

using ::testing::HasSubstr;

// What a transport holds for a request it decoded: the client's names and t0 / decoded stamps.
RequestReport Decoded() {
  RequestReport report{.model = "m", .version = "", .id = "req-7"};
  report.clock.Mark(Stage::kArrival, 100);
  report.clock.Mark(Stage::kDecoded, 120);
  return report;
}

InferResponse Answer() {
  InferResponse response;
  response.model_name = std::string("m");
  response.model_version = std::string("3");
  response.clock.Mark(Stage::kArrival, 100);
  response.clock.Mark(Stage::kPostprocessed, 400);
  response.execution.batch_size = 4;
  response.execution.cache_hit = true;
  return response;
}

TEST(RequestReportTest, ReportsTheClientsNamesUntilAResponseResolvesThem) {
  RequestReport report = Decoded();
  const RequestObserver::Done before = DoneFor(&report, {.protocol = Protocol::kHttp});
  EXPECT_EQ(before.model, "m");
  EXPECT_EQ(before.version, "");
  EXPECT_EQ(before.request_id, "req-7");
  EXPECT_EQ(before.batch_size, 0);
  EXPECT_FALSE(before.cache_hit);

  report.TakeResponse(Answer());
  const RequestObserver::Done after = DoneFor(
      &report, {.protocol = Protocol::kGrpc, .protocol_code = 0, .written = true, .sent_ns = 500});
  EXPECT_EQ(after.version, "3");
  EXPECT_EQ(after.request_id, "req-7");
  EXPECT_EQ(after.protocol, Protocol::kGrpc);
  EXPECT_EQ(after.batch_size, 4);
  EXPECT_TRUE(after.cache_hit);
  ASSERT_NE(after.clock, nullptr);
  EXPECT_EQ(after.clock->at(Stage::kPostprocessed), 400);
}

TEST(RequestReportTest, AWrittenAnswerGetsT5AndKeepsItsStatusAndCode) {
  RequestReport report = Decoded();
  report.status = absl::NotFoundError("no such model");
  const std::optional<telemetry::TraceContext> parent = telemetry::TraceContext{};
  const RequestObserver::Done done = DoneFor(&report, {.protocol = Protocol::kHttp,
                                                       .protocol_code = 404,
                                                       .written = true,
                                                       .sent_ns = 900,
                                                       .parent = &parent});
  EXPECT_EQ(report.clock.at(Stage::kSent), 900);
  EXPECT_EQ(done.clock, &report.clock);
  EXPECT_EQ(done.status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(done.protocol_code, 404);
  EXPECT_EQ(done.parent, &parent);
}

TEST(RequestReportTest, AnOkAnswerNeverWrittenCountsAsTheTransportSays) {
  RequestReport report = Decoded();
  report.TakeResponse(Answer());
  const RequestObserver::Done done =
      DoneFor(&report, {.protocol = Protocol::kHttp,
                        .written = false,
                        .sent_ns = 900,
                        .unwritten_code = absl::StatusCode::kUnavailable,
                        .unwritten_message = "the client left"});
  EXPECT_FALSE(report.clock.has(Stage::kSent));
  EXPECT_EQ(done.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(done.status.message(), "the client left");
}

TEST(RequestReportTest, AFailureNeverWrittenIsReportedAsItWasAnswered) {
  RequestReport report = Decoded();
  report.status = absl::InvalidArgumentError("bad input");
  const RequestObserver::Done done = DoneFor(&report, {.protocol = Protocol::kGrpc});
  EXPECT_EQ(done.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(done.status.message(), "bad input");
}

TEST(RequestReportTest, TheObserverCountsTheReportedRequestOnce) {
  ReportRequestDone(nullptr, nullptr, {});  // no observer: nothing is read
  auto observer = RequestObserver::Create({});
  ASSERT_TRUE(observer.ok()) << observer.status();
  (*observer)->ForModel("m", "3");
  RequestReport report = Decoded();
  report.TakeResponse(Answer());
  ReportRequestDone(observer->get(), &report,
                    {.protocol = Protocol::kGrpc,
                     .written = false,
                     .unwritten_code = absl::StatusCode::kCancelled,
                     .unwritten_message = "the stream ended"});
  const std::string text = (*observer)->RenderMetrics({});
  EXPECT_THAT(text, HasSubstr("brigade_requests_total{model=\"m\",version=\"3\",protocol=\"grpc\","
                              "outcome=\"cancelled\"} 1\n"));
}

}  // namespace
}  // namespace brigade::frontend
