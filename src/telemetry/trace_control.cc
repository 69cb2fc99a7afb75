#include "telemetry/trace_control.h"

#include <cmath>
#include <utility>
#include <vector>

#include "core/strings.h"

namespace brigade::telemetry {
namespace {

constexpr std::string_view kLevel = "trace_level";
constexpr std::string_view kRate = "trace_rate";
constexpr std::string_view kCount = "trace_count";
constexpr std::string_view kLogFrequency = "log_frequency";
constexpr std::string_view kFile = "trace_file";
constexpr std::string_view kMode = "trace_mode";
constexpr std::string_view kOpenTelemetry = "opentelemetry";

absl::Status Invalid(std::string_view key, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("trace setting '", key, "': ", why));
}

// The one string of a single-valued setting.
absl::StatusOr<std::string_view> One(std::string_view key, const std::vector<std::string>& value) {
  if (value.size() != 1) {
    return Invalid(key, StrCat("takes one value, got ", value.size()));
  }
  return std::string_view(value.front());
}

}  // namespace

TraceControl::TraceControl(Options options)
    : options_(std::move(options)),
      startup_{options_.has_destination,
               options_.sample_rate > 0
                   ? static_cast<uint64_t>(std::llround(1.0 / options_.sample_rate))
                   : 0,
               -1} {}

TraceControl::Effective TraceControl::Resolve(const Scope* model) const {
  auto pick = [&](auto member) {
    if (model != nullptr && (model->*member).has_value()) return *(model->*member);
    if ((global_.*member).has_value()) return *(global_.*member);
    return *(startup_.*member);
  };
  Effective effective{pick(&Scope::enabled), pick(&Scope::rate), pick(&Scope::count)};
  return effective;
}

protocol::TraceSettings TraceControl::Encode(const Effective& effective) const {
  return {{std::string(kLevel), {effective.enabled ? "TIMESTAMPS" : "OFF"}},
          {std::string(kRate), {std::to_string(effective.rate)}},
          {std::string(kCount), {std::to_string(effective.count)}},
          {std::string(kLogFrequency), {"0"}},
          {std::string(kFile), {options_.trace_file}},
          {std::string(kMode), {std::string(kOpenTelemetry)}}};
}

protocol::TraceSettings TraceControl::Get(std::string_view model) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = model.empty() ? models_.end() : models_.find(model);
  return Encode(Resolve(it == models_.end() ? nullptr : &it->second));
}

absl::StatusOr<protocol::TraceSettings> TraceControl::Update(
    std::string_view model, const protocol::TraceSettingsUpdate& update) {
  absl::MutexLock lock(&mu_);
  Scope* scope = &global_;
  Scope staged;
  if (!model.empty()) {
    auto it = models_.find(model);
    if (it != models_.end()) staged = it->second;
  } else {
    staged = global_;
  }
  for (const protocol::TraceSettingChange& change : update) {
    const std::string_view key = change.key;
    if (key == kLevel) {
      if (!change.value) {
        staged.enabled.reset();
        continue;
      }
      if (change.value->empty()) return Invalid(key, "takes one or more levels");
      bool off = false;
      for (const std::string& level : *change.value) {
        if (level == "OFF") {
          off = true;
        } else if (level == "TENSORS") {
          return absl::UnimplementedError(
              "trace setting 'trace_level': TENSORS is not supported on this server; Brigade's "
              "spans carry stage timestamps (TIMESTAMPS), not tensors");
        } else if (level != "TIMESTAMPS") {
          return Invalid(key, StrCat("unknown level '", level, "'; use OFF or TIMESTAMPS"));
        }
      }
      if (off && change.value->size() > 1) return Invalid(key, "OFF cannot be combined");
      if (!off && !options_.has_destination) {
        return absl::FailedPreconditionError(
            "trace setting 'trace_level': the server has no trace destination; start it with "
            "--trace-file or --trace-otlp-endpoint to trace");
      }
      staged.enabled = !off;
    } else if (key == kRate || key == kCount) {
      if (!change.value) {
        if (key == kRate) {
          staged.rate.reset();
        } else {
          staged.count.reset();
        }
        continue;
      }
      absl::StatusOr<std::string_view> text = One(key, *change.value);
      if (!text.ok()) return text.status();
      int64_t number = 0;
      if (!ParseInteger(*text, &number) || number < (key == kRate ? 0 : -1)) {
        return Invalid(key, StrCat("'", *text, "' is not an integer >= ", key == kRate ? 0 : -1));
      }
      if (key == kRate) {
        staged.rate = static_cast<uint64_t>(number);
      } else {
        staged.count = number;
      }
    } else if (key == kLogFrequency || key == kFile || key == kMode) {
      if (!change.value) continue;  // nothing to clear: these do not change
      absl::StatusOr<std::string_view> text = One(key, *change.value);
      if (!text.ok()) return text.status();
      if (key == kLogFrequency && *text != "0") {
        return absl::UnimplementedError(
            "trace setting 'log_frequency': only 0 is supported; Brigade's exporter writes spans "
            "in batches as they come");
      }
      if (key == kFile && *text != options_.trace_file) {
        return absl::UnimplementedError(
            "trace setting 'trace_file' is set at start-up (--trace-file) and cannot change");
      }
      if (key == kMode && *text != kOpenTelemetry) {
        return absl::UnimplementedError(StrCat("trace setting 'trace_mode': '", *text,
                                               "' is not supported; Brigade traces in ",
                                               kOpenTelemetry));
      }
    } else {
      return absl::InvalidArgumentError(StrCat("unknown trace setting '", key, "'"));
    }
  }
  if (model.empty()) {
    *scope = staged;
    return Encode(Resolve(nullptr));
  }
  Scope& stored = models_[std::string(model)];
  stored = staged;
  return Encode(Resolve(&stored));
}

Tracer::Sampling TraceControl::SamplingFor(std::string_view model) const {
  absl::ReaderMutexLock lock(&mu_);
  const Scope* scope = nullptr;
  if (!models_.empty()) {
    auto it = models_.find(model);
    if (it != models_.end()) scope = &it->second;
  }
  const Effective effective = Resolve(scope);
  Tracer::Sampling sampling;
  sampling.enabled = effective.enabled && effective.count != 0;
  // The start-up rate is the flag's exact fraction; a rate set here is one in N.
  const bool startup_rate = (scope == nullptr || !scope->rate) && !global_.rate;
  sampling.sample_rate = startup_rate     ? options_.sample_rate
                         : effective.rate ? 1.0 / static_cast<double>(effective.rate)
                                          : 0.0;
  return sampling;
}

void TraceControl::Traced(std::string_view model) {
  absl::MutexLock lock(&mu_);
  auto it = models_.find(model);
  std::optional<int64_t>* count = nullptr;
  if (it != models_.end() && it->second.count.has_value()) {
    count = &it->second.count;
  } else if (global_.count.has_value()) {
    count = &global_.count;
  }
  if (count != nullptr && **count > 0) --**count;
}

}  // namespace brigade::telemetry
