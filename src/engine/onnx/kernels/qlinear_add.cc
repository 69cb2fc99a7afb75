// QLinearAdd (ai.brigade): the residual Add of an INT8 network in one pass over its 8-bit
// operands, which the QDQ fusion pass makes of
//   DequantizeLinear(a) + DequantizeLinear(b) → [Relu] → QuantizeLinear → c.
// Inputs (a, a_scale, a_zero_point, b, b_scale, b_zero_point, c_scale, c_zero_point), all
// per-tensor constants but a and b, which have one shape and type; post_ops: at most "Relu".
//
// Each element is computed with the float operations, in the order, that the four unfused
// kernels use (dequantize as (x - zero point) · scale, add, clamp at 0, divide by c_scale, round
// half to even, saturate), so the fused node gives the same bytes. The operands may arrive in a
// blocked layout (an int8 convolution's nhwc output) when both have it and it has no padding;
// the output takes it.
// Thread safety: as OpKernel.

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

struct AddParams {
  float a_scale = 1, b_scale = 1, c_scale = 1;
  int a_zero = 0, b_zero = 0, c_zero = 0;
  bool relu = false;
};

template <typename T, bool kRelu>
__attribute__((always_inline)) inline void AddLoop(const AddParams& p, const T* __restrict a,
                                                   const T* __restrict b, T* __restrict c,
                                                   int64_t begin, int64_t end) {
  constexpr float kRound = 12582912.0f;  // 1.5 · 2^23: see QuantizeRow in quantize.cc
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest() - p.c_zero);
  const float hi = static_cast<float>(std::numeric_limits<T>::max() - p.c_zero);
  for (int64_t i = begin; i < end; ++i) {
    const float x = static_cast<float>(static_cast<int>(a[i]) - p.a_zero) * p.a_scale;
    const float y = static_cast<float>(static_cast<int>(b[i]) - p.b_zero) * p.b_scale;
    float v = x + y;
    if constexpr (kRelu) v = v > 0 ? v : 0;
    v = v / p.c_scale;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    v = (v + kRound) - kRound;
    c[i] = static_cast<T>(static_cast<int>(v) + p.c_zero);
  }
}

template <typename T>
__attribute__((always_inline)) inline void AddBody(const AddParams& p, const T* a, const T* b, T* c,
                                                   int64_t begin, int64_t end) {
  if (p.relu) {
    AddLoop<T, true>(p, a, b, c, begin, end);
  } else {
    AddLoop<T, false>(p, a, b, c, begin, end);
  }
}

template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma"))) void AddAvx512(const AddParams& p,
                                                                             const T* a, const T* b,
                                                                             T* c, int64_t begin,
                                                                             int64_t end) {
  AddBody(p, a, b, c, begin, end);
}

template <typename T>
__attribute__((target("avx2,fma"))) void AddAvx2(const AddParams& p, const T* a, const T* b, T* c,
                                                 int64_t begin, int64_t end) {
  AddBody(p, a, b, c, begin, end);
}

template <typename T>
void AddBaseline(const AddParams& p, const T* a, const T* b, T* c, int64_t begin, int64_t end) {
  AddBody(p, a, b, c, begin, end);
}

template <typename T>
using AddFn = void (*)(const AddParams&, const T*, const T*, T*, int64_t, int64_t);

template <typename T>
AddFn<T> AddForCpu() {
  switch (LoopIsaForCpu()) {
    case LoopIsa::kAvx512:
      return &AddAvx512<T>;
    case LoopIsa::kAvx2:
      return &AddAvx2<T>;
    default:
      return &AddBaseline<T>;
  }
}

class QLinearAddKernel final : public OpKernel {
 public:
  QLinearAddKernel(AddParams params, DataType type, int64_t elements)
      : p_(params), type_(type), elements_(elements) {}

  absl::Status Run(const RunContext& ctx) override {
    auto run = [&]<typename T>() {
      const AddFn<T> fn = AddForCpu<T>();
      const T* a = ctx.in<T>(0);
      const T* b = ctx.in<T>(3);
      T* c = ctx.out<T>(0);
      ParallelFor(ctx.threads, elements_, int64_t{1} << 15,
                  [&](int64_t begin, int64_t end) { fn(p_, a, b, c, begin, end); });
    };
    if (type_ == DataType::kUint8) {
      run.template operator()<uint8_t>();
    } else {
      run.template operator()<int8_t>();
    }
    return absl::OkStatus();
  }

