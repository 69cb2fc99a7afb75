#include "tools/analyze/idx_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::analyze {
namespace {

struct IdxType {
  uint8_t code;
  DataType dtype;
};
constexpr IdxType kIdxTypes[] = {
    {0x08, DataType::kUint8}, {0x09, DataType::kInt8}, {0x0B, DataType::kInt16},
    {0x0C, DataType::kInt32}, {0x0D, DataType::kFp32}, {0x0E, DataType::kFp64},
};

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

struct GzFileCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};

}  // namespace

absl::StatusOr<Tensor> ParseIdx(std::string_view bytes, std::string_view what) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 4 || data[0] != 0 || data[1] != 0) {
    return absl::InvalidArgumentError(StrCat(what, ": not an IDX file (bad magic)"));
  }
  const auto type = std::find_if(std::begin(kIdxTypes), std::end(kIdxTypes),
                                 [&](const IdxType& t) { return t.code == data[2]; });
  if (type == std::end(kIdxTypes)) {
    return absl::InvalidArgumentError(
        StrCat(what, ": unknown IDX element type 0x", fmt::format("{:02x}", data[2])));
  }
  const size_t ndim = data[3];
  if (ndim == 0 || bytes.size() < 4 + 4 * ndim) {
    return absl::InvalidArgumentError(StrCat(what, ": truncated IDX header"));
  }
  Shape shape;
  for (size_t i = 0; i < ndim; ++i) shape.push_back(BigEndian32(data + 4 + 4 * i));
  BRIGADE_ASSIGN_OR_RETURN(const int64_t count, ElementCount(shape));
  const size_t element_size = DataTypeSize(type->dtype);
  const size_t body = bytes.size() - 4 - 4 * ndim;
  if (static_cast<uint64_t>(count) > body / element_size || body != count * element_size) {
    return absl::InvalidArgumentError(StrCat(what, ": IDX body holds ", body, " bytes, shape ",
                                             ShapeToString(shape), " needs ",
                                             static_cast<uint64_t>(count) * element_size));
  }
  BRIGADE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(type->dtype, shape));
  const unsigned char* in = data + 4 + 4 * ndim;
  std::byte* out = tensor.mutable_data();
  if (element_size == 1) {
    std::memcpy(out, in, body);
  } else {
    // Big-endian elements to host order (x86 and ARM Linux are little-endian).
    for (size_t i = 0; i < body; i += element_size) {
      for (size_t b = 0; b < element_size; ++b) {
        out[i + b] = static_cast<std::byte>(in[i + element_size - 1 - b]);
      }
    }
  }
  return tensor;
}

absl::StatusOr<std::string> ReadMaybeGzipped(const std::string& path) {
  // gzread passes a file without the gzip magic through unchanged.
  std::unique_ptr<gzFile_s, GzFileCloser> file(gzopen(path.c_str(), "rb"));
  if (file == nullptr) return absl::NotFoundError(StrCat("cannot open ", path));
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    const int read = gzread(file.get(), buffer, sizeof(buffer));
    if (read < 0) {
      int code = 0;
      const char* message = gzerror(file.get(), &code);
      return absl::InvalidArgumentError(StrCat(path, ": ", message != nullptr ? message : "?"));
    }
    if (read == 0) break;
    contents.append(buffer, static_cast<size_t>(read));
  }
  return contents;
}

absl::StatusOr<Tensor> ReadIdxFile(const std::string& path) {
  BRIGADE_ASSIGN_OR_RETURN(const std::string bytes, ReadMaybeGzipped(path));
  return ParseIdx(bytes, path);
}

}  // namespace brigade::analyze
