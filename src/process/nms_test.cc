#include "process/nms.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace brigade::process {
namespace {

using ::testing::ElementsAre;

// Boxes 0 and 1 overlap heavily (IoU 0.68); box 2 overlaps box 1 a little (IoU 0.087) and box
// 0 less (0.047); box 3 is far away.
const std::vector<float> kBoxes = {0, 0, 10, 10, 1,  1,  11, 11,   // 0, 1
                                   7, 7, 17, 17, 50, 50, 60, 60};  // 2, 3

TEST(NmsTest, DropsOverlapsAboveTheThresholdHighestScoreFirst) {
  const std::vector<float> scores = {0.8f, 0.9f, 0.7f, 0.3f};
  absl::StatusOr<std::vector<int64_t>> kept = NonMaxSuppression(kBoxes, scores, {}, {});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(*kept, ElementsAre(1, 2, 3));  // 0 loses to 1 (IoU 0.68 > 0.5)
  NmsOptions strict;
  strict.iou_threshold = 0.1f;  // box 2 overlaps box 1 at IoU ~0.09: kept
  EXPECT_THAT(*NonMaxSuppression(kBoxes, scores, {}, strict), ElementsAre(1, 2, 3));
  strict.iou_threshold = 0.05f;
  EXPECT_THAT(*NonMaxSuppression(kBoxes, scores, {}, strict), ElementsAre(1, 3));
}

TEST(NmsTest, ClassAwareKeepsOverlapsOfDifferentClasses) {
  const std::vector<float> scores = {0.8f, 0.9f, 0.7f, 0.3f};
  const std::vector<int64_t> classes = {0, 1, 1, 0};
  EXPECT_THAT(*NonMaxSuppression(kBoxes, scores, classes, {}), ElementsAre(1, 0, 2, 3));
  NmsOptions agnostic;
  agnostic.class_aware = false;
  EXPECT_THAT(*NonMaxSuppression(kBoxes, scores, classes, agnostic), ElementsAre(1, 2, 3));
}

TEST(NmsTest, ScoreThresholdNanAndMaxDetections) {
  const std::vector<float> scores = {0.8f, std::nanf(""), 0.7f, 0.3f};
  NmsOptions options;
  options.score_threshold = 0.5f;
  EXPECT_THAT(*NonMaxSuppression(kBoxes, scores, {}, options), ElementsAre(0, 2));
  options.score_threshold = 0.0f;
  options.max_detections = 1;
  EXPECT_THAT(*NonMaxSuppression(kBoxes, scores, {}, options), ElementsAre(0));
}

TEST(NmsTest, EmptyBoxesOverlapNothingAndMismatchesAreRefused) {
  const std::vector<float> boxes = {5, 5, 5, 9, 5, 5, 5, 9};  // zero width, twice
  const std::vector<float> scores = {0.5f, 0.4f};
  EXPECT_THAT(*NonMaxSuppression(boxes, scores, {}, {}), ElementsAre(0, 1));
  EXPECT_FALSE(NonMaxSuppression(boxes, std::vector<float>{0.5f}, {}, {}).ok());
  EXPECT_FALSE(NonMaxSuppression(boxes, scores, std::vector<int64_t>{1}, {}).ok());
  NmsOptions bad;
  bad.max_detections = -1;
  EXPECT_FALSE(NonMaxSuppression(boxes, scores, {}, bad).ok());
}

}  // namespace
}  // namespace brigade::process
