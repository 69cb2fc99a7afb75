#include "telemetry/trace_context.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "core/strings.h"
#include "telemetry/fast_random.h"

namespace brigade::telemetry {
namespace {

constexpr size_t kTraceparentLength = 55;  // version 00
constexpr size_t kMaxTracestateMembers = 32;

int LowerHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

template <size_t N>
bool DecodeLowerHex(std::string_view text, std::array<uint8_t, N>* out) {
  if (text.size() != 2 * N) return false;
  for (size_t i = 0; i < N; ++i) {
    const int high = LowerHexValue(text[2 * i]);
    const int low = LowerHexValue(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*out)[i] = static_cast<uint8_t>(high * 16 + low);
  }
  return true;
}

template <size_t N>
std::string EncodeHex(const std::array<uint8_t, N>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xF];
  }
  return out;
}

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

template <size_t N>
void FillRandom(std::array<uint8_t, N>* bytes) {
  do {
    for (size_t i = 0; i < N; i += 8) {
      const uint64_t word = ThreadRandom64();
      for (size_t k = 0; k < 8 && i + k < N; ++k) {
        (*bytes)[i + k] = static_cast<uint8_t>(word >> (8 * k));
      }
    }
  } while (AllZero(*bytes));
}

bool IsOws(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimOws(std::string_view text) {
  while (!text.empty() && IsOws(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsOws(text.back())) text.remove_suffix(1);
  return text;
}

bool IsLcAlpha(char c) { return c >= 'a' && c <= 'z'; }
bool IsKeyChar(char c) {
  return IsLcAlpha(c) || absl::ascii_isdigit(c) || c == '_' || c == '-' || c == '*' || c == '/';
}

// Level 1: simple-key = lcalpha 0*255(keychar);
// multi-tenant-key = (lcalpha / DIGIT) 0*240(keychar) "@" lcalpha 0*13(keychar).
bool IsValidTracestateKey(std::string_view key) {
  const size_t at = key.find('@');
  if (at == std::string_view::npos) {
    if (key.empty() || key.size() > 256 || !IsLcAlpha(key[0])) return false;
    return std::all_of(key.begin(), key.end(), IsKeyChar);
  }
  const std::string_view tenant = key.substr(0, at);
  const std::string_view system = key.substr(at + 1);
  if (tenant.empty() || tenant.size() > 241 ||
      !(IsLcAlpha(tenant[0]) || absl::ascii_isdigit(tenant[0]))) {
    return false;
  }
  if (system.empty() || system.size() > 14 || !IsLcAlpha(system[0])) return false;
  return std::all_of(tenant.begin(), tenant.end(), IsKeyChar) &&
         std::all_of(system.begin(), system.end(), IsKeyChar);
}

// value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E.
bool IsValidTracestateValue(std::string_view value) {
  if (value.empty() || value.size() > 256 || value.back() == ' ') return false;
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return c >= 0x20 && c <= 0x7E && c != ',' && c != '='; });
}

}  // namespace

bool TraceId::valid() const { return !AllZero(bytes); }
std::string TraceId::Hex() const { return EncodeHex(bytes); }
bool SpanId::valid() const { return !AllZero(bytes); }
std::string SpanId::Hex() const { return EncodeHex(bytes); }

TraceId NewTraceId() {
  TraceId id;
  FillRandom(&id.bytes);
  return id;
}

SpanId NewSpanId() {
  SpanId id;
  FillRandom(&id.bytes);
  return id;
}

absl::StatusOr<TraceContext> ParseTraceparent(std::string_view value) {
  value = TrimOws(value);
  if (value.size() < kTraceparentLength) {
    return absl::InvalidArgumentError(
        StrCat("traceparent: ", value.size(), " characters, at least 55 are required"));
  }
  std::array<uint8_t, 1> version;
  if (!DecodeLowerHex(value.substr(0, 2), &version) || value[2] != '-') {
    return absl::InvalidArgumentError("traceparent: version is not 2 lowercase hex digits");
  }
  if (version[0] == 0xFF) {
    return absl::InvalidArgumentError("traceparent: version ff is invalid");
  }
  if (version[0] == 0x00 && value.size() != kTraceparentLength) {
    return absl::InvalidArgumentError("traceparent: version 00 must be exactly 55 characters");
  }
  if (value.size() > kTraceparentLength && value[kTraceparentLength] != '-') {
    return absl::InvalidArgumentError("traceparent: flags must be followed by '-' or the end");
  }
  TraceContext context;
  if (!DecodeLowerHex(value.substr(3, 32), &context.trace_id.bytes) || value[35] != '-') {
    return absl::InvalidArgumentError("traceparent: trace-id is not 32 lowercase hex digits");
  }
  if (!DecodeLowerHex(value.substr(36, 16), &context.parent_span_id.bytes) || value[52] != '-') {
    return absl::InvalidArgumentError("traceparent: parent-id is not 16 lowercase hex digits");
  }
  std::array<uint8_t, 1> flags;
  if (!DecodeLowerHex(value.substr(53, 2), &flags)) {
    return absl::InvalidArgumentError("traceparent: trace-flags are not 2 lowercase hex digits");
  }
  if (!context.trace_id.valid()) {
    return absl::InvalidArgumentError("traceparent: trace-id is all zeros");
  }
  if (!context.parent_span_id.valid()) {
    return absl::InvalidArgumentError("traceparent: parent-id is all zeros");
  }
  context.flags = flags[0];
  return context;
}

absl::StatusOr<std::string> ParseTracestate(std::string_view value) {
  std::vector<std::string_view> keys;
  std::string out;
  size_t members = 0;
  while (true) {
    const size_t comma = value.find(',');
    const std::string_view member = TrimOws(value.substr(0, comma));
    if (!member.empty()) {
      if (++members > kMaxTracestateMembers) {
        return absl::InvalidArgumentError("tracestate: more than 32 list members");
      }
      const size_t equals = member.find('=');
      if (equals == std::string_view::npos) {
        return absl::InvalidArgumentError(StrCat("tracestate: member '", member, "' has no '='"));
      }
      const std::string_view key = member.substr(0, equals);
      const std::string_view member_value = member.substr(equals + 1);
      if (!IsValidTracestateKey(key)) {
        return absl::InvalidArgumentError(StrCat("tracestate: invalid key '", key, "'"));
      }
      if (!IsValidTracestateValue(member_value)) {
        return absl::InvalidArgumentError(StrCat("tracestate: invalid value for key '", key, "'"));
      }
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        return absl::InvalidArgumentError(StrCat("tracestate: key '", key, "' repeated"));
      }
      keys.push_back(key);
      if (!out.empty()) out.push_back(',');
      out.append(member);
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<TraceContext> ExtractTraceContext(std::optional<std::string_view> traceparent,
                                                std::optional<std::string_view> tracestate) {
  if (!traceparent.has_value()) return std::nullopt;
  absl::StatusOr<TraceContext> context = ParseTraceparent(*traceparent);
  if (!context.ok()) return std::nullopt;
  if (tracestate.has_value()) {
    absl::StatusOr<std::string> state = ParseTracestate(*tracestate);
    if (state.ok()) context->trace_state = *std::move(state);
  }
  return *std::move(context);
}

std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, uint8_t flags) {
  const uint8_t known = flags & (kTraceFlagSampled | kTraceFlagRandom);
  return fmt::format("00-{}-{}-{:02x}", trace_id.Hex(), span_id.Hex(), known);
}

}  // namespace brigade::telemetry
