// The convolution kernel's layout and in-place decisions, checked on the KernelContext its
// factory fills in (what the planner acts on): 2-D convolutions with at least 16 output channels
// write nChw16c; a residual Add becomes an in-place `sum` only when the planner offers the
// residual's buffer.

#include <memory>
#include <string_view>

#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/kernels/registry.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "gtest/gtest.h"

namespace brigade::engine::onnx {
namespace {

using tag = dnnl::memory::format_tag;

dnnl::memory::desc Desc(const Shape& shape, tag format) {
  return dnnl::memory::desc(ToDnnlDims(shape), dnnl::memory::data_type::f32, format);
}

// Prepares one Conv/FusedConv kernel on x [1, channels, 6, 6] with 3×3 weights (pads 1).
class ConvKernel {
 public:
  ConvKernel(int64_t channels, int64_t out_channels, int64_t group = 1)
      : weights_(RandomTensor({out_channels, channels / group, 3, 3}, 1)) {
    node_.name = "conv";
    node_.op_type = "Conv";
    node_.opset = 17;
    node_.attributes.SetInts("pads", {1, 1, 1, 1});
    node_.attributes.SetInt("group", group);
    x_.dtype = DataType::kFp32;
    x_.shape = {1, channels, 6, 6};
    w_.dtype = DataType::kFp32;
    w_.shape = weights_.shape();
    w_.constant = &weights_;
    residual_.dtype = DataType::kFp32;
    residual_.shape = {1, out_channels, 6, 6};
  }

  ValueInfo& x() { return x_; }
  ValueInfo& residual() { return residual_; }

  // Turns the node into FusedConv(x, w, "", residual) with post-ops Add, Relu.
  void FuseResidualAdd() {
    node_.domain = std::string(kBrigadeDomain);
    node_.op_type = "FusedConv";
    node_.opset = 1;
    node_.attributes.SetInt("post_op_input", 3);
    AppendPostOp(&node_, "Add", 0, 0);
    AppendPostOp(&node_, "Relu", 0, 0);
  }

  // Runs the factory; `reusable` is the planner's in-place offer.
  KernelContext Create(uint32_t reusable = 0) {
    KernelContext ctx;
    ctx.node = &node_;
    ctx.inputs = {&x_, &w_};
    if (node_.op_type == "FusedConv") ctx.inputs.insert(ctx.inputs.end(), {nullptr, &residual_});
    ctx.outputs.resize(1);
    ctx.output_used = {true};
    ctx.engine = &engine_;
    ctx.weights = &packed_;
    ctx.reusable_inputs = reusable;
    const KernelDef* def = KernelRegistry::Get().Find(node_.domain, node_.op_type, node_.opset);
    EXPECT_NE(def, nullptr);
    if (def == nullptr) return ctx;
    auto kernel = def->create(ctx);
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    return ctx;
  }

