#include "tools/analyze/analysis.h"

#include <algorithm>

#include "core/strings.h"

namespace brigade::analyze {

std::string Analysis::LoadLabel(const PointResult& point) {
  if (point.mode == loadgen::LoadMode::kClosedLoop) return StrCat("c=", point.concurrency);
  return StrCat(loadgen::LoadModeName(point.mode), " ",
                fmt::format("{:g}", point.target_rate_per_s), "/s");
}

std::string Analysis::PointLabel(size_t point) const {
  const PointResult& result = points[point];
  const ConfigResult& config = configs[result.config];
  return StrCat(config.variant, " ", config.config.Label(), " @ ", LoadLabel(result));
}

bool ListsPoint(const std::vector<size_t>& sorted, size_t point) {
  return std::binary_search(sorted.begin(), sorted.end(), point);
}

}  // namespace brigade::analyze
