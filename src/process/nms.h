#ifndef BRIGADE_PROCESS_NMS_H_
#define BRIGADE_PROCESS_NMS_H_

// Non-maximum suppression of a detector's boxes, as torchvision.ops.batched_nms does it: boxes
// are taken by descending score (ties to the lower index); a box is dropped when its IoU with an
// already kept box of the same class (any class when class_aware is false) is above
// iou_threshold. Boxes scoring below score_threshold, or NaN, are never kept; at most
// max_detections are returned, as indices into the input, highest score first.
//
// Boxes are corners (x1, y1, x2, y2), 4 floats each; a box with x2 <= x1 or y2 <= y1 has no
// area and overlaps nothing (IoU 0).
//
// Thread safety: a pure function. Cost: O(n log n + n * kept). Failure: INVALID_ARGUMENT when
// the spans disagree on the number of boxes, a threshold is NaN, or max_detections < 0.

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::process {

struct NmsOptions {
  float iou_threshold = 0.5f;
  float score_threshold = 0.0f;
  int64_t max_detections = 100;
  bool class_aware = true;
};

// `classes` may be empty (one class); otherwise one per box.
absl::StatusOr<std::vector<int64_t>> NonMaxSuppression(std::span<const float> boxes,
                                                       std::span<const float> scores,
                                                       std::span<const int64_t> classes,
                                                       const NmsOptions& options);

}  // namespace brigade::process

#endif  // BRIGADE_PROCESS_NMS_H_
