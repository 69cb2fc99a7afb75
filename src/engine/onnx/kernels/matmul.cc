// MatMul, Gemm and the fused ai.brigade.FusedMatMul, all on oneDNN's matmul primitive.
//
// FusedMatMul(A, B, [bias], [post-op inputs...]) generalizes both:
//   transA / transB     swap the last two dims of A / B
//   perm_a / perm_b     read A / B through a permutation (a Transpose folded into strides)
//   perm_out            write Y through a permutation (the Transpose after attention)
//   alpha               Y = alpha * A·B + bias; a non-unit alpha needs a constant bias
//   post_ops            see post_ops.h (activation, residual Add, attention mask Add)
// Batch dimensions broadcast as in numpy. A constant 2-D B is packed once into oneDNN's
// preferred layout and shared through PackedWeights; with ComputePrecision::kBf16 it is packed as
// bf16 and A is rounded into scratch per run (fp32 accumulation and output). Non-fp32 MatMul (fp64,
// integers) runs as a plain loop, which only conformance tests use.

#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/broadcast.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "engine/onnx/kernels/post_ops.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// A tensor viewed through a permutation: logical dims and the element strides that read them.
struct StridedView {
  Shape dims;
  Shape strides;
};

absl::StatusOr<StridedView> Permuted(const KernelContext& ctx, const Shape& shape,
                                     std::span<const int64_t> perm) {
  StridedView view{shape, Strides(shape)};
  if (perm.empty()) return view;
  if (perm.size() != shape.size()) return ctx.Error("permutation rank mismatch");
  StridedView out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(shape.size())) return ctx.Error("bad permutation");
    out.dims.push_back(view.dims[static_cast<size_t>(p)]);
    out.strides.push_back(view.strides[static_cast<size_t>(p)]);
  }
  return out;
}

struct Spec {
  bool trans_a = false, trans_b = false;
  std::vector<int64_t> perm_a, perm_b, perm_out;
  float alpha = 1.0f;
  int bias_input = -1;      // input holding a bias broadcast onto Y
  float bias_scale = 1.0f;  // Gemm's beta
  // Gemm with a run-time C and beta/alpha != 1: Y is first filled with broadcast C, then the
  // matmul accumulates into it (oneDNN sum post-op with scale beta).
  int prefill_input = -1;
};

class DnnlMatMulKernel final : public OpKernel {
 public:
  DnnlMatMulKernel(DnnlCall call, std::vector<std::pair<int, size_t>> bindings,
                   std::optional<ScratchReorder> a_reorder, int dst, int scratch,
                   size_t scratch_offset, std::shared_ptr<const Tensor> packed, Tensor bias,
                   int prefill_input, std::optional<BroadcastPlan> prefill)
      : call_(std::move(call)),
        bindings_(std::move(bindings)),
        a_reorder_(std::move(a_reorder)),
        dst_(dst),
        scratch_(scratch),
        scratch_offset_(scratch_offset),
        packed_(std::move(packed)),
        bias_(std::move(bias)),
        prefill_input_(prefill_input),
        prefill_(std::move(prefill)) {}

  absl::Status Run(const RunContext& ctx) override {
    if (prefill_.has_value()) {
      const float* c = ctx.in<float>(static_cast<size_t>(prefill_input_));
      float* y = ctx.out<float>(0);
      const int64_t length = prefill_->row_length();
      const bool contiguous = prefill_->inner_stride(0) != 0;
      prefill_->ForRows(0, prefill_->rows(), [&](int64_t r, const auto& o) {
        for (int64_t i = 0; i < length; ++i) y[r * length + i] = c[o[0] + (contiguous ? i : 0)];
      });
    }
    if (a_reorder_.has_value()) {
      if (absl::Status s = RunScratchReorder(*a_reorder_, ctx, call_); !s.ok()) return s;
    }
    for (const auto& [slot, input] : bindings_) call_.SetHandle(slot, ctx.inputs[input]);
    call_.SetHandle(dst_, ctx.outputs[0]);
    if (scratch_ >= 0) call_.SetHandle(scratch_, ctx.scratch + scratch_offset_);
    return call_.Execute(*ctx.stream);
  }

