// BatchNormalization (inference), LayerNormalization and InstanceNormalization.
//
// fp32 BatchNormalization on plain or nChw8c/nChw16c layouts runs as the engine's own scale-shift
// pass (y = a·x + b per channel, with ai.brigade.FusedBatchNorm's ReLU applied in the same pass),
// vectorised for AVX-512, AVX2 or the baseline at run time: oneDNN 2.6's inference batch
// normalization took 12× a ReLU's time over the same plain tensors (DenseNet-121's pre-activation
// BN → ReLU → Conv, 17% of its time). Other layouts run on oneDNN, fp64 as a loop;
// LayerNormalization on oneDNN; broadcast scales and LayerNormalization's optional
// Mean/InvStdDev outputs run as loops that accumulate in double.

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

using dt = dnnl::memory::data_type;

// Binds node inputs to slots and runs one primitive.
class DnnlNormKernel final : public OpKernel {
 public:
  DnnlNormKernel(DnnlCall call, std::vector<std::pair<int, size_t>> inputs, int dst, int scratch)
      : call_(std::move(call)), inputs_(std::move(inputs)), dst_(dst), scratch_(scratch) {}
  absl::Status Run(const RunContext& ctx) override {
    for (const auto& [slot, input] : inputs_) call_.SetHandle(slot, ctx.inputs[input]);
    call_.SetHandle(dst_, ctx.outputs[0]);
    if (scratch_ >= 0) call_.SetHandle(scratch_, ctx.scratch);
    return call_.Execute(*ctx.stream);
  }

 private:
  DnnlCall call_;
  const std::vector<std::pair<int, size_t>> inputs_;
  const int dst_, scratch_;
};

// ---------------------------------------------------------------------------------------------
// BatchNormalization

