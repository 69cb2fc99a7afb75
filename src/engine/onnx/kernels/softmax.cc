// Softmax and LogSoftmax. Opset 13 normalizes along one axis; earlier opsets flatten the input
// to 2-D at `axis` and normalize each row. Either way the input is viewed as
// [outer, dim, inner] and normalized along `dim`: fp32 through oneDNN's softmax (vectorized exp),
// fp64 in a loop.

#include <cmath>
#include <limits>
#include <memory>

#include "core/status_macros.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

class SoftmaxLoopKernel final : public OpKernel {
 public:
  SoftmaxLoopKernel(bool log, int64_t outer, int64_t dim, int64_t inner)
      : log_(log), outer_(outer), dim_(dim), inner_(inner) {}
  absl::Status Run(const RunContext& ctx) override {
    const double* in = ctx.in<double>(0);
    double* out = ctx.out<double>(0);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const double* x = in + o * dim_ * inner_ + i;
        double* y = out + o * dim_ * inner_ + i;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < dim_; ++k) m = std::max(m, x[k * inner_]);
        double sum = 0;
        for (int64_t k = 0; k < dim_; ++k) sum += std::exp(x[k * inner_] - m);
        for (int64_t k = 0; k < dim_; ++k) {
          y[k * inner_] =
              log_ ? x[k * inner_] - m - std::log(sum) : std::exp(x[k * inner_] - m) / sum;
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  const bool log_;
  const int64_t outer_, dim_, inner_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> CreateSoftmax(KernelContext& ctx) {
  const ValueInfo& x = ctx.input(0);
  const bool log = ctx.node->op_type == "LogSoftmax";
  const auto rank = static_cast<int64_t>(x.shape.size());
  const bool legacy = ctx.node->opset < 13;
  BRIGADE_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxisOrScalar(ctx, ctx.node->attributes.GetInt("axis", legacy ? 1 : -1), rank));
  const auto a = static_cast<size_t>(axis);
  int64_t outer = DimProduct(x.shape, 0, a);
  int64_t dim = x.shape.empty() ? 1 : x.shape[a];
  int64_t inner = DimProduct(x.shape, a + 1, x.shape.size());
  if (legacy) {
    dim *= inner;
    inner = 1;
  }
  ctx.SetOutput(0, x.dtype, x.shape);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  if (x.dtype == DataType::kFp64) {
    return std::make_unique<SoftmaxLoopKernel>(log, outer, dim, inner);
  }
  if (x.dtype != DataType::kFp32) return ctx.Unsupported("element type ", DataTypeName(x.dtype));
  if (outer * dim * inner == 0) {
    return std::make_unique<SoftmaxLoopKernel>(log, 0, 0, 0);
  }
  const dnnl::memory::desc desc = PlainDesc(Shape{outer, dim, inner}, dnnl::memory::data_type::f32);
  DnnlCall call;
  int scratch = -1;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "softmax", [&] {
    dnnl::softmax_v2_forward::primitive_desc pd(
        dnnl::softmax_v2_forward::desc(
            dnnl::prop_kind::forward_inference,
            log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate, desc, desc, 1),
        UserScratchpadAttr(), *ctx.engine);
    call.set_primitive(dnnl::softmax_v2_forward(pd));
    call.AddArg(DNNL_ARG_SRC, desc, *ctx.engine);
    call.AddArg(DNNL_ARG_DST, desc, *ctx.engine);
    scratch = AddScratchpad(pd, ctx, call);
  }));
  return std::make_unique<DnnlUnaryKernel>(std::move(call), scratch);
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry* registry) {
  for (const char* name : {"Softmax", "LogSoftmax"}) {
    KernelDef def;
    def.op_type = name;
    def.create = &CreateSoftmax;
    registry->Add(std::move(def));
  }
}

}  // namespace brigade::engine::onnx
