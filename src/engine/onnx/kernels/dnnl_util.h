#ifndef BRIGADE_ENGINE_ONNX_KERNELS_DNNL_UTIL_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_DNNL_UTIL_H_

// Glue between the kernels and oneDNN: type and layout conversions, and DnnlCall, a primitive
// with pre-built argument memories whose data handles are re-pointed on every run, so executing a
// primitive allocates nothing (the C++ execute() builds an argument vector on each call; DnnlCall
// keeps one and uses the C API).
//
// oneDNN's C++ API throws dnnl::error; CatchDnnl() converts it to a Status at the call site.
// Thread safety: a DnnlCall belongs to one kernel and runs on one thread at a time.

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/data_type.h"
#include "core/shape.h"
#include "engine/onnx/kernels/kernel.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {

// oneDNN's element type for `dtype`; nullopt when oneDNN has none (int64, fp64, bool...).
std::optional<dnnl::memory::data_type> ToDnnlType(DataType dtype);

dnnl::memory::dims ToDnnlDims(const Shape& shape);

// Row-major ("abcd...") descriptor for a shape; rank 0 is treated as [1].
dnnl::memory::desc PlainDesc(const Shape& shape, dnnl::memory::data_type type);

// `desc` with its element type replaced, same dims and layout (strides and blocks count elements,
// so they carry over): the bf16 copy a ComputePrecision::kBf16 kernel reads an fp32 value as.
dnnl::memory::desc WithDataType(dnnl::memory::desc desc, dnnl::memory::data_type type);

// The descriptor of a value as laid out now: its blocked desc, or the plain one.
absl::StatusOr<dnnl::memory::desc> DescOf(const ValueInfo& info);

// The channel block (8 or 16) when `info` is 4-D fp32 in oneDNN's canonical nChw8c / nChw16c
// (channels padded up to the block, dense strides), else 0: the layouts the engine's own loops
// (Resize, BatchNormalization) walk as [N, C / block, H, W, block].
int CanonicalChannelBlock(const ValueInfo& info);

// Whether a blocked value's buffer has no padding (every padded dim equals its dim), so that it
// holds exactly num_elements() elements and elementwise loops may run over it as it is.
bool HasNoPadding(const ValueInfo& info);

class DnnlCall {
 public:
  DnnlCall() = default;
  explicit DnnlCall(dnnl::primitive primitive) : primitive_(std::move(primitive)) {}

  void set_primitive(dnnl::primitive primitive) { primitive_ = std::move(primitive); }

  // Adds argument `arg` (DNNL_ARG_SRC...) described by `desc`; returns its slot for SetHandle.
  // `handle` may be given now for buffers that never move (packed weights).
  int AddArg(int arg, const dnnl::memory::desc& desc, const dnnl::engine& engine,
             const void* handle = nullptr);
  void SetHandle(int slot, const void* handle);
  absl::Status Execute(dnnl::stream& stream);

 private:
  dnnl::primitive primitive_;
  std::vector<dnnl::memory> memories_;
  std::vector<dnnl_exec_arg_t> args_;
};

// The kernel of every op that is one oneDNN primitive from input 0 to output 0 (pooling, softmax,
// eltwise, reorder): the call's argument slot 0 is the source, slot 1 the destination, and
// `scratch_slot` (-1: none) the primitive's user scratchpad, which is the kernel's only scratch
// region and so starts at offset 0.
class DnnlUnaryKernel final : public OpKernel {
 public:
  explicit DnnlUnaryKernel(DnnlCall call, int scratch_slot = -1)
      : call_(std::move(call)), scratch_slot_(scratch_slot) {}
  absl::Status Run(const RunContext& ctx) override;

 private:
  DnnlCall call_;
  const int scratch_slot_;
};

// Runs `fn` (which may throw dnnl::error) and converts a throw into a Status mentioning `what`.
template <typename Fn>
absl::Status CatchDnnl(const KernelContext& ctx, std::string_view what, Fn&& fn) {
  try {
    fn();
    return absl::OkStatus();
  } catch (const dnnl::error& e) {
    return ctx.Unsupported(what, ": oneDNN: ", e.what());
  } catch (const std::exception& e) {
    return ctx.Error(what, ": ", e.what());
  }
}

