#include "engine/onnx/kernels/reorder.h"

#include "core/strings.h"
#include "engine/onnx/kernels/dnnl_util.h"

namespace brigade::engine::onnx {
namespace {

class ReorderKernel final : public OpKernel {
 public:
  explicit ReorderKernel(DnnlCall call) : call_(std::move(call)) {}
  absl::Status Run(const RunContext& ctx) override {
    call_.SetHandle(0, ctx.inputs[0]);
    call_.SetHandle(1, ctx.outputs[0]);
    return call_.Execute(*ctx.stream);
  }

 private:
  DnnlCall call_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<OpKernel>> MakeReorderKernel(const dnnl::engine& engine,
                                                            const dnnl::memory::desc& from,
                                                            const dnnl::memory::desc& to) {
  DnnlCall call;
  try {
    dnnl::reorder::primitive_desc pd(engine, from, engine, to);
    call.set_primitive(dnnl::reorder(pd));
    call.AddArg(DNNL_ARG_FROM, from, engine);
    call.AddArg(DNNL_ARG_TO, to, engine);
  } catch (const dnnl::error& e) {
    return absl::InternalError(StrCat("layout reorder: oneDNN: ", e.what()));
  }
  return std::make_unique<ReorderKernel>(std::move(call));
}

}  // namespace brigade::engine::onnx
