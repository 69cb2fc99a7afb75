#include "core/shape.h"

#include "absl/status/status.h"
#include "core/strings.h"

namespace brigade {

absl::StatusOr<int64_t> ElementCount(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          StrCat("shape ", ShapeToString(dims), " has a negative dimension"));
    }
    if (dim != 0 && count > INT64_MAX / dim) {
      return absl::InvalidArgumentError(
          StrCat("shape ", ShapeToString(dims), " has too many elements"));
    }
    count *= dim;
  }
  return count;
}

bool ShapeMatches(std::span<const int64_t> pattern, std::span<const int64_t> dims) {
  if (pattern.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return false;
    if (pattern[i] != -1 && pattern[i] != dims[i]) return false;
  }
  return true;
}

std::string ShapeToString(std::span<const int64_t> dims) {
  return fmt::format("[{}]", fmt::join(dims, ","));
}

}  // namespace brigade