 private:
  DnnlCall call_;
  const std::vector<std::pair<int, size_t>> bindings_;  // (slot, node input)
  const std::optional<ScratchReorder> a_reorder_;       // A rounded to bf16
  const int dst_, scratch_;
  const size_t scratch_offset_;                 // of oneDNN's scratchpad, after a_reorder_'s copy
  const std::shared_ptr<const Tensor> packed_;  // keeps packed weights alive
  const Tensor bias_;                           // keeps a rescaled bias alive
  const int prefill_input_;
  const std::optional<BroadcastPlan> prefill_;
};

// Plain loop for non-fp32 types: Y[b] = A[b] · B[b] with broadcast batch offsets.
class LoopMatMulKernel final : public OpKernel {
 public:
  LoopMatMulKernel(DataType dtype, int64_t m, int64_t k, int64_t n,
                   std::vector<std::pair<int64_t, int64_t>> batch_offsets)
      : dtype_(dtype), m_(m), k_(k), n_(n), batch_offsets_(std::move(batch_offsets)) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        const T* a = ctx.in<T>(0);
        const T* b = ctx.in<T>(1);
        T* y = ctx.out<T>(0);
        for (size_t batch = 0; batch < batch_offsets_.size(); ++batch) {
          const T* pa = a + batch_offsets_[batch].first;
          const T* pb = b + batch_offsets_[batch].second;
          T* py = y + static_cast<int64_t>(batch) * m_ * n_;
          for (int64_t i = 0; i < m_; ++i) {
            for (int64_t j = 0; j < n_; ++j) {
              T acc = 0;
              for (int64_t p = 0; p < k_; ++p) acc += pa[i * k_ + p] * pb[p * n_ + j];
              py[i * n_ + j] = acc;
            }
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  const DataType dtype_;
  const int64_t m_, k_, n_;
  const std::vector<std::pair<int64_t, int64_t>> batch_offsets_;
};

// An empty reduction (K = 0) or output: Y is all zeros.
class ZeroKernel final : public OpKernel {
 public:
  explicit ZeroKernel(size_t bytes) : bytes_(bytes) {}
  absl::Status Run(const RunContext& ctx) override {
    if (bytes_ > 0) std::memset(ctx.outputs[0], 0, bytes_);
    return absl::OkStatus();
  }

 private:
  const size_t bytes_;
};

absl::StatusOr<std::unique_ptr<OpKernel>> Build(KernelContext& ctx, const Spec& spec) {
  const ValueInfo& a_info = ctx.input(0);
  const ValueInfo& b_info = ctx.input(1);
  if (a_info.dtype != b_info.dtype) return ctx.Error("A and B have different element types");
  BRIGADE_ASSIGN_OR_RETURN(StridedView a, Permuted(ctx, a_info.shape, spec.perm_a));
  BRIGADE_ASSIGN_OR_RETURN(StridedView b, Permuted(ctx, b_info.shape, spec.perm_b));
  if (a.dims.empty() || b.dims.empty()) return ctx.Error("A and B must have rank >= 1");
  // numpy rules for 1-D operands: A [K] → [1,K] (M dropped), B [K] → [K,1] (N dropped).
  const bool drop_m = a.dims.size() == 1, drop_n = b.dims.size() == 1;
  if (drop_m) {
    a.dims.insert(a.dims.begin(), 1);
    a.strides.insert(a.strides.begin(), a.dims[1]);
  }
  if (drop_n) {
    b.dims.push_back(1);
    b.strides.push_back(1);
  }
  auto swap_last = [](StridedView& v) {
    const size_t r = v.dims.size();
    std::swap(v.dims[r - 1], v.dims[r - 2]);
    std::swap(v.strides[r - 1], v.strides[r - 2]);
  };
  if (spec.trans_a) swap_last(a);
  if (spec.trans_b) swap_last(b);
  size_t rank = std::max(a.dims.size(), b.dims.size());
  auto align = [rank](StridedView& v) {
    while (v.dims.size() < rank) {
      v.dims.insert(v.dims.begin(), 1);
      v.strides.insert(v.strides.begin(), 0);
    }
  };
  align(a);
  align(b);
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1], n = b.dims[rank - 1];
  if (b.dims[rank - 2] != k) {
    return ctx.Error("inner dimensions differ: A ", ShapeToString(a_info.shape), ", B ",
                     ShapeToString(b_info.shape));
  }
  Shape logical;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (a.dims[d] != b.dims[d] && a.dims[d] != 1 && b.dims[d] != 1) {
      return ctx.Error("batch dimensions of ", ShapeToString(a_info.shape), " and ",
                       ShapeToString(b_info.shape), " do not broadcast");
    }
    logical.push_back(std::max(a.dims[d], b.dims[d]));
  }
  logical.push_back(m);
  logical.push_back(n);

