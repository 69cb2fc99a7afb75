#include "telemetry/otlp_json.h"

#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

SpanData OneSpan() {
  SpanData span;
  span.trace_id =
      ParseTraceparent("00-5b8efff798038103d269b633813fc60c-eee19b7ec3c1b173-01")->trace_id;
  span.span_id.bytes = {0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74};
  span.parent_span_id.bytes = {0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x73};
  span.trace_state = "congo=t61";
  span.flags = 0x301;
  span.name = "infer";
  span.kind = SpanKind::kServer;
  span.start_unix_ns = 1544712660000000000;
  span.end_unix_ns = 1544712661000000000;
  span.attributes = {{"model_name", std::string("res\"net")},
                     {"brigade.batch_size", int64_t{8}},
                     {"brigade.cache_hit", false},
                     {"ratio", 0.5}};
  span.events = {{"QUEUE_START", 1544712660500000000}};
  span.status = SpanStatusCode::kError;
  span.status_message = "UNAVAILABLE: queue full";
  return span;
}

TEST(OtlpJsonTest, EncodesOneSpanExactlyAsTheOtlpJsonMappingSays) {
  OtlpResource resource;
  resource.service_name = "brigade";
  resource.service_version = "0.1.0";
  resource.attributes = {{"host.name", "node-1"}};
  resource.scope_version = "0.1.0";
  const SpanData spans[] = {OneSpan()};
  EXPECT_EQ(EncodeOtlpTraceRequest(spans, resource),
            R"({"resourceSpans":[{"resource":{"attributes":[)"
            R"({"key":"service.name","value":{"stringValue":"brigade"}},)"
            R"({"key":"service.version","value":{"stringValue":"0.1.0"}},)"
            R"({"key":"host.name","value":{"stringValue":"node-1"}}]},)"
            R"("scopeSpans":[{"scope":{"name":"brigade","version":"0.1.0"},"spans":[{)"
            R"("traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",)"
            R"("parentSpanId":"eee19b7ec3c1b173","traceState":"congo=t61","flags":769,)"
            R"("name":"infer","kind":2,"startTimeUnixNano":"1544712660000000000",)"
            R"("endTimeUnixNano":"1544712661000000000","attributes":[)"
            R"({"key":"model_name","value":{"stringValue":"res\"net"}},)"
            R"({"key":"brigade.batch_size","value":{"intValue":"8"}},)"
            R"({"key":"brigade.cache_hit","value":{"boolValue":false}},)"
            R"({"key":"ratio","value":{"doubleValue":0.5}}],)"
            R"("events":[{"timeUnixNano":"1544712660500000000","name":"QUEUE_START"}],)"
            R"("status":{"code":2,"message":"UNAVAILABLE: queue full"}}]}]}]})");
}

TEST(OtlpJsonTest, RootSpanHasNoParentAndEmptyStateIsOmitted) {
  SpanData span = OneSpan();
  span.parent_span_id = SpanId();
  span.trace_state.clear();
  span.status = SpanStatusCode::kUnset;
  span.status_message.clear();
  const SpanData spans[] = {span};
  const std::string json = EncodeOtlpTraceRequest(spans, OtlpResource());
  EXPECT_EQ(json.find("parentSpanId"), std::string::npos);
  EXPECT_EQ(json.find("traceState"), std::string::npos);
  EXPECT_NE(json.find(R"("status":{"code":0}})"), std::string::npos);
}

}  // namespace
}  // namespace brigade::telemetry
