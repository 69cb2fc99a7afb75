#ifndef BRIGADE_TOOLS_ANALYZE_IDX_FILE_H_
#define BRIGADE_TOOLS_ANALYZE_IDX_FILE_H_

// Reading IDX files, the format of MNIST and Fashion-MNIST (Debian's dataset-fashion-mnist ships
// them gzip-compressed under /usr/share/datasets/fashion-mnist):
//
//   0x00 0x00 <type> <ndim>       type: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64
//   ndim × big-endian uint32      the dimensions
//   the elements, big-endian, row-major
//
// The result is a tensor of the matching type in host (little-endian) byte order, e.g. the test
// images as UINT8 [10000, 28, 28] and the labels as UINT8 [10000].
//
// Failure: INVALID_ARGUMENT naming the file for a bad magic, a truncated or oversized body;
// NOT_FOUND for a file that cannot be opened. Pure apart from ReadIdxFile; thread-safe.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::analyze {

// Parses the bytes of an (uncompressed) IDX file; `what` names it in errors.
absl::StatusOr<Tensor> ParseIdx(std::string_view bytes, std::string_view what);

// Reads a whole file, gunzipping it when it is gzip-compressed (detected by its magic bytes, not
// its name).
absl::StatusOr<std::string> ReadMaybeGzipped(const std::string& path);

// ReadMaybeGzipped + ParseIdx.
absl::StatusOr<Tensor> ReadIdxFile(const std::string& path);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_IDX_FILE_H_
