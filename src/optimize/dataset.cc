#include "optimize/dataset.h"

#include <zlib.h>

#include <cstring>
#include <string_view>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::optimize {
namespace {

// The whole file, decompressed when it is gzip (zlib reads plain files unchanged).
absl::StatusOr<std::string> ReadMaybeGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return absl::NotFoundError(StrCat("cannot read '", path, "'"));
  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    const int n = gzread(file, buffer, sizeof(buffer));
    if (n < 0) {
      gzclose(file);
      return absl::InvalidArgumentError(StrCat("'", path, "': corrupt gzip data"));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  gzclose(file);
  return bytes;
}

uint32_t BigEndian32(const std::string& bytes, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// An array read from a file before conversion: its element type, shape and raw bytes.
struct RawArray {
  DataType dtype = DataType::kInvalid;
  Shape shape;
  std::string_view data;
};

bool IsNpy(const std::string& bytes) {
  return bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0;
}

// The value of `key` in a .npy header dict, up to the next `,` or `)` (`shape` includes its
// parentheses).
std::string_view HeaderField(std::string_view header, std::string_view key) {
  const size_t at = header.find(StrCat("'", key, "'"));
  if (at == std::string_view::npos) return {};
  size_t begin = header.find(':', at);
  if (begin == std::string_view::npos) return {};
  ++begin;
  while (begin < header.size() && header[begin] == ' ') ++begin;
  size_t end =
      header[begin] == '(' ? header.find(')', begin) + 1 : header.find_first_of(",}", begin);
  if (end == std::string_view::npos || end > header.size()) return {};
  return header.substr(begin, end - begin);
}

absl::StatusOr<RawArray> ParseNpy(const std::string& bytes, const std::string& path) {
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0;
  size_t offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      return absl::InvalidArgumentError(StrCat("'", path, "': truncated .npy header"));
    }
    for (int i = 3; i >= 0; --i) {
      header_len =
          (header_len << 8) | static_cast<unsigned char>(bytes[8 + static_cast<size_t>(i)]);
    }
    offset = 12;
  } else {
    return absl::InvalidArgumentError(StrCat("'", path, "': unsupported .npy version ", major));
  }
  if (offset + header_len > bytes.size()) {
    return absl::InvalidArgumentError(StrCat("'", path, "': truncated .npy header"));
  }
  const std::string_view header(bytes.data() + offset, header_len);
  RawArray array;
  std::string_view descr = HeaderField(header, "descr");
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"')) {
    descr = descr.substr(1, descr.size() - 2);
  }
  if (descr == "<f4") {
    array.dtype = DataType::kFp32;
  } else if (descr == "<f8") {
    array.dtype = DataType::kFp64;
  } else if (descr == "|u1") {
    array.dtype = DataType::kUint8;
  } else if (descr == "|i1") {
    array.dtype = DataType::kInt8;
  } else if (descr == "<i4") {
    array.dtype = DataType::kInt32;
  } else if (descr == "<i8") {
    array.dtype = DataType::kInt64;
  } else {
    return absl::InvalidArgumentError(
        StrCat("'", path, "': .npy dtype '", descr,
               "' is not supported (float32, float64, uint8, int8, int32, int64)"));
  }
  if (HeaderField(header, "fortran_order").starts_with("True")) {
    return absl::InvalidArgumentError(StrCat("'", path, "': Fortran-order .npy is not supported"));
  }
  std::string_view shape = HeaderField(header, "shape");
  if (shape.size() < 2) {
    return absl::InvalidArgumentError(StrCat("'", path, "': .npy header has no shape"));
  }
  shape = shape.substr(1, shape.size() - 2);
  while (!shape.empty()) {
    const size_t comma = shape.find(',');
    std::string_view item = shape.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      int64_t dim = 0;
      if (!ParseInteger(item, &dim) || dim < 0) {
        return absl::InvalidArgumentError(
            StrCat("'", path, "': bad .npy shape entry '", item, "'"));
      }
      array.shape.push_back(dim);
    }
    if (comma == std::string_view::npos) break;
    shape.remove_prefix(comma + 1);
  }
  array.data = std::string_view(bytes).substr(offset + header_len);
  return array;
}

absl::StatusOr<RawArray> ParseIdx(const std::string& bytes, const std::string& path) {
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0) {
    return absl::InvalidArgumentError(
        StrCat("'", path, "': neither a .npy file nor an IDX file (bad magic)"));
  }
  if (static_cast<unsigned char>(bytes[2]) != 0x08) {
    return absl::InvalidArgumentError(StrCat("'", path, "': IDX element type ",
                                             static_cast<int>(bytes[2]),
                                             " is not supported (only 0x08, unsigned bytes)"));
  }
  const int rank = static_cast<unsigned char>(bytes[3]);
  if (rank < 1 || bytes.size() < 4 + 4 * static_cast<size_t>(rank)) {
    return absl::InvalidArgumentError(StrCat("'", path, "': truncated IDX header"));
  }
  RawArray array;
  array.dtype = DataType::kUint8;
  for (int d = 0; d < rank; ++d) {
    array.shape.push_back(BigEndian32(bytes, 4 + 4 * static_cast<size_t>(d)));
  }
  array.data = std::string_view(bytes).substr(4 + 4 * static_cast<size_t>(rank));
  return array;
}