 private:
  const AddParams p_;
  const DataType type_;
  const int64_t elements_;
};

// Both operands blocked, in one unpadded layout: they are then elementwise-aligned as they are.
bool TakesBlockedOperands(const Node& /*node*/, size_t input,
                          std::span<const ValueInfo* const> inputs) {
  if ((input != 0 && input != 3) || inputs.size() < 8 || inputs[0] == nullptr ||
      inputs[3] == nullptr) {
    return false;
  }
  const ValueInfo& a = *inputs[0];
  const ValueInfo& b = *inputs[3];
  return a.layout.blocked && b.layout.blocked && a.dtype == b.dtype && a.shape == b.shape &&
         a.layout.desc == b.layout.desc && HasNoPadding(a);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateQLinearAdd(KernelContext& ctx) {
  if (ctx.num_inputs() != 8) return ctx.Error("needs 8 inputs, has ", ctx.num_inputs());
  for (size_t i = 0; i < 8; ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is missing");
  }
  const ValueInfo& a = ctx.input(0);
  const ValueInfo& b = ctx.input(3);
  if (a.dtype != DataType::kUint8 && a.dtype != DataType::kInt8) {
    return ctx.Unsupported("input type ", DataTypeName(a.dtype));
  }
  if (b.dtype != a.dtype || b.shape != a.shape) {
    return ctx.Error("a and b must have one type and shape");
  }
  if (a.layout.blocked != b.layout.blocked ||
      (a.layout.blocked && a.layout.desc != b.layout.desc)) {
    return ctx.Error("a and b must share one layout");
  }
  for (size_t i : {2, 5, 7}) {
    if (ctx.input(i).dtype != a.dtype) return ctx.Error("zero point ", i, " must be a's type");
  }
  AddParams p;
  float* scales[] = {&p.a_scale, &p.b_scale, &p.c_scale};
  int* zeros[] = {&p.a_zero, &p.b_zero, &p.c_zero};
  constexpr size_t kScaleInput[] = {1, 4, 6};
  constexpr size_t kZeroInput[] = {2, 5, 7};
  for (size_t k = 0; k < 3; ++k) {
    const ValueInfo& scale_info = ctx.input(kScaleInput[k]);
    const ValueInfo& zero_info = ctx.input(kZeroInput[k]);
    if (scale_info.constant == nullptr || scale_info.dtype != DataType::kFp32 ||
        scale_info.num_elements() != 1 || zero_info.constant == nullptr ||
        zero_info.num_elements() != 1) {
      return ctx.Unsupported("scales and zero points must be one-element constants");
    }
    BRIGADE_ASSIGN_OR_RETURN(double scale, ConstantScalar(ctx, kScaleInput[k]));
    BRIGADE_ASSIGN_OR_RETURN(double zero, ConstantScalar(ctx, kZeroInput[k]));
    if (!(scale > 0)) return ctx.Error("scale input ", kScaleInput[k], " must be positive");
    *scales[k] = static_cast<float>(scale);
    *zeros[k] = static_cast<int>(zero);
  }
  const std::span<const std::string> post_ops = ctx.node->attributes.GetStrings("post_ops");
  if (post_ops.size() > 1 || (post_ops.size() == 1 && post_ops[0] != "Relu")) {
    return ctx.Unsupported("post-ops other than one Relu");
  }
  p.relu = post_ops.size() == 1;
  ctx.SetOutput(0, a.dtype, a.shape);
  ctx.outputs[0].layout = a.layout;
  return std::make_unique<QLinearAddKernel>(p, a.dtype, a.num_elements());
}

}  // namespace

void RegisterQLinearAddKernel(KernelRegistry* registry) {
  KernelDef def;
  def.domain = std::string(kBrigadeDomain);
  def.op_type = "QLinearAdd";
  def.create = &CreateQLinearAdd;
  def.blocked_inputs = Inputs({0, 3});
  def.takes_blocked = &TakesBlockedOperands;
  registry->Add(std::move(def));
}

}  // namespace brigade::engine::onnx
