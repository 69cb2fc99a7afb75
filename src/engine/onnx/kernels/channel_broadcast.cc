#include "engine/onnx/kernels/channel_broadcast.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "engine/onnx/kernels/cpu_isa.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"

namespace brigade::engine::onnx {
namespace {

// How the plain operand indexes: one value, one per channel, or one per (batch, channel).
enum class OperandKind { kScalar, kPerChannel, kPerBatchChannel };

// The kind of `operand` against the blocked `x` ([N, C, H, W]), or nullopt. The operand is plain,
// or itself canonical blocked with H = W = 1 (a convolution's [N, C, 1, 1] output, SE's gate),
// which is [N, padded C] in memory.
std::optional<OperandKind> KindOf(const ValueInfo& x, const ValueInfo& operand) {
  if (operand.dtype != DataType::kFp32) return std::nullopt;
  if (operand.layout.blocked) {
    if (CanonicalChannelBlock(operand) == 0 || operand.shape[2] != 1 || operand.shape[3] != 1) {
      return std::nullopt;
    }
  } else if (operand.num_elements() == 1 && operand.shape.size() <= 4) {
    return OperandKind::kScalar;
  }
  if (operand.shape.size() > 4) return std::nullopt;
  Shape aligned(4 - operand.shape.size(), 1);
  aligned.insert(aligned.end(), operand.shape.begin(), operand.shape.end());
  if (aligned[1] != x.shape[1] || aligned[2] != 1 || aligned[3] != 1) return std::nullopt;
  if (aligned[0] == 1) return OperandKind::kPerChannel;
  if (aligned[0] == x.shape[0]) return OperandKind::kPerBatchChannel;
  return std::nullopt;
}

// Which input is the blocked activation (the other the operand), or -1.
int BlockedActivation(std::span<const ValueInfo* const> inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr) return -1;
  for (int i = 0; i < 2; ++i) {
    const ValueInfo& x = *inputs[static_cast<size_t>(i)];
    if (CanonicalChannelBlock(x) != 0 && KindOf(x, *inputs[static_cast<size_t>(1 - i)])) return i;
  }
  return -1;
}

struct ChannelShape {
  int64_t n = 0, channels = 0, padded = 0, inner = 0;
  int block = 16;
  OperandKind kind = OperandKind::kScalar;
  int64_t operand_batch_stride = 0;  // C, or the padded C of a blocked operand
};

template <int B, bool kMul>
__attribute__((always_inline)) inline void ChannelPlanes(const ChannelShape& g, const float* x,
                                                         const float* s, float* y, int64_t begin,
                                                         int64_t end) {
  const int64_t blocks = g.padded / B;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t batch = p / blocks;
    const int64_t c0 = (p % blocks) * B;
    float v[B];
    for (int j = 0; j < B; ++j) {
      const int64_t c = c0 + j;
      // Padded channels stay 0: their operand is 0 (x is 0 there too).
      if (c >= g.channels) {
        v[j] = 0;
      } else if (g.kind == OperandKind::kScalar) {
        v[j] = s[0];
      } else {
        v[j] =
            s[(g.kind == OperandKind::kPerBatchChannel ? batch * g.operand_batch_stride : 0) + c];
      }
    }
    const float* src = x + p * g.inner * B;
    float* dst = y + p * g.inner * B;
    for (int64_t i = 0; i < g.inner; ++i) {
      for (int j = 0; j < B; ++j) {
        dst[i * B + j] = kMul ? src[i * B + j] * v[j] : src[i * B + j] + v[j];
      }
    }
  }
}

__attribute__((always_inline)) inline void ChannelBody(const ChannelShape& g, bool mul,
                                                       const float* x, const float* s, float* y,
                                                       int64_t begin, int64_t end) {
  if (g.block == 16) {
    return mul ? ChannelPlanes<16, true>(g, x, s, y, begin, end)
               : ChannelPlanes<16, false>(g, x, s, y, begin, end);
  }
  return mul ? ChannelPlanes<8, true>(g, x, s, y, begin, end)
             : ChannelPlanes<8, false>(g, x, s, y, begin, end);
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) void ChannelAvx512(const ChannelShape& g,
                                                                        bool mul, const float* x,
                                                                        const float* s, float* y,
                                                                        int64_t begin,
                                                                        int64_t end) {
  ChannelBody(g, mul, x, s, y, begin, end);
}

__attribute__((target("avx2,fma"))) void ChannelAvx2(const ChannelShape& g, bool mul,
                                                     const float* x, const float* s, float* y,
                                                     int64_t begin, int64_t end) {
  ChannelBody(g, mul, x, s, y, begin, end);
}

void ChannelBaseline(const ChannelShape& g, bool mul, const float* x, const float* s, float* y,
                     int64_t begin, int64_t end) {
  ChannelBody(g, mul, x, s, y, begin, end);
}

using ChannelFn = void (*)(const ChannelShape&, bool, const float*, const float*, float*, int64_t,
                           int64_t);