 private:
  Tensor weights_;
  Node node_;
  ValueInfo x_, w_, residual_;
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  PackedWeights packed_;
};

// nChw16c kernels exist for AVX-512 only; elsewhere the kernel falls back to oneDNN's own
// choice (conv.cc), so the tests that pin nChw16c apply only where oneDNN runs AVX-512.
bool HasAvx512() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  return (isa & static_cast<unsigned>(dnnl_cpu_isa_avx512_core)) ==
         static_cast<unsigned>(dnnl_cpu_isa_avx512_core);
}

#define BRIGADE_SKIP_WITHOUT_AVX512() \
  if (!HasAvx512()) GTEST_SKIP() << "oneDNN's nChw16c convolutions need AVX-512"

TEST(ConvKernelTest, A2DConvWith16OrMoreOutputChannelsWritesNChw16c) {
  BRIGADE_SKIP_WITHOUT_AVX512();
  for (int64_t out_channels : {16, 24, 64}) {
    ConvKernel conv(8, out_channels);
    const KernelContext ctx = conv.Create();
    const Shape out{1, out_channels, 6, 6};
    ASSERT_TRUE(ctx.outputs[0].layout.blocked) << out_channels;
    EXPECT_EQ(ctx.outputs[0].layout.desc, Desc(out, tag::aBcd16b)) << out_channels;
  }
}

TEST(ConvKernelTest, ADepthwiseConvWritesNChw16c) {
  BRIGADE_SKIP_WITHOUT_AVX512();
  // As in MobileNetV2: the input comes from a convolution, in nChw16c.
  ConvKernel depthwise(32, 32, 32);
  depthwise.x().layout = Layout{true, Desc({1, 32, 6, 6}, tag::aBcd16b)};
  const KernelContext dw = depthwise.Create();
  EXPECT_EQ(dw.outputs[0].layout.desc, Desc({1, 32, 6, 6}, tag::aBcd16b));
}

TEST(ConvKernelTest, FewOutputChannelsOrAnNhwcInputKeepOneDnnsChoice) {
  ConvKernel narrow(16, 8);
  EXPECT_NE(narrow.Create().outputs[0].layout.desc, Desc({1, 8, 6, 6}, tag::aBcd16b));
  // An input already in nhwc: no forced nChw16c output (oneDNN has no mixed kernel for it).
  ConvKernel nhwc_input(32, 32);
  nhwc_input.x().layout = Layout{true, Desc({1, 32, 6, 6}, tag::acdb)};
  EXPECT_NE(nhwc_input.Create().outputs[0].layout.desc, Desc({1, 32, 6, 6}, tag::aBcd16b));
}

// RegNet's grouped 3×3 (8 channels per group) reading the nChw16c output of a 1×1: oneDNN 2.6
// has only its reference kernel for that source layout, so the kernel must run on the layout
// oneDNN picks when asked (nChw8c and `jit:avx512_core` on AVX-512), reordering its input.
TEST(ConvKernelTest, AGroupedConvNarrowerThanItsInputsBlockRunsOneDnnsPreferredLayout) {
  BRIGADE_SKIP_WITHOUT_AVX512();
  const Shape shape{1, 48, 6, 6};
  ConvKernel grouped(48, 48, 6);
  grouped.x().layout = Layout{true, Desc(shape, tag::aBcd16b)};
  const KernelContext ctx = grouped.Create();

  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const dnnl::memory::desc any = Desc(shape, tag::any);
  const dnnl::convolution_forward::primitive_desc preferred(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any,
          dnnl::memory::desc({6, 8, 8, 3, 3}, dnnl::memory::data_type::f32, tag::any), any, {1, 1},
          {0, 0}, {1, 1}, {1, 1}),
      engine);
  ASSERT_FALSE(std::string_view(preferred.impl_info_str()).starts_with("ref"));
  ASSERT_TRUE(ctx.outputs[0].layout.blocked);
  EXPECT_EQ(ctx.outputs[0].layout.desc, preferred.dst_desc());
  EXPECT_GT(ctx.scratch_bytes, 0u);  // the input's reorder out of nChw16c
}

TEST(ConvKernelTest, AResidualAddTakesTheResidualsBufferOnlyWhenOffered) {
  BRIGADE_SKIP_WITHOUT_AVX512();
  const dnnl::memory::desc desc16 = Desc({1, 32, 6, 6}, tag::aBcd16b);
  ConvKernel offered(32, 32);
  offered.FuseResidualAdd();
  offered.x().layout = Layout{true, desc16};
  offered.residual().layout = Layout{true, desc16};
  EXPECT_EQ(offered.Create(/*reusable=*/1u << 3).output_reuses_input, 3);

  ConvKernel not_offered(32, 32);
  not_offered.FuseResidualAdd();
  not_offered.x().layout = Layout{true, desc16};
  not_offered.residual().layout = Layout{true, desc16};
  EXPECT_EQ(not_offered.Create(/*reusable=*/0).output_reuses_input, -1);

  // A plain residual meeting a blocked output is reordered, so it cannot be the output buffer.
  ConvKernel plain_residual(32, 32);
  plain_residual.FuseResidualAdd();
  plain_residual.x().layout = Layout{true, desc16};
  EXPECT_EQ(plain_residual.Create(/*reusable=*/1u << 3).output_reuses_input, -1);
}

}  // namespace
}  // namespace brigade::engine::onnx
