#include "protocol/infer_parameters.h"

#include <string>
#include <type_traits>
#include <variant>

#include "core/strings.h"

namespace brigade::protocol {
namespace {

using enum ParameterScope;
using enum ParameterSupport;

constexpr std::string_view kNoSequences =
    "sequence batching (stateful models) is not supported on this server";
constexpr std::string_view kSharedMemoryInput =
    "system shared memory: the input's bytes are in a registered region (protocol/shared_memory.h)";
constexpr std::string_view kSharedMemoryOutput =
    "system shared memory: the output's bytes are written into a registered region, not the "
    "answer";

constexpr ParameterRule kRules[] = {
    // Request.
    {kRequest, "priority", kImplemented, false,
     "the schedule policy's priority level; 0 or a level the model does not configure means its "
     "default level, as in Triton"},
    {kRequest, "timeout", kImplemented, false,
     "the schedule policy's timeout in microseconds, enforced while the request waits"},
    {kRequest, "binary_data_output", kImplemented, false,
     "HTTP: every output in the binary section (gRPC always answers raw contents)"},
    {kRequest, "cache_control", kImplemented, false,
     "Brigade's response cache: default, bypass or refresh"},
    {kRequest, "sequence_id", kRefused, true, kNoSequences},
    {kRequest, "sequence_start", kRefused, true, kNoSequences},
    {kRequest, "sequence_end", kRefused, true, kNoSequences},
    {kRequest, "headers", kIgnored, false,
     "Triton's key; Brigade forwards headers as parameters of their own names "
     "(--http-header-forward-pattern), so nothing reads it"},
    {kRequest, "triton_enable_empty_final_response", kRefused, true,
     "decoupled models, and the empty final responses that end their streams, are not supported "
     "on this server"},
    // Input.
    {kInput, "binary_data_size", kImplemented, false,
     "HTTP: the input's bytes are in the binary section"},
    {kInput, "shared_memory_region", kImplemented, false, kSharedMemoryInput},
    {kInput, "shared_memory_offset", kImplemented, false, kSharedMemoryInput},
    {kInput, "shared_memory_byte_size", kImplemented, false, kSharedMemoryInput},
    // Output.
    {kOutput, "binary_data", kImplemented, false,
     "HTTP: this output in the binary section (gRPC always answers raw contents)"},
    {kOutput, "classification", kImplemented, false,
     "Triton's classification extension: the top k classes as \"score:index[:label]\""},
    {kOutput, "shared_memory_region", kImplemented, false, kSharedMemoryOutput},
    {kOutput, "shared_memory_offset", kImplemented, false, kSharedMemoryOutput},
    {kOutput, "shared_memory_byte_size", kImplemented, false, kSharedMemoryOutput},
};

// False, zero and the empty string: what clients send to say a feature is off.
bool IsOff(const ParameterValue& value) {
  return std::visit(
      [](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return v.empty();
        } else {
          return v == T{};
        }
      },
      value);
}

std::string_view ScopeName(ParameterScope scope) {
  switch (scope) {
    case kRequest:
      return "request";
    case kInput:
      return "input";
    case kOutput:
      return "output";
  }
  return "request";
}

}  // namespace

std::span<const ParameterRule> ParameterRules() { return kRules; }

const ParameterRule* FindParameterRule(ParameterScope scope, std::string_view key) {
  for (const ParameterRule& rule : kRules) {
    if (rule.scope == scope && rule.key == key) return &rule;
  }
  return nullptr;
}

absl::Status CheckParameters(ParameterScope scope, const Parameters& parameters,
                             std::string_view where) {
  for (const auto& [key, value] : parameters.entries()) {
    const ParameterRule* rule = FindParameterRule(scope, key);
    if (rule == nullptr) {
      if (!key.starts_with(kReservedPrefix)) continue;  // a custom parameter
      return absl::InvalidArgumentError(
          StrCat(where, " parameter '", key, "': keys starting with '", kReservedPrefix,
                 "' are reserved by Triton, and Brigade implements no ", ScopeName(scope),
                 " parameter of that name"));
    }
    if (rule->support != kRefused || (rule->off_accepted && IsOff(value))) continue;
    return absl::InvalidArgumentError(StrCat(where, " parameter '", key, "': ", rule->note));
  }
  return absl::OkStatus();
}

}  // namespace brigade::protocol
