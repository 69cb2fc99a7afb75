#include "engine/torch/heap_retention.h"

#include <malloc.h>

#include <cstdlib>
#include <string_view>

#include "core/strings.h"

namespace brigade::engine {
namespace {

std::string Retain() {
  for (const char* variable : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"}) {
    if (std::getenv(variable) != nullptr) {
      return StrCat("malloc: thresholds left as ", variable, " sets them");
    }
  }
  if (const char* tunables = std::getenv("GLIBC_TUNABLES");
      tunables != nullptr &&
      std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) {
    return "malloc: thresholds left as GLIBC_TUNABLES sets them";
  }
  // mallopt returns 1 on success, 0 on a value glibc refuses (it then changes nothing).
  if (mallopt(M_MMAP_THRESHOLD, kRetainedMmapThresholdBytes) != 1 ||
      mallopt(M_TRIM_THRESHOLD, kRetainedTrimThresholdBytes) != 1) {
    return "malloc: glibc refused the thresholds; freed tensors go back to the kernel";
  }
  return StrCat("malloc: blocks up to ", kRetainedMmapThresholdBytes >> 20, " MiB reused, up to ",
                kRetainedTrimThresholdBytes >> 20, " MiB kept free per arena");
}

}  // namespace

const std::string& RetainFreedHeapOnce() {
  static const std::string result = Retain();
  return result;
}

}  // namespace brigade::engine