ChannelFn ChannelForCpu() {
  switch (LoopIsaForCpu()) {
    case LoopIsa::kAvx512:
      return &ChannelAvx512;
    case LoopIsa::kAvx2:
      return &ChannelAvx2;
    default:
      return &ChannelBaseline;
  }
}

class ChannelBroadcastKernel final : public OpKernel {
 public:
  ChannelBroadcastKernel(ChannelShape shape, bool mul, size_t blocked_input)
      : g_(shape), mul_(mul), blocked_input_(blocked_input) {}

  absl::Status Run(const RunContext& ctx) override {
    const float* x = ctx.in<float>(blocked_input_);
    const float* s = ctx.in<float>(1 - blocked_input_);
    float* y = ctx.out<float>(0);
    const ChannelFn fn = ChannelForCpu();
    const int64_t planes = g_.n * (g_.padded / g_.block);
    ParallelFor(ctx.threads, planes, std::max<int64_t>(1, (1 << 14) / (g_.inner * g_.block)),
                [&](int64_t begin, int64_t end) { fn(g_, mul_, x, s, y, begin, end); });
    return absl::OkStatus();
  }

 private:
  const ChannelShape g_;
  const bool mul_;
  const size_t blocked_input_;
};

// Both inputs fp32 of one shape in one blocked layout (two dequantized int8 convolutions' nhwc
// outputs meeting at a residual Add): the op is then elementwise over the buffers as they are.
bool SameBlockedLayout(std::span<const ValueInfo* const> inputs) {
  if (inputs.size() != 2 || inputs[0] == nullptr || inputs[1] == nullptr) return false;
  const ValueInfo& a = *inputs[0];
  const ValueInfo& b = *inputs[1];
  return a.dtype == DataType::kFp32 && b.dtype == DataType::kFp32 && a.layout.blocked &&
         b.layout.blocked && a.shape == b.shape && a.layout.desc == b.layout.desc;
}

// y = a + b or a · b over every element of the buffer, padding included: oneDNN and the engine's
// blocked kernels keep padded channels 0, and 0 + 0 and 0 · 0 keep them so.
class SameLayoutKernel final : public OpKernel {
 public:
  SameLayoutKernel(int64_t elements, bool mul) : elements_(elements), mul_(mul) {}

  absl::Status Run(const RunContext& ctx) override {
    const float* a = ctx.in<float>(0);
    const float* b = ctx.in<float>(1);
    float* y = ctx.out<float>(0);
    ParallelFor(ctx.threads, elements_, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
      if (mul_) {
        for (int64_t i = begin; i < end; ++i) y[i] = a[i] * b[i];
      } else {
        for (int64_t i = begin; i < end; ++i) y[i] = a[i] + b[i];
      }
    });
    return absl::OkStatus();
  }

 private:
  const int64_t elements_;
  const bool mul_;
};

}  // namespace

bool TakesBlockedChannelOperand(const Node& /*node*/, size_t input,
                                std::span<const ValueInfo* const> inputs) {
  // The activation, and an operand that is blocked already (read as [N, padded C]).
  return input <= 1 && (BlockedActivation(inputs) >= 0 || SameBlockedLayout(inputs));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateChannelBroadcast(KernelContext& ctx,
                                                                 bool multiply) {
  if (ctx.num_inputs() != 2 || !ctx.has_input(0) || !ctx.has_input(1)) {
    return ctx.Error("needs two inputs");
  }
  const std::span<const ValueInfo* const> inputs(ctx.inputs);
  if (SameBlockedLayout(inputs)) {
    const ValueInfo& a = ctx.input(0);
    ctx.SetOutput(0, DataType::kFp32, a.shape);
    ctx.outputs[0].layout = a.layout;
    return std::make_unique<SameLayoutKernel>(
        static_cast<int64_t>(a.layout.desc.get_size() / sizeof(float)), multiply);
  }
  const int activation = BlockedActivation(inputs);
  if (activation < 0) return ctx.Error("blocked input without a per-channel operand");
  const auto blocked = static_cast<size_t>(activation);
  const ValueInfo& x = ctx.input(blocked);
  const ValueInfo& operand = ctx.input(1 - blocked);
  ChannelShape g;
  g.n = x.shape[0];
  g.channels = x.shape[1];
  g.padded = x.layout.desc.data.padded_dims[1];
  g.inner = x.shape[2] * x.shape[3];
  g.block = CanonicalChannelBlock(x);
  g.kind = *KindOf(x, operand);
  g.operand_batch_stride =
      operand.layout.blocked ? operand.layout.desc.data.padded_dims[1] : g.channels;
  ctx.SetOutput(0, DataType::kFp32, x.shape);
  ctx.outputs[0].layout = x.layout;
  return std::make_unique<ChannelBroadcastKernel>(g, multiply, blocked);
}

}  // namespace brigade::engine::onnx