  // Output shape (and the strides Y is written with, for perm_out).
  Shape out_shape;
  Shape dst_strides;
  if (!spec.perm_out.empty()) {
    if (spec.perm_out.size() != rank || drop_m || drop_n) return ctx.Error("bad perm_out");
    for (int64_t p : spec.perm_out) {
      if (p < 0 || p >= static_cast<int64_t>(rank)) return ctx.Error("bad perm_out");
      out_shape.push_back(logical[static_cast<size_t>(p)]);
    }
    const Shape out_strides = Strides(out_shape);
    dst_strides.assign(rank, 0);
    for (size_t i = 0; i < rank; ++i) {
      dst_strides[static_cast<size_t>(spec.perm_out[i])] = out_strides[i];
    }
  } else {
    out_shape.assign(logical.begin(), logical.end() - 2);
    if (!drop_m) out_shape.push_back(m);
    if (!drop_n) out_shape.push_back(n);
    dst_strides = Strides(logical);
  }
  ctx.SetOutput(0, a_info.dtype, out_shape);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();

  if (a_info.dtype != DataType::kFp32) {
    if (spec.bias_input >= 0 || PostOpCount(*ctx.node) > 0 || !spec.perm_out.empty() ||
        spec.alpha != 1.0f || a_info.dtype == DataType::kBool ||
        !VisitNumeric(a_info.dtype, []<typename T>() {})) {
      return ctx.Unsupported("element type ", DataTypeName(a_info.dtype));
    }
    std::vector<std::pair<int64_t, int64_t>> offsets;
    const int64_t batches = DimProduct(logical, 0, rank - 2);
    if (a.strides[rank - 1] != 1 || b.strides[rank - 1] != 1 || spec.trans_a || spec.trans_b ||
        !spec.perm_a.empty() || !spec.perm_b.empty()) {
      return ctx.Unsupported("transposed ", DataTypeName(a_info.dtype), " MatMul");
    }
    for (int64_t batch = 0; batch < batches; ++batch) {
      int64_t rest = batch, oa = 0, ob = 0;
      for (size_t d = rank - 2; d-- > 0;) {
        const int64_t i = rest % logical[d];
        rest /= logical[d];
        oa += (a.dims[d] == 1 ? 0 : i) * a.strides[d];
        ob += (b.dims[d] == 1 ? 0 : i) * b.strides[d];
      }
      offsets.emplace_back(oa, ob);
    }
    return std::make_unique<LoopMatMulKernel>(a_info.dtype, m, k, n, std::move(offsets));
  }
  if (DimProduct(logical, 0, rank) == 0 || k == 0) {
    if (spec.bias_input >= 0 || PostOpCount(*ctx.node) > 0) {
      return ctx.Unsupported("empty MatMul with bias or post-ops");
    }
    return std::make_unique<ZeroKernel>(static_cast<size_t>(DimProduct(logical, 0, rank)) *
                                        sizeof(float));
  }

