#ifndef BRIGADE_TOOLS_CLIENT_JSON_TEXT_H_
#define BRIGADE_TOOLS_CLIENT_JSON_TEXT_H_

// The JSON tokens of the client's request bodies (and of the reports of `brigade bench` and
// `brigade analyze`): the functions of core/json_text.h, named in brigade::client so callers can
// keep writing client::AppendJsonString and friends. Their contract is core/json_text.h's:
// numbers in shortest round-trip form (FP32 in float's, so 0.1f is "0.1"), non-finite numbers as
// NaN / Infinity / -Infinity as Triton and Python's json do, strings escaped (quotes, backslash,
// control characters) with other bytes copied, so the caller passes UTF-8 (IsValidUtf8 checks it).
//
// The caller places commas and brackets itself: request bodies have a fixed shape, and a writer
// object would cost more than the few lines it saves. Pure functions; thread-safe.

#include "core/json_text.h"

namespace brigade::client {

using ::brigade::AppendJsonDouble;
using ::brigade::AppendJsonFloat;
using ::brigade::AppendJsonInt;
using ::brigade::AppendJsonString;
using ::brigade::AppendJsonUint;
using ::brigade::IsValidUtf8;

}  // namespace brigade::client

#endif  // BRIGADE_TOOLS_CLIENT_JSON_TEXT_H_
