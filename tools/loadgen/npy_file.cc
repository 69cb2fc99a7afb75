#include "tools/loadgen/npy_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::loadgen {
namespace {

absl::Status Bad(std::string_view what, std::string_view reason) {
  return absl::InvalidArgumentError(StrCat(what, ": not a supported .npy file: ", reason));
}

// The text of a Python dict value after `'key':` in the header, up to the next top-level comma
// or closing brace (a shape tuple keeps its commas).
std::optional<std::string_view> DictValue(std::string_view header, std::string_view key) {
  const std::string quoted_single = StrCat("'", key, "'");
  size_t pos = header.find(quoted_single);
  if (pos == std::string_view::npos) return std::nullopt;
  pos = header.find(':', pos + quoted_single.size());
  if (pos == std::string_view::npos) return std::nullopt;
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  size_t end = pos;
  int depth = 0;
  while (end < header.size()) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    ++end;
  }
  return header.substr(pos, end - pos);
}

std::optional<DataType> NpyType(std::string_view descr) {
  if (descr.size() < 3) return std::nullopt;
  const char order = descr[0];
  if (order != '<' && order != '|' && order != '=') return std::nullopt;
  const std::string_view code = descr.substr(1);
  if (code == "b1") return DataType::kBool;
  if (code == "u1") return DataType::kUint8;
  if (code == "u2") return DataType::kUint16;
  if (code == "u4") return DataType::kUint32;
  if (code == "u8") return DataType::kUint64;
  if (code == "i1") return DataType::kInt8;
  if (code == "i2") return DataType::kInt16;
  if (code == "i4") return DataType::kInt32;
  if (code == "i8") return DataType::kInt64;
  if (code == "f2") return DataType::kFp16;
  if (code == "f4") return DataType::kFp32;
  if (code == "f8") return DataType::kFp64;
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(std::string_view bytes, std::string_view what) {
  constexpr std::string_view kMagic("\x93NUMPY", 6);
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) return Bad(what, "no NUMPY magic");
  const auto major = static_cast<uint8_t>(bytes[6]);
  size_t header_length = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_length = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad(what, "truncated header");
    uint32_t length = 0;
    std::memcpy(&length, bytes.data() + 8, 4);  // little-endian on every supported host
    header_length = length;
    header_start = 12;
  } else {
    return Bad(what, StrCat("format version ", int{major}));
  }
  if (bytes.size() < header_start + header_length) return Bad(what, "truncated header");
  const std::string_view header = bytes.substr(header_start, header_length);

  const std::optional<std::string_view> descr = DictValue(header, "descr");
  const std::optional<std::string_view> fortran = DictValue(header, "fortran_order");
  const std::optional<std::string_view> shape_text = DictValue(header, "shape");
  if (!descr || !fortran || !shape_text) return Bad(what, "header lacks descr/fortran_order/shape");
  if (*fortran != "False") return Bad(what, "Fortran order");
  std::string_view descr_text = *descr;
  if (descr_text.size() < 2 || (descr_text.front() != '\'' && descr_text.front() != '"')) {
    return Bad(what, StrCat("dtype ", descr_text));
  }
  descr_text = descr_text.substr(1, descr_text.size() - 2);
  const std::optional<DataType> dtype = NpyType(descr_text);
  if (!dtype.has_value()) return Bad(what, StrCat("dtype '", descr_text, "'"));

  Shape shape;
  std::string_view dims = *shape_text;
  if (dims.size() < 2 || dims.front() != '(' || dims.back() != ')') {
    return Bad(what, StrCat("shape ", dims));
  }
  dims = dims.substr(1, dims.size() - 2);
  while (!dims.empty()) {
    const size_t comma = dims.find(',');
    std::string_view dim = dims.substr(0, comma);
    while (!dim.empty() && dim.front() == ' ') dim.remove_prefix(1);
    while (!dim.empty() && dim.back() == ' ') dim.remove_suffix(1);
    if (!dim.empty()) {
      int64_t size = 0;
      if (!ParseInteger(dim, &size)) return Bad(what, StrCat("shape dim '", dim, "'"));
      shape.push_back(size);
    }
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
  }
  const std::string_view data = bytes.substr(header_start + header_length);
  absl::StatusOr<Tensor> tensor =
      Tensor::Copy(*dtype, shape, std::as_bytes(std::span(data.data(), data.size())));
  if (!tensor.ok()) {
    return absl::InvalidArgumentError(StrCat(what, ": ", ToStd(tensor.status().message())));
  }
  return tensor;
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(StrCat("cannot open '", path, "'"));
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  BRIGADE_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  return ParseNpy(bytes, path);
}

}  // namespace brigade::loadgen