  // Weights-stationary matmul (constant 2-D B, row-major A, e.g. a transformer's Linear on
  // [batch, seq, hidden]): run it as one 2-D GEMM over every row of A, so B is packed once into
  // oneDNN's blocked layout and the kernel sees M = batch × seq. Post-op inputs are viewed in 2-D
  // as well, which works when each is full-size or a row vector.
  std::vector<ValueInfo> flat_extras;
  std::vector<std::pair<size_t, const ValueInfo*>> saved_inputs;
  if (b_info.constant != nullptr && b_info.shape.size() == 2 && a_info.shape.size() >= 3 &&
      spec.perm_a.empty() && !spec.trans_a && spec.perm_out.empty() && spec.prefill_input < 0) {
    const int64_t rows = DimProduct(logical, 0, rank - 1);
    bool ok = true;
    std::vector<size_t> extras;
    const auto first_extra = static_cast<size_t>(ctx.node->attributes.GetInt("post_op_input", 0));
    if (first_extra > 0) {
      for (size_t i = first_extra; i < ctx.num_inputs(); ++i) extras.push_back(i);
    }
    if (spec.bias_input >= 0) extras.push_back(static_cast<size_t>(spec.bias_input));
    for (size_t i : extras) {
      if (!ctx.has_input(i) || ctx.input(i).layout.blocked) {
        ok = false;
        continue;
      }
      const int64_t count = ctx.input(i).num_elements();
      const bool row_vector =
          count == n && (ctx.input(i).shape.empty() || ctx.input(i).shape.back() == n);
      ok = ok && (count == rows * n || row_vector);
    }
    if (ok) {
      flat_extras.reserve(extras.size());
      for (size_t i : extras) {
        ValueInfo flat = ctx.input(i);
        flat.shape = flat.num_elements() == n ? Shape{1, n} : Shape{rows, n};
        flat_extras.push_back(std::move(flat));
        saved_inputs.emplace_back(i, ctx.inputs[i]);
        ctx.inputs[i] = &flat_extras.back();
      }
      a = StridedView{Shape{rows, k}, Shape{k, 1}};
      b = StridedView{Shape{k, n}, Shape{b.strides[rank - 2], b.strides[rank - 1]}};
      logical = Shape{rows, n};
      dst_strides = Shape{n, 1};
      rank = 2;
    }
  }
  // Restores the node's own input descriptions when Build returns.
  struct Restore {
    KernelContext& ctx;
    std::vector<std::pair<size_t, const ValueInfo*>>& saved;
    ~Restore() {
      for (const auto& [i, info] : saved) ctx.inputs[i] = info;
    }
  } restore{ctx, saved_inputs};

  using dt = dnnl::memory::data_type;
  auto desc_of = [](const StridedView& v) {
    dnnl::memory::dims strides(v.strides.begin(), v.strides.end());
    // Broadcast dims have size 1; oneDNN accepts any stride there, use a harmless one.
    for (size_t d = 0; d < strides.size(); ++d) {
      if (v.dims[d] == 1 && strides[d] == 0) strides[d] = 1;
    }
    return dnnl::memory::desc(ToDnnlDims(v.dims), dt::f32, strides);
  };
  const dnnl::memory::desc a_desc = desc_of(a);
  const dnnl::memory::desc b_plain = desc_of(b);
  const dnnl::memory::desc dst_desc(ToDnnlDims(logical), dt::f32,
                                    dnnl::memory::dims(dst_strides.begin(), dst_strides.end()));
  const bool pack_b = b_info.constant != nullptr && b_info.shape.size() == 2 && rank == 2;
  // bf16 multiply-adds for products with constant weights (the Linear layers, nearly all of a
  // transformer's work); products of two activations (attention scores) stay fp32.
  const bool bf16 = pack_b && ctx.precision == ComputePrecision::kBf16;
  const dt weight_type = bf16 ? dt::bf16 : dt::f32;
  const dnnl::memory::desc a_compute = bf16 ? PlainDesc(a.dims, dt::bf16) : a_desc;
  const dnnl::memory::desc b_desc =
      pack_b ? dnnl::memory::desc(ToDnnlDims(b.dims), weight_type, dnnl::memory::format_tag::any)
             : b_plain;

