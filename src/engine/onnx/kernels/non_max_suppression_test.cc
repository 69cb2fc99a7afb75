// NonMaxSuppression beyond the ONNX node tests: both box formats with the thresholds as graph
// inputs (known only at run time), several batches and classes, equal scores, a run that keeps
// no box, and ops after it that read its data-dependent output (Gather of the kept boxes, Shape),
// planned per row count and reused when a count comes back; bad inputs fail naming the node.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/test_util/graph_runner.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Tensor Floats(const Shape& shape, const std::vector<float>& values) {
  return *Tensor::FromValues<float>(shape, values);
}
Tensor Int64s(const Shape& shape, const std::vector<int64_t>& values) {
  return *Tensor::FromValues<int64_t>(shape, values);
}
std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.values<int64_t>().begin(), t.values<int64_t>().end());
}

// NonMaxSuppression over boxes [B, S, 4] and scores [B, C, S], the three thresholds as inputs.
OnnxBuilder NmsModel(int64_t batches, int64_t classes, int64_t spatial, int64_t center) {
  OnnxBuilder b(11);
  b.Input("boxes", DataType::kFp32, {batches, spatial, 4});
  b.Input("scores", DataType::kFp32, {batches, classes, spatial});
  b.Input("max", DataType::kInt64, {1});
  b.Input("iou", DataType::kFp32, {1});
  b.Input("score", DataType::kFp32, {1});
  auto& node = b.Node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, {"sel"});
  OnnxBuilder::SetInt(node, "center_point_box", center);
  b.Output("sel", DataType::kInt64, {-1, 3});
  return b;
}

std::vector<int64_t> RunNms(const OnnxBuilder& b, const Tensor& boxes, const Tensor& scores,
                            int64_t max_boxes, float iou, float score) {
  const std::vector<Tensor> inputs{boxes, scores, Int64s({1}, {max_boxes}), Floats({1}, {iou}),
                                   Floats({1}, {score})};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
  if (out.size() != 1) return {-1};
  EXPECT_EQ(out[0].shape().size(), 2u);
  EXPECT_EQ(out[0].shape().back(), 3);
  return Ints(out[0]);
}

// Six boxes: 0, 1, 2 overlap heavily (IoU 0.82 – 0.68), 3, 4 and 5 are apart from them.
const std::vector<float> kCorners{0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                                  0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101};
const std::vector<float> kScores{0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f};

