#include "core/stage_clock.h"

namespace brigade {

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kArrival:
      return "arrival";
    case Stage::kPreprocessed:
      return "preprocessed";
    case Stage::kInferStart:
      return "infer_start";
    case Stage::kInferEnd:
      return "infer_end";
    case Stage::kPostprocessed:
      return "postprocessed";
    case Stage::kSent:
      return "sent";
    case Stage::kQueueEnter:
      return "queue_enter";
    case Stage::kQueueLeave:
      return "queue_leave";
    case Stage::kDecoded:
      return "decoded";
  }
  return "unknown";
}

}  // namespace brigade
