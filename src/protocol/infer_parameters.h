#ifndef BRIGADE_PROTOCOL_INFER_PARAMETERS_H_
#define BRIGADE_PROTOCOL_INFER_PARAMETERS_H_

// The inference parameters Brigade knows, in one table: what each reserved key on a request, an
// input or an output does here, and the check that refuses those it does not implement.
//
// Why: a client that asks for something the server will not do must get an error, never a
// different answer. A sequence request answered as a stateless one, or a shared-memory output
// answered in the body, looks like success and is wrong. So every key Triton reserves
// (`sequence_*`, `headers`, `shared_memory_*`, every `triton_*`) is either implemented, a hint
// whose absence changes no answer (documented as ignored), or refused with INVALID_ARGUMENT naming
// the key. Keys nobody reserves are custom parameters, passed to the model's routing rules and
// otherwise unused, as Triton passes them to its backends.
//
// Both codecs (http/infer_request_json.cc, grpc/infer_messages.cc) call CheckParameters on each
// parameter map as they read it, before they interpret any of it: the refusal then names the key
// rather than a consequence of ignoring it.
//
// Pure functions over a constant table; thread-safe.

#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "core/parameters.h"

namespace brigade::protocol {

// Which parameter map a key belongs to.
enum class ParameterScope { kRequest, kInput, kOutput };

enum class ParameterSupport {
  kImplemented,  // Brigade does what the key asks
  kIgnored,      // a hint: honouring it or not gives the same answer
  kRefused,      // not implemented: a request that turns it on is refused
};

struct ParameterRule {
  ParameterScope scope;
  std::string_view key;
  ParameterSupport support;
  // For kRefused: a value meaning "off" (false, 0, "") is accepted, because clients send it by
  // default (tritonclient sends sequence_start: false with every sequence_id).
  bool off_accepted;
  // What the key does, or why Brigade ignores or refuses it; refusals quote it.
  std::string_view note;
};

// Every reserved key Brigade knows, by scope; keys starting with kReservedPrefix that are not
// listed are refused.
std::span<const ParameterRule> ParameterRules();
inline constexpr std::string_view kReservedPrefix = "triton_";

// The rule for `key` in `scope`, or nullptr for a key the table does not list.
const ParameterRule* FindParameterRule(ParameterScope scope, std::string_view key);

// OK when no parameter of `parameters` asks for something Brigade does not do; otherwise
// INVALID_ARGUMENT "<where> parameter '<key>': <why>". `where` names the map's owner ("request",
// "input 'x'", "output 'y'").
absl::Status CheckParameters(ParameterScope scope, const Parameters& parameters,
                             std::string_view where);

}  // namespace brigade::protocol

#endif  // BRIGADE_PROTOCOL_INFER_PARAMETERS_H_
