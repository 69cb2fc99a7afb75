#include "engine/onnx/exec/batch_split.h"

#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

Graph Load(const OnnxBuilder& b, bool optimize) {
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (optimize) {
    EXPECT_TRUE(OptimizeGraph(&loaded->graph).ok());
  }
  return std::move(loaded->graph);
}

// x [N,3,8,8] → Conv+Relu → (+ residual conv) → GlobalAveragePool → Flatten → Gemm → Softmax.
OnnxBuilder ConvNet() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3, 8, 8});
  b.Initializer("w1", RandomTensor({4, 3, 3, 3}, 1));
  b.Initializer("w2", RandomTensor({4, 4, 3, 3}, 2));
  b.Initializer("fc", RandomTensor({4, 5}, 3));
  b.Initializer("fc_b", RandomTensor({5}, 4));
  OnnxBuilder::SetInts(b.Node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"});
  OnnxBuilder::SetInts(b.Node("Conv", {"r1", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  b.Node("Add", {"c2", "r1"}, {"sum"});
  b.Node("GlobalAveragePool", {"sum"}, {"pooled"});
  b.Node("Flatten", {"pooled"}, {"flat"});
  b.Node("Gemm", {"flat", "fc", "fc_b"}, {"logits"});
  b.Node("Softmax", {"logits"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, 5});
  return b;
}

TEST(BatchSplitTest, AConvNetKeepsRowsApartBeforeAndAfterOptimization) {
  EXPECT_TRUE(RowsAreIndependent(Load(ConvNet(), false)));
  EXPECT_TRUE(RowsAreIndependent(Load(ConvNet(), true)));
}

TEST(BatchSplitTest, AReshapeMayMixRows) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 4});
  b.Initializer("shape", *Tensor::FromValues<int64_t>(Shape{2}, std::vector<int64_t>{2, -1}));
  b.Node("Reshape", {"x", "shape"}, {"r"});
  b.Node("Relu", {"r"}, {"y"});
  b.Output("y", DataType::kFp32, {2, -1});
  EXPECT_FALSE(RowsAreIndependent(Load(b, false)));
}

TEST(BatchSplitTest, AMatMulBetweenTwoBatchedTensorsMixesRows) {
  // y = x · xᵀ: row i reads every row of x.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3});
  OnnxBuilder::SetInts(b.Node("Transpose", {"x"}, {"xt"}), "perm", {1, 0});
  b.Node("MatMul", {"x", "xt"}, {"y"});
  b.Output("y", DataType::kFp32, {-1, -1});
  EXPECT_FALSE(RowsAreIndependent(Load(b, false)));
  EXPECT_FALSE(RowsAreIndependent(Load(b, true)));
}

TEST(BatchSplitTest, ASoftmaxOverTheBatchAxisMixesRows) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3});
  OnnxBuilder::SetInt(b.Node("Softmax", {"x"}, {"y"}), "axis", 0);
  b.Output("y", DataType::kFp32, {-1, 3});
  EXPECT_FALSE(RowsAreIndependent(Load(b, false)));
}

TEST(BatchSplitTest, AnOperandSpanningTheRowsIsNotABroadcast) {
  // x [N,3] + c [4,3]: only valid at N = 4 (or 1), and row i then reads c's row i.
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {-1, 3});
  b.Initializer("c", RandomTensor({4, 3}, 5));
  b.Node("Add", {"x", "c"}, {"y"});
  b.Output("y", DataType::kFp32, {4, 3});
  EXPECT_FALSE(RowsAreIndependent(Load(b, false)));
  OnnxBuilder row;
  row.Input("x", DataType::kFp32, {-1, 3});
  row.Initializer("c", RandomTensor({1, 3}, 5));
  row.Node("Add", {"x", "c"}, {"y"});
  row.Output("y", DataType::kFp32, {-1, 3});
  EXPECT_TRUE(RowsAreIndependent(Load(row, false)));
}

TEST(BatchSplitTest, AFixedFirstDimensionIsNotABatch) {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {2, 3});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y", DataType::kFp32, {2, 3});
  EXPECT_FALSE(RowsAreIndependent(Load(b, false)));
}

TEST(BatchSplitTest, ChunksAreEqualDivisorsThatFitTheBudget) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_EQ(ChunkRows(8, 6 * kMiB, 16 * kMiB), 2);   // 4 chunks of 2 (12 MiB each)
  EXPECT_EQ(ChunkRows(8, 1 * kMiB, 16 * kMiB), 8);   // the whole batch fits
  EXPECT_EQ(ChunkRows(6, 5 * kMiB, 16 * kMiB), 3);   // 3 rows fit, 3 divides 6
  EXPECT_EQ(ChunkRows(7, 6 * kMiB, 16 * kMiB), 1);   // only 1 divides 7 below 7
  EXPECT_EQ(ChunkRows(8, 20 * kMiB, 16 * kMiB), 1);  // not even one row fits: one at a time
  EXPECT_EQ(ChunkRows(8, 6 * kMiB, 0), 8);           // budget 0: never split
  EXPECT_EQ(ChunkRows(1, 6 * kMiB, 1), 1);
}

}  // namespace
}  // namespace brigade::engine::onnx