// Attributes asking a primitive to take its scratchpad from the caller (the plan's arena), so
// executing it never allocates.
dnnl::primitive_attr UserScratchpadAttr();

// Adds the scratchpad argument of `pd` to `call`, reserving it at the end of ctx's scratch;
// returns the slot, or -1 when the primitive needs none. `*offset` receives its byte offset in
// the scratch (bind RunContext::scratch + offset).
int AddScratchpad(const dnnl::primitive_desc_base& pd, KernelContext& ctx, DnnlCall& call,
                  size_t* offset = nullptr);

// A reorder a kernel runs on every call, from one of its inputs into a region of its scratch
// (an activation in the wrong layout for the primitive, run-time weights to pack).
struct ScratchReorder {
  size_t input = 0;                // node input read
  size_t offset = 0;               // byte offset of the reordered copy in the kernel's scratch
  int target_slot = -1;            // DnnlCall slot of the main primitive that reads the copy
  std::shared_ptr<DnnlCall> call;  // the reorder primitive (slots: 0 = from, 1 = to)
};

// Builds a ScratchReorder from `from` to `to`, placing the copy at the end of ctx's scratch.
absl::StatusOr<ScratchReorder> MakeScratchReorder(KernelContext& ctx, size_t input,
                                                  const dnnl::memory::desc& from,
                                                  const dnnl::memory::desc& to);

// `source`, laid out as `from`, reordered once into `to` and shared through ctx.weights under
// (`key`, `to`): every plan and instance of the model reuses the packed copy. `source` is read
// only when no copy exists yet. A null `source` is one the model released after every reader
// packed it (CompiledModel::ReleaseSource): it is rebuilt from the fp32 copy stored under `key`
// when `to` is a layout not stored yet.
absl::StatusOr<std::shared_ptr<const Tensor>> PackConstant(KernelContext& ctx,
                                                           const std::string& key,
                                                           const dnnl::memory::desc& from,
                                                           const void* source,
                                                           const dnnl::memory::desc& to);

// The plain source `key` was packed from, rebuilt from its stored fp32 copy (uint8 bytes, the
// source's byte size): exact, since reorders between fp32 layouts do not round.
absl::StatusOr<Tensor> RebuildSource(const dnnl::engine& engine, PackedWeights& weights,
                                     const std::string& key);

// Runs `reorder` for this call and points the main primitive at the copy.
absl::Status RunScratchReorder(const ScratchReorder& reorder, const RunContext& ctx,
                               DnnlCall& main);

// The common shape of a kernel that is one oneDNN primitive: some arguments bound to node inputs
// each run, some inputs reordered into scratch first, the output, the scratchpad, and any
// constant buffers (packed weights, rescaled biases) the primitive reads.
class DnnlKernel final : public OpKernel {
 public:
  struct Binding {
    int slot;
    size_t input;
  };
  DnnlKernel(DnnlCall call, std::vector<Binding> bindings, std::vector<ScratchReorder> reorders,
             int dst_slot, int scratchpad_slot, size_t scratchpad_offset,
             std::vector<std::shared_ptr<const Tensor>> keep_alive)
      : call_(std::move(call)),
        bindings_(std::move(bindings)),
        reorders_(std::move(reorders)),
        dst_slot_(dst_slot),
        scratchpad_slot_(scratchpad_slot),
        scratchpad_offset_(scratchpad_offset),
        keep_alive_(std::move(keep_alive)) {}

  absl::Status Run(const RunContext& ctx) override;

 private:
  DnnlCall call_;
  const std::vector<Binding> bindings_;
  const std::vector<ScratchReorder> reorders_;
  const int dst_slot_, scratchpad_slot_;
  const size_t scratchpad_offset_;
  const std::vector<std::shared_ptr<const Tensor>> keep_alive_;
};

// Rounds up to the 64-byte alignment every scratch region uses.
inline size_t AlignScratch(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Copies `src` laid out as `src_desc` into `dst` laid out as `dst_desc` (a oneDNN reorder),
// at plan time (weights, constants). Blocks until done.
absl::Status ReorderNow(const dnnl::engine& engine, const dnnl::memory::desc& src_desc,
                        const void* src, const dnnl::memory::desc& dst_desc, void* dst);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_DNNL_UTIL_H_
