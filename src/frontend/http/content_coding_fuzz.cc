// libFuzzer target: request bodies in Content-Encoding gzip or deflate are untrusted bytes that
// InflateBody must refuse or inflate without crashing, reading out of bounds or growing past its
// limit; whatever it inflates must survive DeflateBody and InflateBody again unchanged (in either
// coding, split anywhere). The header parsers get the same bytes as text. Built and run by
// scripts/sanitize (seeds in tests/fuzz/frontend_http_content_coding_fuzz).
//
// Input: one flags byte (bit 0: gzip or deflate; bits 1-6: the aligned offset), then the body.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "frontend/http/content_coding.h"

namespace {

constexpr size_t kMaxInflatedBytes = size_t{1} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using brigade::frontend::ContentCoding;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)brigade::frontend::ParseContentEncoding(text);
  (void)brigade::frontend::NegotiateResponseCoding(text);
  if (size == 0) return 0;

  const ContentCoding coding = (data[0] & 1) != 0 ? ContentCoding::kGzip : ContentCoding::kDeflate;
  const size_t aligned_offset = (data[0] >> 1) & 63;
  const std::span<const std::byte> body(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  auto inflated = brigade::frontend::InflateBody(coding, body, kMaxInflatedBytes, aligned_offset);
  if (!inflated.ok()) return 0;
  const brigade::protocol::http::BodyBuffer& buffer = **inflated;
  if (buffer.size() > kMaxInflatedBytes ||
      reinterpret_cast<uintptr_t>(buffer.data() + aligned_offset) %
              brigade::protocol::http::BodyBuffer::kAlignment !=
          0) {
    std::abort();
  }
  const std::span<const std::byte> bytes = buffer.bytes();
  const size_t split = bytes.empty() ? 0 : data[0] % bytes.size();
  const std::span<const std::byte> pieces[] = {bytes.first(split), bytes.subspan(split)};
  for (ContentCoding again : {ContentCoding::kGzip, ContentCoding::kDeflate}) {
    const std::string compressed = brigade::frontend::DeflateBody(again, pieces);
    auto round_trip = brigade::frontend::InflateBody(
        again, std::as_bytes(std::span<const char>(compressed.data(), compressed.size())),
        kMaxInflatedBytes, 0);
    if (!round_trip.ok() || (*round_trip)->view() != buffer.view()) std::abort();
  }
  return 0;
}