class BatchNormLoopKernel final : public OpKernel {
 public:
  BatchNormLoopKernel(DataType dtype, int64_t n, int64_t c, int64_t inner, double epsilon)
      : dtype_(dtype), n_(n), c_(c), inner_(inner), epsilon_(epsilon) {}
  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* x = ctx.in<T>(0);
        const T* scale = ctx.in<T>(1);
        const T* bias = ctx.in<T>(2);
        const T* mean = ctx.in<T>(3);
        const T* var = ctx.in<T>(4);
        T* y = ctx.out<T>(0);
        for (int64_t ch = 0; ch < c_; ++ch) {
          const double a = scale[ch] / std::sqrt(static_cast<double>(var[ch]) + epsilon_);
          const double b = bias[ch] - mean[ch] * a;
          for (int64_t i = 0; i < n_; ++i) {
            const int64_t base = (i * c_ + ch) * inner_;
            for (int64_t k = 0; k < inner_; ++k) {
              y[base + k] = static_cast<T>(a * x[base + k] + b);
            }
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const DataType dtype_;
  const int64_t n_, c_, inner_;
  const double epsilon_;
};

// y = a[c]·x + b[c], a = scale / √(var + ε), b = B − mean·a; then max(y, 0) when fused with a
// ReLU. `block` 1: x is [n, channels, inner]; 8 or 16: [n, padded / block, inner, block], the
// padded channels getting a = b = 0 so the padding stays 0.
struct ScaleShiftShape {
  int64_t n = 0, channels = 0, padded = 0, inner = 0;
  int block = 1;
  int64_t planes() const { return n * (padded / block); }
};

template <int B, bool kRelu>
__attribute__((always_inline)) inline void ScaleShiftPlanes(const ScaleShiftShape& g,
                                                            const float* a, const float* b,
                                                            const float* x, float* y, int64_t begin,
                                                            int64_t end) {
  const int64_t blocks = g.padded / B;
  const int64_t plane_len = g.inner * B;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t c0 = (p % blocks) * B;
    const float* src = x + p * plane_len;
    float* dst = y + p * plane_len;
    if constexpr (B == 1) {
      const float ac = a[c0], bc = b[c0];
      for (int64_t i = 0; i < g.inner; ++i) {
        const float v = ac * src[i] + bc;
        dst[i] = kRelu ? std::max(v, 0.0f) : v;
      }
    } else {
      float ac[B], bc[B];
      for (int j = 0; j < B; ++j) {
        ac[j] = a[c0 + j];
        bc[j] = b[c0 + j];
      }
      for (int64_t i = 0; i < g.inner; ++i) {
        for (int j = 0; j < B; ++j) {
          const float v = ac[j] * src[i * B + j] + bc[j];
          dst[i * B + j] = kRelu ? std::max(v, 0.0f) : v;
        }
      }
    }
  }
}

__attribute__((always_inline)) inline void ScaleShiftBody(const ScaleShiftShape& g, bool relu,
                                                          const float* a, const float* b,
                                                          const float* x, float* y, int64_t begin,
                                                          int64_t end) {
  switch (g.block * 2 + (relu ? 1 : 0)) {
    case 33:
      return ScaleShiftPlanes<16, true>(g, a, b, x, y, begin, end);
    case 32:
      return ScaleShiftPlanes<16, false>(g, a, b, x, y, begin, end);
    case 17:
      return ScaleShiftPlanes<8, true>(g, a, b, x, y, begin, end);
    case 16:
      return ScaleShiftPlanes<8, false>(g, a, b, x, y, begin, end);
    case 3:
      return ScaleShiftPlanes<1, true>(g, a, b, x, y, begin, end);
    default:
      return ScaleShiftPlanes<1, false>(g, a, b, x, y, begin, end);
  }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void ScaleShiftAvx512(
    const ScaleShiftShape& g, bool relu, const float* a, const float* b, const float* x, float* y,
    int64_t begin, int64_t end) {
  ScaleShiftBody(g, relu, a, b, x, y, begin, end);
}

__attribute__((target("avx2,fma"))) void ScaleShiftAvx2(const ScaleShiftShape& g, bool relu,
                                                        const float* a, const float* b,
                                                        const float* x, float* y, int64_t begin,
                                                        int64_t end) {
  ScaleShiftBody(g, relu, a, b, x, y, begin, end);
}

void ScaleShiftBaseline(const ScaleShiftShape& g, bool relu, const float* a, const float* b,
                        const float* x, float* y, int64_t begin, int64_t end) {
  ScaleShiftBody(g, relu, a, b, x, y, begin, end);
}

using ScaleShiftFn = void (*)(const ScaleShiftShape&, bool, const float*, const float*,
                              const float*, float*, int64_t, int64_t);

ScaleShiftFn ScaleShiftForCpu() {
  switch (LoopIsaForCpu()) {
    case LoopIsa::kAvx512:
      return &ScaleShiftAvx512;
    case LoopIsa::kAvx2:
      return &ScaleShiftAvx2;
    default:
      return &ScaleShiftBaseline;
  }
}

class ScaleShiftKernel final : public OpKernel {
 public:
  ScaleShiftKernel(ScaleShiftShape shape, float epsilon, bool relu)
      : g_(shape), epsilon_(epsilon), relu_(relu) {}

  // a and b, `padded` floats each.
  static size_t ScratchBytes(const ScaleShiftShape& g) {
    return 2 * static_cast<size_t>(g.padded) * sizeof(float);
  }

  absl::Status Run(const RunContext& ctx) override {
    // The statistics are inputs (initializers in practice): a and b cost C square roots per run.
    auto* a = reinterpret_cast<float*>(ctx.scratch);
    float* b = a + g_.padded;
    const float* scale = ctx.in<float>(1);
    const float* bias = ctx.in<float>(2);
    const float* mean = ctx.in<float>(3);
    const float* var = ctx.in<float>(4);
    for (int64_t c = 0; c < g_.padded; ++c) {
      if (c < g_.channels) {
        a[c] = scale[c] / std::sqrt(var[c] + epsilon_);
        b[c] = bias[c] - mean[c] * a[c];
      } else {
        a[c] = b[c] = 0;
      }
    }
    const float* x = ctx.in<float>(0);
    float* y = ctx.out<float>(0);
    const ScaleShiftFn fn = ScaleShiftForCpu();
    const int64_t plane_len = g_.inner * g_.block;
    ParallelFor(ctx.threads, g_.planes(), std::max<int64_t>(1, (1 << 14) / plane_len),
                [&](int64_t begin, int64_t end) { fn(g_, relu_, a, b, x, y, begin, end); });
    return absl::OkStatus();
  }

 private:
  const ScaleShiftShape g_;
  const float epsilon_;
  const bool relu_;
};

// BatchNormalization, and ai.brigade.FusedBatchNorm: the same with `relu` = 1 (ActivationFusion
// folds a following Relu).
absl::StatusOr<std::unique_ptr<OpKernel>> CreateBatchNorm(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (ctx.num_inputs() < 5) return ctx.Error("needs X, scale, B, mean and var");
  if (x.shape.size() < 2) return ctx.Error("input must have rank >= 2");
  const int64_t c = x.shape[1];
  for (size_t i = 1; i < 5; ++i) {
    if (!ctx.has_input(i) || ctx.input(i).num_elements() != c || ctx.input(i).dtype != x.dtype) {
      return ctx.Error("input ", i, " must hold ", c, " values of the input's type");
    }
  }
  if (ctx.node->attributes.GetInt("training_mode", 0) != 0) return ctx.Unsupported("training");
  const float epsilon = ctx.node->attributes.GetFloat("epsilon", 1e-5f);
  ctx.SetOutput(0, x.dtype, x.shape);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  const bool relu = ctx.node->attributes.GetInt("relu", 0) != 0;
  if (x.dtype == DataType::kFp64 || (x.dtype == DataType::kFp32 && x.shape.size() > 5)) {
    if (x.layout.blocked) return ctx.Error("blocked input reached the loop");
    if (relu) return ctx.Unsupported("a fused ReLU on ", DataTypeName(x.dtype));
    return std::make_unique<BatchNormLoopKernel>(x.dtype, x.shape[0], c,
                                                 DimProduct(x.shape, 2, x.shape.size()), epsilon);
  }
  if (x.dtype != DataType::kFp32) return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  const int block = CanonicalChannelBlock(x);
  if (!x.layout.blocked || block != 0) {
    ScaleShiftShape g;
    g.n = x.shape[0];
    g.channels = c;
    g.block = block == 0 ? 1 : block;
    g.padded = block == 0 ? c : x.layout.desc.data.padded_dims[1];
    g.inner = DimProduct(x.shape, 2, x.shape.size());
    ctx.scratch_bytes = ScaleShiftKernel::ScratchBytes(g);
    ctx.outputs[0].layout = x.layout;
    return std::make_unique<ScaleShiftKernel>(g, epsilon, relu);
  }
  BRIGADE_ASSIGN_OR_RETURN(dnnl::memory::desc data, DescOf(x));
  const dnnl::memory::desc stat = PlainDesc(Shape{c}, dt::f32);
  DnnlCall call;
  std::vector<std::pair<int, size_t>> inputs;
  int dst = -1, scratch = -1;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "batch normalization", [&] {
    auto flags = dnnl::normalization_flags::use_global_stats |
                 dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    if (relu) flags |= dnnl::normalization_flags::fuse_norm_relu;
    dnnl::batch_normalization_forward::primitive_desc pd(
        dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, data, epsilon,
                                                flags),
        UserScratchpadAttr(), *ctx.engine);
    call.set_primitive(dnnl::batch_normalization_forward(pd));
    inputs.emplace_back(call.AddArg(DNNL_ARG_SRC, data, *ctx.engine), 0);
    inputs.emplace_back(call.AddArg(DNNL_ARG_SCALE, stat, *ctx.engine), 1);
    inputs.emplace_back(call.AddArg(DNNL_ARG_SHIFT, stat, *ctx.engine), 2);
    inputs.emplace_back(call.AddArg(DNNL_ARG_MEAN, stat, *ctx.engine), 3);
    inputs.emplace_back(call.AddArg(DNNL_ARG_VARIANCE, stat, *ctx.engine), 4);
    dst = call.AddArg(DNNL_ARG_DST, pd.dst_desc(), *ctx.engine);
    scratch = AddScratchpad(pd, ctx, call);
  }));
  ctx.outputs[0].layout = x.layout;
  return std::make_unique<DnnlNormKernel>(std::move(call), std::move(inputs), dst, scratch);
}

