#ifndef BRIGADE_CORE_SHAPE_H_
#define BRIGADE_CORE_SHAPE_H_

// Tensor shapes: a short list of dimensions. Concrete shapes (a tensor's) have every dim >= 0;
// shape *patterns* (a model's declared input) may use -1 for "any size".

#include <cstdint>
#include <span>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"

namespace brigade {

// Six inline dims cover NCHW images, NLC text and most detector heads without a heap allocation.
using Shape = absl::InlinedVector<int64_t, 6>;

// Product of the dims. Fails with INVALID_ARGUMENT on a negative dim or on int64 overflow, so a
// hostile shape like [2^40, 2^40] is refused instead of wrapping around.
absl::StatusOr<int64_t> ElementCount(std::span<const int64_t> dims);

// True when `dims` is concrete and matches `pattern` dim by dim (-1 in the pattern matches any).
bool ShapeMatches(std::span<const int64_t> pattern, std::span<const int64_t> dims);

// "[1,3,224,224]".
std::string ShapeToString(std::span<const int64_t> dims);

}  // namespace brigade

#endif  // BRIGADE_CORE_SHAPE_H_
