#include "frontend/http/content_coding.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "core/http_tokens.h"
#include "core/strings.h"

namespace brigade::frontend {
namespace {

// zlib counts in uInt; larger inputs are fed in slices of this size.
constexpr size_t kMaxSliceBytes = size_t{1} << 30;
constexpr size_t kInflateStepBytes = size_t{64} << 10;

bool StartsWithGzipMagic(std::span<const std::byte> bytes) {
  return bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b};
}

// RFC 1950: compression method 8 (deflate), window <= 32 KiB, header checksum a multiple of 31.
bool StartsWithZlibHeader(std::span<const std::byte> bytes) {
  if (bytes.size() < 2) return false;
  const auto cmf = static_cast<unsigned>(bytes[0]);
  const auto flg = static_cast<unsigned>(bytes[1]);
  return (cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && (cmf * 256 + flg) % 31 == 0;
}

// Owns a z_stream set up for inflating; ends it on every path.
class Inflater {
 public:
  explicit Inflater(int window_bits) { ok_ = inflateInit2(&stream_, window_bits) == Z_OK; }
  ~Inflater() {
    if (ok_) inflateEnd(&stream_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  bool ok() const { return ok_; }
  z_stream* stream() { return &stream_; }

 private:
  z_stream stream_{};
  bool ok_ = false;
};

absl::Status CorruptError(ContentCoding coding, const z_stream& stream) {
  return absl::InvalidArgumentError(
      StrCat("request body is not valid ", ContentCodingName(coding),
             " data (Content-Encoding): ", stream.msg != nullptr ? stream.msg : "corrupt stream"));
}

// deflate's best case is about 1032 output bytes per input byte, so a larger size (from gzip's
// trailer, which the sender writes) is a lie and must not size the first allocation.
constexpr size_t kMaxInflateRatio = 1032;

absl::Status OverBudget(const MemoryBudget& budget, size_t inflated_bytes) {
  return absl::UnavailableError(
      StrCat("the server is holding its limit of request memory (", budget.limit(),
             " bytes, --max-inflight-bytes) and cannot inflate the request body past ",
             inflated_bytes, " bytes now; retry later"));
}

absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> Inflate(
    ContentCoding coding, std::span<const std::byte> compressed, size_t max_bytes,
    size_t aligned_offset, MemoryBudget* budget) {
  int window_bits = 15;  // zlib stream
  if (coding == ContentCoding::kGzip) {
    window_bits = 16 + 15;
  } else if (!StartsWithZlibHeader(compressed)) {
    window_bits = -15;  // raw deflate
  }
  Inflater inflater(window_bits);
  if (!inflater.ok()) return absl::ResourceExhaustedError("cannot start zlib's inflater");
  z_stream& stream = *inflater.stream();

  // gzip's trailer holds the size (mod 2^32) of the last member: a good first guess. One byte
  // more than allowed is room enough to notice a body over the limit, and one more than the
  // guess lets inflate report the end without a second allocation.
  size_t guess = compressed.size() * 4;
  if (coding == ContentCoding::kGzip && compressed.size() >= 18) {
    uint32_t isize = 0;
    std::memcpy(&isize, compressed.data() + compressed.size() - 4, sizeof(isize));
    guess = std::min<size_t>(isize, compressed.size() * kMaxInflateRatio);
  }
  const size_t limit = max_bytes + 1;
  const size_t first = std::min(limit, std::max(guess + 1, kInflateStepBytes));
  MemoryBudget::Charge charge;
  if (budget != nullptr) {
    charge = budget->TryCharge(first);
    if (!charge) return OverBudget(*budget, 0);
  }
  std::shared_ptr<protocol::http::BodyBuffer> out =
      protocol::http::BodyBuffer::Allocate(first, aligned_offset, std::move(charge));
  if (out == nullptr) return absl::ResourceExhaustedError("no memory to inflate the request body");

  std::span<const std::byte> rest = compressed;
  while (true) {
    if (stream.avail_in == 0 && !rest.empty()) {
      const size_t slice = std::min(rest.size(), kMaxSliceBytes);
      // zlib's API takes non-const input it never writes.
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(rest.data()));
      stream.avail_in = static_cast<uInt>(slice);
      rest = rest.subspan(slice);
    }
    if (out->available() == 0 &&
        !out->Reserve(std::min(limit, std::max(out->capacity() * 2, kInflateStepBytes)),
                      aligned_offset)) {
      if (out->budget_refused()) return OverBudget(*budget, out->size());
      return absl::ResourceExhaustedError(
          StrCat("no memory to inflate the request body past ", out->size(), " bytes"));
    }
    const size_t room = std::min(out->available(), kMaxSliceBytes);
    stream.next_out = reinterpret_cast<Bytef*>(out->write_ptr());
    stream.avail_out = static_cast<uInt>(room);
    const int result = inflate(&stream, Z_NO_FLUSH);
    out->Commit(room - stream.avail_out);
    if (out->size() > max_bytes) {
      return absl::ResourceExhaustedError(StrCat("request body inflates to more than ", max_bytes,
                                                 " bytes (Content-Encoding ",
                                                 ContentCodingName(coding), ")"));
    }
    if (result == Z_STREAM_END) {
      const std::span<const std::byte> left = std::span<const std::byte>(
          reinterpret_cast<const std::byte*>(stream.next_in), stream.avail_in);
      if (left.empty() && rest.empty()) break;
      // gzip allows several members back to back; anything else after the stream is an error.
      if (coding == ContentCoding::kGzip && StartsWithGzipMagic(left.empty() ? rest : left)) {
        if (inflateReset(&stream) != Z_OK) return CorruptError(coding, stream);
        continue;
      }
      return absl::InvalidArgumentError(StrCat("request body has ", left.size() + rest.size(),
                                               " byte(s) after its ", ContentCodingName(coding),
                                               " stream (Content-Encoding)"));
    }
    // Out of input with room left to write: the stream was cut short.
    if (result == Z_BUF_ERROR && stream.avail_out > 0 && stream.avail_in == 0 && rest.empty()) {
      return absl::InvalidArgumentError(StrCat("request body ends before its ",
                                               ContentCodingName(coding),
                                               " stream does (Content-Encoding)"));
    }
    if (result != Z_OK && result != Z_BUF_ERROR) return CorruptError(coding, stream);
  }
  return out;
}

}  // namespace

std::string_view ContentCodingName(ContentCoding coding) {
  switch (coding) {
    case ContentCoding::kIdentity:
      return "identity";
    case ContentCoding::kGzip:
      return "gzip";
    case ContentCoding::kDeflate:
      return "deflate";
  }
  return "identity";
}

std::optional<ContentCoding> ParseContentEncoding(std::string_view value) {
  value = TrimHttpWhitespace(value);
  if (EqualsIgnoreCase(value, "identity")) return ContentCoding::kIdentity;
  if (EqualsIgnoreCase(value, "gzip") || EqualsIgnoreCase(value, "x-gzip")) {
    return ContentCoding::kGzip;
  }
  if (EqualsIgnoreCase(value, "deflate")) return ContentCoding::kDeflate;
  return std::nullopt;
}

ContentCoding NegotiateResponseCoding(std::optional<std::string_view> accept_encoding) {
  if (!accept_encoding) return ContentCoding::kIdentity;
  // q of gzip, deflate and `*`; -1 = not listed.
  double gzip_q = -1, deflate_q = -1, any_q = -1;
  std::string_view rest = *accept_encoding;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t semicolon = item.find(';');
    const std::string_view token = TrimHttpWhitespace(item.substr(0, semicolon));
    double q = 1;
    if (semicolon != std::string_view::npos) {
      std::string_view parameter = TrimHttpWhitespace(item.substr(semicolon + 1));
      if (parameter.size() >= 2 && (parameter[0] == 'q' || parameter[0] == 'Q') &&
          parameter[1] == '=') {
        // RFC 9110 qvalue: 0, 0.x..., 1, 1.0...; anything unreadable counts as not acceptable.
        const std::string_view number = TrimHttpWhitespace(parameter.substr(2));
        q = 0;
        if (!number.empty() && (number[0] == '0' || number[0] == '1')) {
          q = number[0] - '0';
          double scale = 0.1;
          for (size_t i = 2; i < number.size() && i < 5 && number[1] == '.'; ++i, scale /= 10) {
            if (number[i] < '0' || number[i] > '9') break;
            q += (number[i] - '0') * scale;
          }
          q = std::min(q, 1.0);
        }
      }
    }
    if (EqualsIgnoreCase(token, "gzip") || EqualsIgnoreCase(token, "x-gzip")) {
      gzip_q = std::max(gzip_q, q);
    } else if (EqualsIgnoreCase(token, "deflate")) {
      deflate_q = std::max(deflate_q, q);
    } else if (token == "*") {
      any_q = q;
    }
  }
  if (gzip_q < 0) gzip_q = any_q;
  if (deflate_q < 0) deflate_q = any_q;
  if (gzip_q <= 0 && deflate_q <= 0) return ContentCoding::kIdentity;
  return gzip_q >= deflate_q ? ContentCoding::kGzip : ContentCoding::kDeflate;
}

absl::StatusOr<std::shared_ptr<protocol::http::BodyBuffer>> InflateBody(
    ContentCoding coding, std::span<const std::byte> compressed, size_t max_bytes,
    size_t aligned_offset, MemoryBudget* budget) {
  if (coding == ContentCoding::kIdentity) {
    return absl::InvalidArgumentError("InflateBody: identity is not a coding to inflate");
  }
  return Inflate(coding, compressed, max_bytes, aligned_offset, budget);
}

std::string DeflateBody(ContentCoding coding, std::span<const std::span<const std::byte>> pieces) {
  size_t total = 0;
  for (std::span<const std::byte> piece : pieces) total += piece.size();
  std::string out;
  if (coding == ContentCoding::kIdentity) {
    out.reserve(total);
    for (std::span<const std::byte> piece : pieces) {
      out.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    }
    return out;
  }
  z_stream stream{};
  const int window_bits = coding == ContentCoding::kGzip ? 16 + 15 : 15;
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return DeflateBody(ContentCoding::kIdentity, pieces);  // unreachable short of no memory
  }
  // deflateBound covers the whole input in one call; the buffer only grows if that is exceeded.
  out.resize(deflateBound(&stream, static_cast<uLong>(total)) + 32);
  // Points zlib at the unused tail of `out`, growing it when full.
  auto make_room = [&out, &stream] {
    if (stream.total_out == out.size()) out.resize(out.size() * 2);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + stream.total_out);
    stream.avail_out = static_cast<uInt>(std::min(out.size() - stream.total_out, kMaxSliceBytes));
  };
  for (size_t i = 0; i <= pieces.size(); ++i) {
    const bool last = i == pieces.size();
    std::span<const std::byte> piece = last ? std::span<const std::byte>() : pieces[i];
    do {
      const size_t slice = std::min(piece.size(), kMaxSliceBytes);
      // zlib's API takes non-const input it never writes.
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(piece.data()));
      stream.avail_in = static_cast<uInt>(slice);
      piece = piece.subspan(slice);
      const int flush = last && piece.empty() ? Z_FINISH : Z_NO_FLUSH;
      while (true) {
        if (stream.avail_out == 0) make_room();
        const int result = deflate(&stream, flush);
        if (flush == Z_FINISH ? result == Z_STREAM_END : stream.avail_in == 0) break;
      }
    } while (!piece.empty());
  }
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

}  // namespace brigade::frontend