// ---------------------------------------------------------------------------------------------
// LayerNormalization and InstanceNormalization: normalize rows of `inner` elements.

class RowNormLoopKernel final : public OpKernel {
 public:
  // Rows are [outer, inner]; the scale/bias index is (row % channels_per_row) for instance norm
  // (per channel) or the element index within the row for layer norm.
  RowNormLoopKernel(DataType dtype, int64_t rows, int64_t inner, double epsilon, bool per_channel,
                    int64_t channels, int64_t scale_count, bool has_bias)
      : dtype_(dtype),
        rows_(rows),
        inner_(inner),
        epsilon_(epsilon),
        per_channel_(per_channel),
        channels_(channels),
        scale_count_(scale_count),
        has_bias_(has_bias) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* x = ctx.in<T>(0);
        const T* scale = ctx.in<T>(1);
        const T* bias = has_bias_ ? ctx.in<T>(2) : nullptr;
        T* y = ctx.out<T>(0);
        float* mean_out = ctx.outputs.size() > 1 ? ctx.out<float>(1) : nullptr;
        float* inv_out = ctx.outputs.size() > 2 ? ctx.out<float>(2) : nullptr;
        ParallelFor(ctx.threads, rows_, 16, [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const T* row = x + r * inner_;
            double mean = 0;
            for (int64_t i = 0; i < inner_; ++i) mean += row[i];
            mean /= static_cast<double>(inner_);
            double var = 0;
            for (int64_t i = 0; i < inner_; ++i) var += (row[i] - mean) * (row[i] - mean);
            var /= static_cast<double>(inner_);
            const double inv = 1.0 / std::sqrt(var + epsilon_);
            if (mean_out != nullptr) mean_out[r] = static_cast<float>(mean);
            if (inv_out != nullptr) inv_out[r] = static_cast<float>(inv);
            const int64_t ch = per_channel_ ? r % channels_ : 0;
            for (int64_t i = 0; i < inner_; ++i) {
              const int64_t s = per_channel_ ? ch : i % scale_count_;
              const double v = (row[i] - mean) * inv * scale[s] + (bias ? bias[s] : T(0));
              y[r * inner_ + i] = static_cast<T>(v);
            }
          }
        });
      }
    });
    return absl::OkStatus();
  }

 private:
  const DataType dtype_;
  const int64_t rows_, inner_;
  const double epsilon_;
  const bool per_channel_;
  const int64_t channels_, scale_count_;
  const bool has_bias_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateLayerNorm(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DataType::kFp32 && x.dtype != DataType::kFp64) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  BRIGADE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx, ctx.node->attributes.GetInt("axis", -1), rank));
  const float epsilon = ctx.node->attributes.GetFloat("epsilon", 1e-5f);
  const auto a = static_cast<size_t>(axis);
  const int64_t rows = DimProduct(x.shape, 0, a);
  const int64_t inner = DimProduct(x.shape, a, x.shape.size());
  const ValueInfo& scale = ctx.input(1);
  const bool has_bias = ctx.has_input(2);
  if (scale.dtype != x.dtype || inner % std::max<int64_t>(scale.num_elements(), 1) != 0 ||
      (has_bias && ctx.input(2).num_elements() != scale.num_elements())) {
    return ctx.Error("scale/bias must broadcast over the normalized dims");
  }
  ctx.SetOutput(0, x.dtype, x.shape);
  Shape stat_shape = x.shape;
  for (size_t d = a; d < stat_shape.size(); ++d) stat_shape[d] = 1;
  bool want_stats = false;
  for (size_t i = 1; i < ctx.outputs.size(); ++i) {
    if (ctx.output_used[i]) {
      ctx.SetOutput(i, DataType::kFp32, stat_shape);
      want_stats = true;
    }
  }
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  if (x.dtype == DataType::kFp64 || want_stats || scale.num_elements() != inner || inner == 0 ||
      rows == 0) {
    return std::make_unique<RowNormLoopKernel>(x.dtype, rows, inner, epsilon, false, 1,
                                               std::max<int64_t>(scale.num_elements(), 1),
                                               has_bias);
  }
  const dnnl::memory::desc data = PlainDesc(Shape{rows, inner}, dt::f32);
  const dnnl::memory::desc param = PlainDesc(Shape{inner}, dt::f32);
  DnnlCall call;
  std::vector<std::pair<int, size_t>> inputs;
  int dst = -1, scratch = -1;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "layer normalization", [&] {
    auto flags = dnnl::normalization_flags::use_scale;
    if (has_bias) flags = flags | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc pd(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, data, epsilon,
                                                flags),
        UserScratchpadAttr(), *ctx.engine);
    call.set_primitive(dnnl::layer_normalization_forward(pd));
    inputs.emplace_back(call.AddArg(DNNL_ARG_SRC, data, *ctx.engine), 0);
    inputs.emplace_back(call.AddArg(DNNL_ARG_SCALE, param, *ctx.engine), 1);
    if (has_bias) inputs.emplace_back(call.AddArg(DNNL_ARG_SHIFT, param, *ctx.engine), 2);
    dst = call.AddArg(DNNL_ARG_DST, data, *ctx.engine);
    scratch = AddScratchpad(pd, ctx, call);
  }));
  return std::make_unique<DnnlNormKernel>(std::move(call), std::move(inputs), dst, scratch);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateInstanceNorm(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  if (x.dtype != DataType::kFp32 && x.dtype != DataType::kFp64) {
    return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  }
  if (x.shape.size() < 3) return ctx.Error("input must have rank >= 3");
  const int64_t c = x.shape[1];
  if (ctx.input(1).num_elements() != c || !ctx.has_input(2) || ctx.input(2).num_elements() != c) {
    return ctx.Error("scale and B must hold ", c, " values");
  }
  ctx.SetOutput(0, x.dtype, x.shape);
  return std::make_unique<RowNormLoopKernel>(
      x.dtype, x.shape[0] * c, DimProduct(x.shape, 2, x.shape.size()),
      ctx.node->attributes.GetFloat("epsilon", 1e-5f), true, c, c, true);
}

}  // namespace

void RegisterNormalizationKernels(KernelRegistry* registry) {
  KernelDef bn;
  bn.op_type = "BatchNormalization";
  bn.create = &CreateBatchNorm;
  bn.blocked_inputs = Inputs({0});
  registry->Add(bn);
  bn.domain = std::string(kBrigadeDomain);
  bn.op_type = "FusedBatchNorm";
  registry->Add(bn);
  KernelDef ln;
  ln.op_type = "LayerNormalization";
  ln.create = &CreateLayerNorm;
  ln.since_version = 17;
  registry->Add(ln);
  ln.domain = std::string(kBrigadeDomain);
  ln.since_version = 1;
  registry->Add(ln);
  KernelDef in;
  in.op_type = "InstanceNormalization";
  in.create = &CreateInstanceNorm;
  registry->Add(in);
}

}  // namespace brigade::engine::onnx
