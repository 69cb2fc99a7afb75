#include "process/nms.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/strings.h"

namespace brigade::process {
namespace {

float Area(const float* b) {
  return b[2] > b[0] && b[3] > b[1] ? (b[2] - b[0]) * (b[3] - b[1]) : 0.0f;
}

float Iou(const float* a, const float* b) {
  const float area_a = Area(a);
  const float area_b = Area(b);
  if (area_a <= 0.0f || area_b <= 0.0f) return 0.0f;
  const float w = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  const float h = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (w <= 0.0f || h <= 0.0f) return 0.0f;
  const float inter = w * h;
  return inter / (area_a + area_b - inter);
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> NonMaxSuppression(std::span<const float> boxes,
                                                       std::span<const float> scores,
                                                       std::span<const int64_t> classes,
                                                       const NmsOptions& options) {
  const size_t n = scores.size();
  if (boxes.size() != 4 * n || (!classes.empty() && classes.size() != n)) {
    return absl::InvalidArgumentError(StrCat("nms: ", boxes.size(), " box coordinates, ", n,
                                             " scores and ", classes.size(),
                                             " classes do not describe the same boxes"));
  }
  if (std::isnan(options.iou_threshold) || std::isnan(options.score_threshold) ||
      options.max_detections < 0) {
    return absl::InvalidArgumentError("nms: thresholds must be numbers, max_detections >= 0");
  }
  std::vector<int64_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!std::isnan(scores[i]) && scores[i] >= options.score_threshold) {
      order.push_back(static_cast<int64_t>(i));
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  std::vector<int64_t> kept;
  for (int64_t candidate : order) {
    if (static_cast<int64_t>(kept.size()) >= options.max_detections) break;
    const float* box = boxes.data() + 4 * candidate;
    bool suppressed = false;
    for (int64_t k : kept) {
      if (options.class_aware && !classes.empty() && classes[k] != classes[candidate]) continue;
      if (Iou(boxes.data() + 4 * k, box) > options.iou_threshold) {
        suppressed = true;
        break;
      }
    }
    if (!suppressed) kept.push_back(candidate);
  }
  return kept;
}

}  // namespace brigade::process