  // Bias: broadcast onto the logical output, optionally rescaled (constant only).
  Tensor bias_storage;
  const Tensor* bias_const = nullptr;
  dnnl::memory::desc bias_desc;
  float bias_factor = spec.bias_scale / spec.alpha;
  if (spec.bias_input >= 0) {
    const ValueInfo& c = ctx.input(static_cast<size_t>(spec.bias_input));
    if (c.dtype != DataType::kFp32 || c.layout.blocked) return ctx.Error("bias must be plain fp32");
    if (c.shape.size() > rank) return ctx.Error("bias rank exceeds the output's");
    Shape aligned(rank - c.shape.size(), 1);
    aligned.insert(aligned.end(), c.shape.begin(), c.shape.end());
    for (size_t d = 0; d < rank; ++d) {
      if (aligned[d] != 1 && aligned[d] != logical[d]) {
        return ctx.Error("bias ", ShapeToString(c.shape), " does not broadcast to ",
                         ShapeToString(logical));
      }
    }
    bias_desc = PlainDesc(aligned, dt::f32);
    if (bias_factor != 1.0f) {
      if (c.constant == nullptr) return ctx.Unsupported("scaled bias must be constant");
      BRIGADE_ASSIGN_OR_RETURN(bias_storage, c.constant->Clone());
      for (float& v : bias_storage.mutable_values<float>()) v *= bias_factor;
      bias_const = &bias_storage;
    }
  }

