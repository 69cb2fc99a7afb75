#include "engine/onnx/kernels/reorder.h"

#include "core/strings.h"
#include "engine/onnx/kernels/dnnl_util.h"

namespace brigade::engine::onnx {

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
  return std::make_unique<DnnlUnaryKernel>(std::move(call));
}

}  // namespace brigade::engine::onnx