TEST(NonMaxSuppressionKernelTest, CornersInEitherOrderWithThresholds) {
  const OnnxBuilder b = NmsModel(1, 1, 6, 0);
  const Tensor scores = Floats({1, 1, 6}, kScores);
  // Descending score: 3 (keeps), 0 (keeps), 1 and 2 (IoU with 0 > 0.5), 4 (with 3), 5 (keeps).
  EXPECT_EQ(RunNms(b, Floats({1, 6, 4}, kCorners), scores, 10, 0.5f, 0.0f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // Every box with its corners swapped ([y2, x2, y1, x1]) selects the same.
  std::vector<float> flipped = kCorners;
  for (size_t i = 0; i < flipped.size(); i += 4) {
    std::swap(flipped[i], flipped[i + 2]);
    std::swap(flipped[i + 1], flipped[i + 3]);
  }
  EXPECT_EQ(RunNms(b, Floats({1, 6, 4}, flipped), scores, 10, 0.5f, 0.0f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  // At most two per class.
  EXPECT_EQ(RunNms(b, Floats({1, 6, 4}, kCorners), scores, 2, 0.5f, 0.0f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // Scores must be above the threshold, strictly: 0.6 is not above 0.6.
  EXPECT_EQ(RunNms(b, Floats({1, 6, 4}, kCorners), scores, 10, 0.5f, 0.6f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  // IoU 0.9 suppresses none of the overlapping ones (their IoU with box 0 is at most 0.82)...
  EXPECT_EQ(RunNms(b, Floats({1, 6, 4}, kCorners), scores, 10, 0.9f, 0.0f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5}));
}

TEST(NonMaxSuppressionKernelTest, CenterFormat) {
  // The same boxes as [x_center, y_center, width, height].
  std::vector<float> center;
  for (size_t i = 0; i < kCorners.size(); i += 4) {
    const float y1 = kCorners[i], x1 = kCorners[i + 1], y2 = kCorners[i + 2], x2 = kCorners[i + 3];
    center.insert(center.end(), {(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1});
  }
  EXPECT_EQ(RunNms(NmsModel(1, 1, 6, 1), Floats({1, 6, 4}, center), Floats({1, 1, 6}, kScores), 3,
                   0.5f, 0.0f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NonMaxSuppressionKernelTest, BatchesClassesAndEqualScores) {
  // Batch 1's boxes are batch 0's shifted apart, so nothing overlaps there.
  std::vector<float> boxes = kCorners;
  for (size_t i = 0; i < kCorners.size(); i += 4) {
    const float shift = 1000.0f * static_cast<float>(i);
    boxes.insert(boxes.end(),
                 {kCorners[i] + shift, kCorners[i + 1], kCorners[i + 2] + shift, kCorners[i + 3]});
  }
  // Class 0: as above. Class 1: all equal, so the lower index goes first.
  std::vector<float> scores = kScores;
  scores.insert(scores.end(), 6, 0.5f);
  scores.insert(scores.end(), kScores.begin(), kScores.end());
  scores.insert(scores.end(), 6, 0.5f);
  EXPECT_EQ(RunNms(NmsModel(2, 2, 6, 0), Floats({2, 6, 4}, boxes), Floats({2, 2, 6}, scores), 3,
                   0.5f, 0.0f),
            (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5,  // batch 0, class 0
                                  0, 1, 0, 0, 1, 3, 0, 1, 5,  // 1 and 2 overlap 0, 4 overlaps 3
                                  1, 0, 3, 1, 0, 0, 1, 0, 1,  // batch 1: by score alone
                                  1, 1, 0, 1, 1, 1, 1, 1, 2}));
}

TEST(NonMaxSuppressionKernelTest, DefaultsKeepNothing) {
  // No max_output_boxes_per_class: 0 boxes per class, an output of 0 rows.
  OnnxBuilder b(11);
  b.Input("boxes", DataType::kFp32, {1, 6, 4});
  b.Input("scores", DataType::kFp32, {1, 1, 6});
  b.Node("NonMaxSuppression", {"boxes", "scores"}, {"sel"});
  b.Output("sel", DataType::kInt64, {-1, 3});
  const std::vector<Tensor> inputs{Floats({1, 6, 4}, kCorners), Floats({1, 1, 6}, kScores)};
  const std::vector<Tensor> out = RunGraph(LoadGraph(b), inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{0, 3}));
}

// scaled = boxes * 2 (computed before the NMS, read after it); sel = NMS(...);
// kept = Gather(Reshape(scaled, [-1, 4]), sel[:, 2]); rows = Shape(sel).
OnnxBuilder DownstreamModel() {
  OnnxBuilder b(11);
  b.Input("boxes", DataType::kFp32, {1, 6, 4});
  b.Input("scores", DataType::kFp32, {1, 1, 6});
  b.Input("max", DataType::kInt64, {1});
  b.Input("iou", DataType::kFp32, {1});
  b.Input("score", DataType::kFp32, {1});
  b.Initializer("two", Floats({}, {2.0f}));
  b.Initializer("flat", Int64s({2}, {-1, 4}));
  b.Initializer("column", Int64s({}, {2}));
  b.Node("Mul", {"boxes", "two"}, {"scaled"});
  b.Node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, {"sel"});
  b.Node("Reshape", {"scaled", "flat"}, {"scaled2d"});
  OnnxBuilder::SetInt(b.Node("Gather", {"sel", "column"}, {"index"}), "axis", 1);
  b.Node("Gather", {"scaled2d", "index"}, {"kept"});
  b.Node("Shape", {"sel"}, {"shape"});
  b.Output("sel", DataType::kInt64, {-1, 3});
  b.Output("kept", DataType::kFp32, {-1, 4});
  b.Output("shape", DataType::kInt64, {2});
  return b;
}

TEST(NonMaxSuppressionKernelTest, LaterOpsSeeTheRowCountOfEachRun) {
  auto compiled = CompiledModel::Compile("nms", LoadGraph(DownstreamModel()));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto session = Session::Create(*compiled, Session::Options{});
  ASSERT_TRUE(session.ok()) << session.status();
  const auto run = [&](float score_threshold, std::vector<Tensor>* out) {
    const std::vector<Tensor> inputs{Floats({1, 6, 4}, kCorners), Floats({1, 1, 6}, kScores),
                                     Int64s({1}, {10}), Floats({1}, {0.5f}),
                                     Floats({1}, {score_threshold})};
    return (*session)->Run(inputs, out);
  };
  std::vector<Tensor> out;
  ASSERT_TRUE(run(0.0f, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 4}));
  const std::vector<float> kept(out[1].values<float>().begin(), out[1].values<float>().end());
  EXPECT_EQ(kept, (std::vector<float>{0, 20, 2, 22, 0, 0, 2, 2, 0, 200, 2, 202}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{3, 3}));
  // Another count (two boxes above 0.6), then none, then the first again: one plan, whose
  // continuations are per count and reused.
  ASSERT_TRUE(run(0.6f, &out).ok());
  EXPECT_EQ(Ints(out[0]), (std::vector<int64_t>{0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 4}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(run(0.99f, &out).ok());
  EXPECT_EQ(out[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(out[1].shape(), (Shape{0, 4}));
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{0, 3}));
  ASSERT_TRUE(run(0.0f, &out).ok());
  EXPECT_EQ(Ints(out[2]), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ((*session)->plan_count(), 1u);
  ASSERT_NE((*session)->last_plan(), nullptr);
  EXPECT_EQ((*session)->last_plan()->continuation_count(), 3u);
}

TEST(NonMaxSuppressionKernelTest, BadInputsFailNamingNodeAndInput) {
  const OnnxBuilder b = NmsModel(1, 1, 6, 0);
  auto compiled = CompiledModel::Compile("nms", LoadGraph(b));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto session = Session::Create(*compiled, Session::Options{});
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  const std::vector<Tensor> negative{Floats({1, 6, 4}, kCorners), Floats({1, 1, 6}, kScores),
                                     Int64s({1}, {-1}), Floats({1}, {0.5f}), Floats({1}, {0.0f})};
  absl::Status status = (*session)->Run(negative, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("NonMaxSuppression"), std::string::npos) << status;
  EXPECT_NE(status.message().find("max_output_boxes_per_class"), std::string::npos) << status;
  const std::vector<Tensor> iou{Floats({1, 6, 4}, kCorners), Floats({1, 1, 6}, kScores),
                                Int64s({1}, {1}), Floats({1}, {1.5f}), Floats({1}, {0.0f})};
  status = (*session)->Run(iou, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("iou_threshold"), std::string::npos) << status;

  // Scores for 5 boxes against 6 boxes: refused when planned.
  OnnxBuilder mismatched(11);
  mismatched.Input("boxes", DataType::kFp32, {1, 6, 4});
  mismatched.Input("scores", DataType::kFp32, {1, 1, 5});
  mismatched.Node("NonMaxSuppression", {"boxes", "scores"}, {"sel"});
  mismatched.Output("sel", DataType::kInt64, {-1, 3});
  auto loaded = CompiledModel::Compile("nms", LoadGraph(mismatched));
  if (!loaded.ok()) {
    // ONNX shape inference may already refuse the model; the message must say why.
    EXPECT_NE(loaded.status().message().find("scores"), std::string::npos) << loaded.status();
    return;
  }
  auto bad = Session::Create(*loaded, Session::Options{});
  ASSERT_TRUE(bad.ok()) << bad.status();
  const std::vector<Tensor> inputs{Floats({1, 6, 4}, kCorners),
                                   Floats({1, 1, 5}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f})};
  status = (*bad)->Run(inputs, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'scores'"), std::string::npos) << status;
  EXPECT_NE(status.message().find("NonMaxSuppression"), std::string::npos) << status;
}

TEST(NonMaxSuppressionKernelTest, RefusedInsideASubgraph) {
  // A subgraph's outputs must keep one shape per plan (If needs both branches alike), so a
  // data-dependent shape there is refused, naming the node, rather than planned wrongly.
  OnnxBuilder then_branch(11);
  then_branch.Node("NonMaxSuppression", {"boxes", "scores"}, {"then_sel"});
  then_branch.Output("then_sel", DataType::kInt64, {-1, 3});
  OnnxBuilder else_branch(11);
  else_branch.Initializer("none", Int64s({0, 3}, {}));
  else_branch.Node("Identity", {"none"}, {"else_sel"});
  else_branch.Output("else_sel", DataType::kInt64, {-1, 3});
  OnnxBuilder b(11);
  b.Input("boxes", DataType::kFp32, {1, 6, 4});
  b.Input("scores", DataType::kFp32, {1, 1, 6});
  b.Input("c", DataType::kBool, {});
  auto& node = b.Node("If", {"c"}, {"sel"});
  node.set_name("branch");
  OnnxBuilder::SetGraph(node, "then_branch", then_branch);
  OnnxBuilder::SetGraph(node, "else_branch", else_branch);
  b.Output("sel", DataType::kInt64, {-1, 3});
  auto compiled = CompiledModel::Compile("nms", LoadGraph(b));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto session = Session::Create(*compiled, Session::Options{});
  ASSERT_TRUE(session.ok()) << session.status();
  const bool go = true;
  const std::vector<Tensor> inputs{
      Floats({1, 6, 4}, kCorners), Floats({1, 1, 6}, kScores),
      *Tensor::FromValues<bool>(Shape{}, std::span<const bool>(&go, 1))};
  std::vector<Tensor> out;
  const absl::Status status = (*session)->Run(inputs, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
  EXPECT_NE(status.message().find("NonMaxSuppression"), std::string::npos) << status;
  EXPECT_NE(status.message().find("subgraph"), std::string::npos) << status;
}

}  // namespace
}  // namespace brigade::engine::onnx