absl::StatusOr<RawArray> ParseArray(const std::string& bytes, const std::string& path) {
  BRIGADE_ASSIGN_OR_RETURN(RawArray array,
                           IsNpy(bytes) ? ParseNpy(bytes, path) : ParseIdx(bytes, path));
  int64_t count = 1;
  for (int64_t d : array.shape) count *= d;
  const size_t expected = static_cast<size_t>(count) * DataTypeSize(array.dtype);
  if (array.data.size() < expected) {
    return absl::InvalidArgumentError(StrCat("'", path, "': header promises ",
                                             ShapeToString(array.shape), " (", expected,
                                             " bytes) but the file holds ", array.data.size()));
  }
  if (array.shape.empty() || array.shape[0] == 0) {
    return absl::InvalidArgumentError(
        StrCat("'", path, "': no samples (shape ", ShapeToString(array.shape), ")"));
  }
  return array;
}

template <typename T>
double Element(std::string_view data, int64_t i) {
  T v;
  std::memcpy(&v, data.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return static_cast<double>(v);
}

double ElementAt(const RawArray& a, int64_t i) {
  switch (a.dtype) {
    case DataType::kFp32:
      return Element<float>(a.data, i);
    case DataType::kFp64:
      return Element<double>(a.data, i);
    case DataType::kUint8:
      return Element<uint8_t>(a.data, i);
    case DataType::kInt8:
      return Element<int8_t>(a.data, i);
    case DataType::kInt32:
      return Element<int32_t>(a.data, i);
    default:
      return Element<int64_t>(a.data, i);
  }
}

bool IsFloat(DataType t) { return t == DataType::kFp32 || t == DataType::kFp64; }

}  // namespace

absl::StatusOr<Tensor> LoadSamples(const std::string& path, const DatasetOptions& options) {
  BRIGADE_ASSIGN_OR_RETURN(std::string bytes, ReadMaybeGzip(path));
  BRIGADE_ASSIGN_OR_RETURN(RawArray array, ParseArray(bytes, path));
  Shape shape = array.shape;
  if (options.max_samples > 0 && shape[0] > options.max_samples) shape[0] = options.max_samples;
  BRIGADE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DataType::kFp32, shape));
  const double scale = IsFloat(array.dtype) ? 1.0 : options.integer_scale;
  std::span<float> values = out.mutable_values<float>();
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    values[static_cast<size_t>(i)] = static_cast<float>(ElementAt(array, i) * scale);
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> LoadLabels(const std::string& path, int64_t max_samples) {
  BRIGADE_ASSIGN_OR_RETURN(std::string bytes, ReadMaybeGzip(path));
  BRIGADE_ASSIGN_OR_RETURN(RawArray array, ParseArray(bytes, path));
  if (array.shape.size() != 1 || IsFloat(array.dtype)) {
    return absl::InvalidArgumentError(StrCat(
        "'", path, "': labels must be a 1-D integer array, not ", ShapeToString(array.shape)));
  }
  int64_t n = array.shape[0];
  if (max_samples > 0 && n > max_samples) n = max_samples;
  std::vector<int64_t> labels(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    labels[static_cast<size_t>(i)] = static_cast<int64_t>(ElementAt(array, i));
  }
  return labels;
}

absl::StatusOr<Tensor> FitToInput(const Tensor& samples, const std::vector<int64_t>& sample_shape,
                                  const std::string& what, const std::string& input) {
  const int64_t n = samples.shape()[0];
  const int64_t per_sample = n == 0 ? 0 : samples.num_elements() / n;
  int64_t known = 1;
  int unknown = 0;
  for (int64_t d : sample_shape) {
    if (d < 0) {
      ++unknown;
    } else {
      known *= d;
    }
  }
  Shape shape{n};
  for (int64_t d : sample_shape) {
    shape.push_back(d >= 0 ? d : (unknown == 1 && known > 0 ? per_sample / known : -1));
  }
  int64_t want = 1;
  for (size_t d = 1; d < shape.size(); ++d) want *= shape[d];
  if (unknown > 1 || want != per_sample) {
    Shape expected{-1};
    expected.insert(expected.end(), sample_shape.begin(), sample_shape.end());
    return absl::InvalidArgumentError(
        StrCat("'", what, "': samples of shape ", ShapeToString(samples.shape()),
               " do not fit model input '", input, "' ", ShapeToString(expected), " (", per_sample,
               " values per sample, the input takes ", unknown > 1 ? -1 : want, ")"));
  }
  return samples.Reshaped(shape);
}

}  // namespace brigade::optimize
