#ifndef BRIGADE_TOOLS_LOADGEN_NPY_FILE_H_
#define BRIGADE_TOOLS_LOADGEN_NPY_FILE_H_

// Reading NumPy .npy files (format versions 1.0, 2.0 and 3.0) into tensors, so benchmark inputs
// can be prepared with numpy.save. Supported dtypes: bool, (u)int8..64, float16, float32,
// float64, little-endian or byte-order-free, C order. Fortran order, big-endian data, strings and
// objects are refused with INVALID_ARGUMENT naming the file and the reason. Pure; thread-safe.

#include <string_view>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::loadgen {

// Parses the bytes of a .npy file; `what` names it in errors.
absl::StatusOr<Tensor> ParseNpy(std::string_view bytes, std::string_view what);

// Reads and parses a file.
absl::StatusOr<Tensor> ReadNpyFile(const std::string& path);

// Reads a whole file (NOT_FOUND when it cannot be opened).
absl::StatusOr<std::string> ReadFileBytes(const std::string& path);

}  // namespace brigade::loadgen

#endif  // BRIGADE_TOOLS_LOADGEN_NPY_FILE_H_