  std::vector<BinaryPostOpInput> binary_inputs;
  dnnl::post_ops post_ops;
  if (spec.alpha != 1.0f) {
    post_ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, spec.alpha, 0.0f);
  }
  std::optional<BroadcastPlan> prefill;
  if (spec.prefill_input >= 0) {
    const ValueInfo& c = ctx.input(static_cast<size_t>(spec.prefill_input));
    if (c.dtype != DataType::kFp32 || !spec.perm_out.empty()) return ctx.Error("bad C");
    BRIGADE_ASSIGN_OR_RETURN(Shape joined, BroadcastShapes(ctx, out_shape, c.shape));
    if (joined != out_shape) return ctx.Error("C does not broadcast to the output");
    const Shape shapes[] = {c.shape};
    prefill.emplace(out_shape, shapes);
    post_ops.append_sum(spec.bias_scale);
  }
  BRIGADE_RETURN_IF_ERROR(AppendNodePostOps(ctx, dst_desc, &post_ops, &binary_inputs));

  DnnlCall call;
  std::vector<std::pair<int, size_t>> bindings;
  int dst_slot = -1, scratch = -1;
  std::shared_ptr<const Tensor> packed;
  dnnl::matmul::primitive_desc pd;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "matmul", [&] {
    dnnl::primitive_attr attr = UserScratchpadAttr();
    attr.set_post_ops(post_ops);
    pd = spec.bias_input >= 0
             ? dnnl::matmul::primitive_desc(
                   dnnl::matmul::desc(a_compute, b_desc, bias_desc, dst_desc), attr, *ctx.engine)
             : dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_compute, b_desc, dst_desc), attr,
                                            *ctx.engine);
    call.set_primitive(dnnl::matmul(pd));
  }));
  std::optional<ScratchReorder> a_reorder;
  const int a_slot = call.AddArg(DNNL_ARG_SRC, a_compute, *ctx.engine);
  if (bf16) {
    BRIGADE_ASSIGN_OR_RETURN(a_reorder, MakeScratchReorder(ctx, 0, a_desc, a_compute));
    a_reorder->target_slot = a_slot;
  } else {
    bindings.emplace_back(a_slot, 0);
  }
  if (pack_b) {
    const dnnl::memory::desc packed_desc = pd.weights_desc();
    BRIGADE_ASSIGN_OR_RETURN(packed, PackConstant(ctx, StrCat(ctx.node->name, "/B"), b_plain,
                                                  b_info.constant->data(), packed_desc));
    call.AddArg(DNNL_ARG_WEIGHTS, packed_desc, *ctx.engine, packed->data());
  } else {
    bindings.emplace_back(call.AddArg(DNNL_ARG_WEIGHTS, b_desc, *ctx.engine), 1);
  }
  if (spec.bias_input >= 0) {
    if (bias_const != nullptr) {
      call.AddArg(DNNL_ARG_BIAS, bias_desc, *ctx.engine, bias_const->data());
    } else {
      bindings.emplace_back(call.AddArg(DNNL_ARG_BIAS, bias_desc, *ctx.engine),
                            static_cast<size_t>(spec.bias_input));
    }
  }
  dst_slot = call.AddArg(DNNL_ARG_DST, dst_desc, *ctx.engine);
  for (const BinaryPostOpInput& in : binary_inputs) {
    if (in.current != in.desc) return ctx.Error("post-op input layout differs from the output's");
    bindings.emplace_back(call.AddArg(in.dnnl_arg, in.desc, *ctx.engine), in.input);
  }
  size_t scratch_offset = 0;
  scratch = AddScratchpad(pd, ctx, call, &scratch_offset);
  return std::make_unique<DnnlMatMulKernel>(
      std::move(call), std::move(bindings), std::move(a_reorder), dst_slot, scratch, scratch_offset,
      std::move(packed), std::move(bias_storage), spec.prefill_input, std::move(prefill));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateMatMul(KernelContext& ctx) {
  return Build(ctx, Spec{});
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateGemm(KernelContext& ctx) {
  const AttributeMap& attrs = ctx.node->attributes;
  Spec spec;
  spec.trans_a = attrs.GetInt("transA", 0) != 0;
  spec.trans_b = attrs.GetInt("transB", 0) != 0;
  spec.alpha = attrs.GetFloat("alpha", 1.0f);
  const float beta = attrs.GetFloat("beta", 1.0f);
  if (ctx.input(0).shape.size() != 2 || ctx.input(1).shape.size() != 2) {
    return ctx.Error("A and B must be 2-D");
  }
  if (spec.alpha == 0.0f) return ctx.Unsupported("alpha = 0");
  if (ctx.has_input(2) && beta != 0.0f) {
    spec.bias_scale = beta;
    if (ctx.input(2).constant == nullptr && beta / spec.alpha != 1.0f) {
      spec.prefill_input = 2;
    } else {
      spec.bias_input = 2;
    }
  }
  return Build(ctx, spec);
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateFusedMatMul(KernelContext& ctx) {
  const AttributeMap& attrs = ctx.node->attributes;
  Spec spec;
  spec.trans_a = attrs.GetInt("transA", 0) != 0;
  spec.trans_b = attrs.GetInt("transB", 0) != 0;
  spec.alpha = attrs.GetFloat("alpha", 1.0f);
  spec.perm_a.assign(attrs.GetInts("perm_a").begin(), attrs.GetInts("perm_a").end());
  spec.perm_b.assign(attrs.GetInts("perm_b").begin(), attrs.GetInts("perm_b").end());
  spec.perm_out.assign(attrs.GetInts("perm_out").begin(), attrs.GetInts("perm_out").end());
  if (ctx.has_input(2)) spec.bias_input = 2;
  return Build(ctx, spec);
}

}  // namespace

void RegisterMatMulKernels(KernelRegistry* registry) {
  KernelDef matmul;
  matmul.op_type = "MatMul";
  matmul.create = &CreateMatMul;
  registry->Add(matmul);
  KernelDef gemm;
  gemm.op_type = "Gemm";
  gemm.create = &CreateGemm;
  registry->Add(gemm);
  KernelDef fused;
  fused.domain = std::string(kBrigadeDomain);
  fused.op_type = "FusedMatMul";
  fused.create = &CreateFusedMatMul;
  registry->Add(fused);
}

}  // namespace brigade::engine::onnx
