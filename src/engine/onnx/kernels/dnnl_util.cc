#include "engine/onnx/kernels/dnnl_util.h"

#include <algorithm>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/kernels/packed_weights.h"

namespace brigade::engine::onnx {

std::optional<dnnl::memory::data_type> ToDnnlType(DataType dtype) {
  using dt = dnnl::memory::data_type;
  switch (dtype) {
    case DataType::kFp32:
      return dt::f32;
    case DataType::kInt32:
      return dt::s32;
    case DataType::kInt8:
      return dt::s8;
    case DataType::kUint8:
      return dt::u8;
    case DataType::kFp16:
      return dt::f16;
    case DataType::kBf16:
      return dt::bf16;
    default:
      return std::nullopt;
  }
}

dnnl::memory::dims ToDnnlDims(const Shape& shape) {
  if (shape.empty()) return {1};
  return dnnl::memory::dims(shape.begin(), shape.end());
}

dnnl::memory::desc PlainDesc(const Shape& shape, dnnl::memory::data_type type) {
  const dnnl::memory::dims dims = ToDnnlDims(shape);
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return dnnl::memory::desc(dims, type, strides);
}

dnnl::memory::desc WithDataType(dnnl::memory::desc desc, dnnl::memory::data_type type) {
  // oneDNN 2.6's C++ API has no setter; the C descriptor is public and its layout fields are
  // counted in elements, not bytes.
  desc.data.data_type = dnnl::memory::convert_to_c(type);
  return desc;
}

absl::StatusOr<dnnl::memory::desc> DescOf(const ValueInfo& info) {
  if (info.layout.blocked) return info.layout.desc;
  const auto type = ToDnnlType(info.dtype);
  if (!type.has_value()) {
    return absl::InvalidArgumentError(
        StrCat("oneDNN has no element type for ", DataTypeName(info.dtype)));
  }
  return PlainDesc(info.shape, *type);
}

bool HasNoPadding(const ValueInfo& info) {
  const dnnl_memory_desc_t& d = info.layout.desc.data;
  for (int i = 0; i < d.ndims; ++i) {
    if (d.padded_dims[i] != d.dims[i]) return false;
  }
  return true;
}

int CanonicalChannelBlock(const ValueInfo& info) {
  if (!info.layout.blocked || info.shape.size() != 4 || info.dtype != DataType::kFp32) return 0;
  for (auto [block, format] : {std::pair{16, dnnl::memory::format_tag::aBcd16b},
                               std::pair{8, dnnl::memory::format_tag::aBcd8b}}) {
    if (info.layout.desc ==
        dnnl::memory::desc(ToDnnlDims(info.shape), dnnl::memory::data_type::f32, format)) {
      return block;
    }
  }
  return 0;
}

int DnnlCall::AddArg(int arg, const dnnl::memory::desc& desc, const dnnl::engine& engine,
                     const void* handle) {
  memories_.emplace_back(desc, engine,
                         const_cast<void*>(handle != nullptr ? handle : DNNL_MEMORY_NONE));
  args_.push_back(dnnl_exec_arg_t{arg, memories_.back().get()});
  // emplace_back may have moved the handles: refresh every pointer.
  for (size_t i = 0; i < args_.size(); ++i) args_[i].memory = memories_[i].get();
  return static_cast<int>(memories_.size() - 1);
}

void DnnlCall::SetHandle(int slot, const void* handle) {
  dnnl_memory_set_data_handle_v2(memories_[static_cast<size_t>(slot)].get(),
                                 const_cast<void*>(handle), nullptr);
}

absl::Status DnnlCall::Execute(dnnl::stream& stream) {
  const dnnl_status_t status = dnnl_primitive_execute(primitive_.get(), stream.get(),
                                                      static_cast<int>(args_.size()), args_.data());
  if (status != dnnl_success) {
    return absl::InternalError(
        StrCat("oneDNN primitive failed with status ", static_cast<int>(status)));
  }
  return absl::OkStatus();
}

absl::Status DnnlUnaryKernel::Run(const RunContext& ctx) {
  call_.SetHandle(0, ctx.inputs[0]);
  call_.SetHandle(1, ctx.outputs[0]);
  if (scratch_slot_ >= 0) call_.SetHandle(scratch_slot_, ctx.scratch);
  return call_.Execute(*ctx.stream);
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

int AddScratchpad(const dnnl::primitive_desc_base& pd, KernelContext& ctx, DnnlCall& call,
                  size_t* offset) {
  const dnnl::memory::desc desc = pd.scratchpad_desc();
  if (offset != nullptr) *offset = AlignScratch(ctx.scratch_bytes);
  if (desc.get_size() == 0) return -1;
  const size_t start = AlignScratch(ctx.scratch_bytes);
  ctx.scratch_bytes = start + desc.get_size();
  return call.AddArg(DNNL_ARG_SCRATCHPAD, desc, *ctx.engine);
}

absl::StatusOr<ScratchReorder> MakeScratchReorder(KernelContext& ctx, size_t input,
                                                  const dnnl::memory::desc& from,
                                                  const dnnl::memory::desc& to) {
  ScratchReorder reorder;
  reorder.input = input;
  reorder.offset = AlignScratch(ctx.scratch_bytes);
  ctx.scratch_bytes = reorder.offset + to.get_size();
  reorder.call = std::make_shared<DnnlCall>();
  absl::Status status = CatchDnnl(ctx, "reorder", [&] {
    dnnl::reorder::primitive_desc pd(*ctx.engine, from, *ctx.engine, to);
    reorder.call->set_primitive(dnnl::reorder(pd));
    reorder.call->AddArg(DNNL_ARG_FROM, from, *ctx.engine);
    reorder.call->AddArg(DNNL_ARG_TO, to, *ctx.engine);
  });
  if (!status.ok()) return status;
  return reorder;
}

absl::StatusOr<Tensor> RebuildSource(const dnnl::engine& engine, PackedWeights& weights,
                                     const std::string& key) {
  BRIGADE_ASSIGN_OR_RETURN(PackedWeights::Copy copy, weights.Fp32Copy(key));
  BRIGADE_ASSIGN_OR_RETURN(
      Tensor t,
      Tensor::Allocate(DataType::kUint8, Shape{static_cast<int64_t>(copy.plain.get_size())}));
  BRIGADE_RETURN_IF_ERROR(
      ReorderNow(engine, copy.desc, copy.tensor->data(), copy.plain, t.mutable_data()));
  weights.CountRebuild();
  return t;
}

absl::StatusOr<std::shared_ptr<const Tensor>> PackConstant(KernelContext& ctx,
                                                           const std::string& key,
                                                           const dnnl::memory::desc& from,
                                                           const void* source,
                                                           const dnnl::memory::desc& to) {
  const dnnl::engine& engine = *ctx.engine;
  PackedWeights& weights = *ctx.weights;
  if (source == nullptr) ++ctx.released_sources_packed;
  auto packed = weights.GetOrPack(key, to, [&]() -> absl::StatusOr<Tensor> {
    // A released source (null) is rebuilt from the copy packed before it was freed; `from`
    // describes the same bytes, perhaps through other dims or strides.
    Tensor rebuilt;
    const void* bytes = source;
    if (source == nullptr) {
      BRIGADE_ASSIGN_OR_RETURN(rebuilt, RebuildSource(engine, weights, key));
      if (rebuilt.byte_size() < from.get_size()) {
        return absl::InternalError(StrCat("packed weights '", key, "': the rebuilt source has ",
                                          rebuilt.byte_size(), " bytes, the layout needs ",
                                          from.get_size()));
      }
      bytes = rebuilt.data();
    }
    BRIGADE_ASSIGN_OR_RETURN(
        Tensor t, Tensor::Allocate(DataType::kUint8, Shape{static_cast<int64_t>(to.get_size())}));
    BRIGADE_RETURN_IF_ERROR(ReorderNow(engine, from, bytes, to, t.mutable_data()));
    return t;
  });
  if (packed.ok() && source != nullptr) weights.NoteSource(key, source, from.get_size(), from);
  return packed;
}

absl::Status RunScratchReorder(const ScratchReorder& reorder, const RunContext& ctx,
                               DnnlCall& main) {
  std::byte* copy = ctx.scratch + reorder.offset;
  reorder.call->SetHandle(0, ctx.inputs[reorder.input]);
  reorder.call->SetHandle(1, copy);
  if (absl::Status s = reorder.call->Execute(*ctx.stream); !s.ok()) return s;
  main.SetHandle(reorder.target_slot, copy);
  return absl::OkStatus();
}

absl::Status DnnlKernel::Run(const RunContext& ctx) {
  for (const ScratchReorder& r : reorders_) {
    if (absl::Status s = RunScratchReorder(r, ctx, call_); !s.ok()) return s;
  }
  for (const Binding& b : bindings_) call_.SetHandle(b.slot, ctx.inputs[b.input]);
  call_.SetHandle(dst_slot_, ctx.outputs[0]);
  if (scratchpad_slot_ >= 0) call_.SetHandle(scratchpad_slot_, ctx.scratch + scratchpad_offset_);
  return call_.Execute(*ctx.stream);
}

absl::Status ReorderNow(const dnnl::engine& engine, const dnnl::memory::desc& src_desc,
                        const void* src, const dnnl::memory::desc& dst_desc, void* dst) {
  try {
    dnnl::memory src_mem(src_desc, engine, const_cast<void*>(src));
    dnnl::memory dst_mem(dst_desc, engine, dst);
    dnnl::stream stream(engine);
    dnnl::reorder(src_mem, dst_mem).execute(stream, src_mem, dst_mem);
    stream.wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(StrCat("oneDNN reorder failed: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace brigade::engine::onnx
