#include "cache/cached_value.h"

#include <utility>

#include "cache/byte_io.h"
#include "core/strings.h"
#include "xxh_x86dispatch.h"
#include "xxhash.h"

namespace brigade::cache {
namespace {

constexpr std::string_view kCachedValueMagic = "BRCV";
constexpr size_t kDataAlignment = 16;
// Larger ranks are refused; no real tensor comes close, and the bound stops a corrupt rank from
// asking for a huge Shape.
constexpr uint32_t kMaxRank = 64;
// Bookkeeping charged per entry and per output on top of the encoded bytes.
constexpr size_t kEntryOverheadBytes = sizeof(CachedEntry) + 64;
constexpr size_t kOutputOverheadBytes = sizeof(InferOutput);

size_t PaddingFor(size_t offset) {
  return (kDataAlignment - offset % kDataAlignment) % kDataAlignment;
}

absl::Status Corrupt(std::string_view what) {
  return absl::InvalidArgumentError(StrCat("cached value is malformed: ", what));
}

}  // namespace

size_t CachedEntry::charge_bytes() const {
  return (blob != nullptr ? blob->capacity() : 0) + kEntryOverheadBytes +
         outputs.size() * kOutputOverheadBytes;
}

std::string EncodeCachedValue(const CacheKey& key, const InferResponse& response,
                              int64_t expires_unix_ms) {
  size_t data_bytes = 0;
  for (const InferOutput& output : response.outputs) {
    data_bytes += output.tensor.byte_size() + kDataAlignment + output.name.size() + 128;
  }
  std::string out;
  out.reserve(128 + key.descriptor.size() + data_bytes);
  ByteWriter writer(&out);
  writer.Raw(kCachedValueMagic);
  writer.U8(kCachedValueFormatVersion);
  writer.U8(0);
  writer.U8(0);
  writer.U8(0);
  writer.U64(key.id.low);
  writer.U64(key.id.high);
  writer.U64(key.check.low);
  writer.U64(key.check.high);
  writer.I64(expires_unix_ms);
  writer.Str(key.descriptor);
  writer.Str(response.model_version);
  writer.Params(response.parameters);
  writer.U32(static_cast<uint32_t>(response.outputs.size()));
  for (const InferOutput& output : response.outputs) {
    writer.Str(output.name);
    writer.U8(static_cast<uint8_t>(output.tensor.dtype()));
    writer.U32(static_cast<uint32_t>(output.tensor.shape().size()));
    for (int64_t dim : output.tensor.shape()) writer.I64(dim);
    writer.Params(output.parameters);
    writer.U64(output.tensor.byte_size());
    out.append(PaddingFor(out.size()), '\0');
    writer.Raw(output.tensor.bytes());
  }
  writer.U64(XXH3_64bits(out.data(), out.size()));
  return out;
}

absl::StatusOr<std::shared_ptr<const CachedEntry>> DecodeCachedValue(
    std::shared_ptr<const std::string> blob) {
  if (blob == nullptr) return Corrupt("no value");
  const std::string_view in(*blob);
  if (in.size() < kCachedValueMagic.size() + 4 + 8) return Corrupt("too short");
  if (in.substr(0, kCachedValueMagic.size()) != kCachedValueMagic) return Corrupt("bad magic");
  if (static_cast<uint8_t>(in[kCachedValueMagic.size()]) != kCachedValueFormatVersion) {
    return absl::InvalidArgumentError(StrCat(
        "cached value has format version ", static_cast<uint8_t>(in[kCachedValueMagic.size()]),
        ", this build reads version ", kCachedValueFormatVersion));
  }
  const std::string_view body = in.substr(0, in.size() - 8);
  ByteReader checksum_reader(in.substr(in.size() - 8));
  uint64_t checksum = 0;
  checksum_reader.U64(&checksum);
  if (checksum != XXH3_64bits(body.data(), body.size())) return Corrupt("checksum mismatch");

  auto entry = std::make_shared<CachedEntry>();
  ByteReader reader(body);
  std::string_view skip;
  uint8_t flags = 0;
  uint16_t reserved = 0;
  reader.Raw(kCachedValueMagic.size() + 1, &skip);
  if (!reader.U8(&flags) || flags != 0) return Corrupt("unknown flags");
  for (int i = 0; i < 2; ++i) {
    uint8_t byte = 0;
    if (!reader.U8(&byte)) return Corrupt("truncated header");
    reserved |= byte;
  }
  if (reserved != 0) return Corrupt("reserved header bytes are set");
  std::string_view model_version;
  if (!reader.U64(&entry->id.low) || !reader.U64(&entry->id.high) ||
      !reader.U64(&entry->check.low) || !reader.U64(&entry->check.high) ||
      !reader.I64(&entry->expires_unix_ms) || !reader.Str(&entry->descriptor) ||
      !reader.Str(&model_version) || !reader.Params(&entry->parameters)) {
    return Corrupt("truncated header");
  }
  entry->model_version = std::string(model_version);
  uint32_t output_count = 0;
  if (!reader.U32(&output_count)) return Corrupt("truncated output count");
  // Each output needs at least name length, dtype, rank, parameter count and byte size.
  if (output_count > reader.remaining() / 21) return Corrupt("output count exceeds the value");
  entry->outputs.reserve(output_count);
  for (uint32_t o = 0; o < output_count; ++o) {
    InferOutput output;
    std::string_view name;
    uint8_t dtype = 0;
    uint32_t rank = 0;
    if (!reader.Str(&name) || !reader.U8(&dtype) || !reader.U32(&rank)) {
      return Corrupt(StrCat("output ", o, " is truncated"));
    }
    if (dtype == 0 || dtype >= kNumDataTypes) {
      return Corrupt(StrCat("output ", o, " has dtype ", dtype));
    }
    if (rank > kMaxRank) return Corrupt(StrCat("output ", o, " has rank ", rank));
    Shape shape;
    for (uint32_t d = 0; d < rank; ++d) {
      int64_t dim = 0;
      if (!reader.I64(&dim)) return Corrupt(StrCat("output ", o, " shape is truncated"));
      shape.push_back(dim);
    }
    uint64_t byte_size = 0;
    if (!reader.Params(&output.parameters) || !reader.U64(&byte_size)) {
      return Corrupt(StrCat("output ", o, " is truncated"));
    }
    std::string_view padding;
    std::string_view data;
    if (!reader.Raw(PaddingFor(reader.position()), &padding) ||
        padding.find_first_not_of('\0') != std::string_view::npos) {
      return Corrupt(StrCat("output ", o, " padding is corrupt"));
    }
    if (!reader.Raw(byte_size, &data)) return Corrupt(StrCat("output ", o, " data is truncated"));
    absl::StatusOr<Tensor> tensor = Tensor::View(static_cast<DataType>(dtype), std::move(shape),
                                                 const_cast<char*>(data.data()), data.size(), blob);
    if (!tensor.ok()) return Corrupt(StrCat("output '", name, "': ", tensor.status().message()));
    output.name = std::string(name);
    output.tensor = *std::move(tensor);
    entry->outputs.push_back(std::move(output));
  }
  if (reader.remaining() != 0) return Corrupt("bytes after the last output");
  entry->blob = std::move(blob);
  return std::shared_ptr<const CachedEntry>(std::move(entry));
}

}  // namespace brigade::cache
