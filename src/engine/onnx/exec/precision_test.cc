// ComputePrecision::kBf16 end to end through CompiledModel and Session: on a CPU with native bf16
// the convolution and the constant-weight matmul round their operands to bf16 (the outputs move
// away from fp32's by bf16's rounding, no further); elsewhere the model compiles in fp32 and says
// why. CTest runs this file twice, once capped below bf16 by DNNL_MAX_CPU_ISA, so both branches
// run on a bf16 machine.

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

// x [1, 16, 8, 8] → Conv 3×3 (32 channels) → Relu → Flatten → MatMul [2048, 10] constant.
OnnxBuilder ConvDenseModel() {
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {1, 16, 8, 8});
  b.Initializer("w", RandomTensor({32, 16, 3, 3}, 7));
  b.Initializer("dense", RandomTensor({int64_t{32} * 8 * 8, 10}, 8));
  auto& conv = b.Node("Conv", {"x", "w"}, {"c"});
  OnnxBuilder::SetInts(conv, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Flatten", {"r"}, {"f"});
  b.Node("MatMul", {"f", "dense"}, {"y"});
  b.Output("y", DataType::kFp32, {1, 10});
  return b;
}

std::shared_ptr<CompiledModel> Compile(ComputePrecision precision) {
  auto loaded = LoadOnnxBytes(ConvDenseModel().Serialize(), "");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  auto compiled = CompiledModel::Compile("test", std::move(loaded->graph),
                                         CompiledModel::Options{.precision = precision});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return *compiled;
}

Tensor RunOnce(std::shared_ptr<CompiledModel> model) {
  auto session = Session::Create(std::move(model), Session::Options{});
  EXPECT_TRUE(session.ok()) << session.status();
  const Tensor x = RandomTensor({1, 16, 8, 8}, 9);
  std::vector<Tensor> out;
  const absl::Status status = (*session)->Run({&x, 1}, &out);
  EXPECT_TRUE(status.ok()) << status;
  return std::move(out.at(0));
}

TEST(PrecisionTest, Bf16RoundsProductsWhereTheCpuHasItAndFallsBackToFp32Elsewhere) {
  const Tensor fp32 = RunOnce(Compile(ComputePrecision::kFp32));
  std::shared_ptr<CompiledModel> asked = Compile(ComputePrecision::kBf16);
  const Tensor result = RunOnce(asked);
  ASSERT_EQ(result.shape(), fp32.shape());
  float scale = 0, max_err = 0;
  for (size_t i = 0; i < fp32.values<float>().size(); ++i) {
    scale = std::max(scale, std::abs(fp32.values<float>()[i]));
    max_err = std::max(max_err, std::abs(result.values<float>()[i] - fp32.values<float>()[i]));
  }
  ASSERT_GT(scale, 1.0f);  // 2,048-term sums of unit-scale products
  if (CpuMultipliesBf16()) {
    EXPECT_EQ(asked->precision(), ComputePrecision::kBf16);
    EXPECT_TRUE(asked->precision_note().empty()) << asked->precision_note();
    // bf16 keeps 8 significant bits: each product is off by up to 2^-8 relative, and the errors
    // of a sum partly cancel. fp32's own rounding is ~1e-6 of the scale.
    EXPECT_GT(max_err, 1e-5f * scale) << "bf16 asked for, but the outputs equal fp32's";
    EXPECT_LT(max_err, 2e-2f * scale);
  } else {
    EXPECT_EQ(asked->precision(), ComputePrecision::kFp32);
    EXPECT_NE(asked->precision_note().find("fp32 used"), std::string::npos)
        << asked->precision_note();
    EXPECT_EQ(max_err, 0.0f);
  }
}

TEST(PrecisionTest, Fp32IsTheDefaultAndNeedsNoNote) {
  auto loaded = LoadOnnxBytes(ConvDenseModel().Serialize(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto compiled = CompiledModel::Compile("test", std::move(loaded->graph));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ((*compiled)->precision(), ComputePrecision::kFp32);
  EXPECT_TRUE((*compiled)->precision_note().empty());
}

}  // namespace
}  // namespace brigade::engine::onnx
