#include "telemetry/trace_control.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::telemetry {
namespace {

using ::testing::HasSubstr;

std::string Value(const protocol::TraceSettings& settings, std::string_view key) {
  for (const auto& [name, values] : settings) {
    if (name == key) return values.empty() ? "" : values.front();
  }
  return "<absent>";
}

protocol::TraceSettingsUpdate Set(std::string key, std::string value) {
  return {{std::move(key), std::vector<std::string>{std::move(value)}}};
}

TraceControl Traced(double rate = 0.5) {
  return TraceControl({.sample_rate = rate, .has_destination = true, .trace_file = "/tmp/t"});
}

TEST(TraceControlTest, StartsFromTheFlags) {
  TraceControl control = Traced(0.001);
  const protocol::TraceSettings settings = control.Get("");
  EXPECT_EQ(Value(settings, "trace_level"), "TIMESTAMPS");
  EXPECT_EQ(Value(settings, "trace_rate"), "1000");
  EXPECT_EQ(Value(settings, "trace_count"), "-1");
  EXPECT_EQ(Value(settings, "trace_file"), "/tmp/t");
  EXPECT_EQ(Value(settings, "trace_mode"), "opentelemetry");
  const Tracer::Sampling sampling = control.SamplingFor("m");
  EXPECT_TRUE(sampling.enabled);
  EXPECT_DOUBLE_EQ(sampling.sample_rate, 0.001);  // the flag's exact fraction

  TraceControl off({.sample_rate = 0.0, .has_destination = false, .trace_file = ""});
  EXPECT_EQ(Value(off.Get(""), "trace_level"), "OFF");
  EXPECT_FALSE(off.SamplingFor("m").enabled);
  EXPECT_EQ(off.Update("", Set("trace_level", "TIMESTAMPS")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(TraceControlTest, AModelOverridesTheGlobalSettingsUntilCleared) {
  TraceControl control = Traced();
  ASSERT_TRUE(control.Update("", Set("trace_rate", "4")).ok());
  EXPECT_DOUBLE_EQ(control.SamplingFor("a").sample_rate, 0.25);
  auto model = control.Update("a", Set("trace_level", "OFF"));
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(Value(*model, "trace_level"), "OFF");
  EXPECT_EQ(Value(*model, "trace_rate"), "4");  // inherited
  EXPECT_FALSE(control.SamplingFor("a").enabled);
  EXPECT_TRUE(control.SamplingFor("b").enabled);
  EXPECT_EQ(Value(control.Get(""), "trace_level"), "TIMESTAMPS");

  ASSERT_TRUE(control.Update("a", {{"trace_level", std::nullopt}}).ok());
  EXPECT_TRUE(control.SamplingFor("a").enabled);
  ASSERT_TRUE(control.Update("", {{"trace_rate", std::nullopt}}).ok());
  EXPECT_DOUBLE_EQ(control.SamplingFor("a").sample_rate, 0.5);  // back to the start-up value
}

TEST(TraceControlTest, TraceCountRunsDownThenStops) {
  TraceControl control = Traced();
  ASSERT_TRUE(control.Update("m", Set("trace_count", "2")).ok());
  EXPECT_TRUE(control.SamplingFor("m").enabled);
  control.Traced("m");
  control.Traced("other");  // counts against the global count, which is unlimited
  EXPECT_EQ(Value(control.Get("m"), "trace_count"), "1");
  control.Traced("m");
  EXPECT_EQ(Value(control.Get("m"), "trace_count"), "0");
  EXPECT_FALSE(control.SamplingFor("m").enabled);
  EXPECT_TRUE(control.SamplingFor("other").enabled);
}

TEST(TraceControlTest, WhatBrigadeCannotDoIsRefusedAndChangesNothing) {
  TraceControl control = Traced();
  auto expect = [&](protocol::TraceSettingsUpdate update, absl::StatusCode code,
                    std::string_view fragment) {
    const absl::Status status = control.Update("", update).status();
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(fragment));
  };
  expect(Set("trace_level", "TENSORS"), absl::StatusCode::kUnimplemented, "TENSORS");
  expect(Set("trace_level", "LOUD"), absl::StatusCode::kInvalidArgument, "unknown level 'LOUD'");
  expect({{"trace_level", std::vector<std::string>{"OFF", "TIMESTAMPS"}}},
         absl::StatusCode::kInvalidArgument, "OFF cannot be combined");
  expect(Set("trace_rate", "-1"), absl::StatusCode::kInvalidArgument, "'trace_rate'");
  expect(Set("trace_count", "x"), absl::StatusCode::kInvalidArgument, "'trace_count'");
  expect(Set("log_frequency", "5"), absl::StatusCode::kUnimplemented, "log_frequency");
  expect(Set("trace_file", "/tmp/other"), absl::StatusCode::kUnimplemented, "trace_file");
  expect(Set("trace_mode", "triton"), absl::StatusCode::kUnimplemented, "trace_mode");
  expect(Set("colour", "red"), absl::StatusCode::kInvalidArgument, "unknown trace setting");
  // A valid change before a refused one is not applied either.
  protocol::TraceSettingsUpdate mixed = Set("trace_rate", "7");
  mixed.push_back({"trace_mode", std::vector<std::string>{"triton"}});
  expect(mixed, absl::StatusCode::kUnimplemented, "trace_mode");
  EXPECT_EQ(Value(control.Get(""), "trace_rate"), "2");
  EXPECT_TRUE(control.Update("", Set("trace_file", "/tmp/t")).ok());  // unchanged: accepted
}

}  // namespace
}  // namespace brigade::telemetry
