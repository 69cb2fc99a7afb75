// Einsum (opset 12): general Einstein summation over any number of operands.
//
// The equation is parsed in the factory: letters (a-z, A-Z) and at most one "..." per term, an
// explicit output after "->" or the implicit one (the broadcast "..." dims, then the letters seen
// exactly once, in ASCII order). A letter repeated in one operand reads its diagonal; a letter
// absent from the output is summed; "..." dims broadcast as in numpy. Every letter must have one
// size wherever it appears. A malformed equation (a character that is not a letter, a second or
// broken ellipsis, a term count or rank that does not match the inputs, an output letter no input
// has) fails the plan with INVALID_ARGUMENT naming the node and the equation.
//
// Two ways to run it, both fixed in the factory:
//   batched matmul  two fp32 operands (the transformer exports' case, "bhqd,bhkd->bhqk"): the
//                   letters sort into batch (both operands and the output), M (first operand and
//                   the output), N (second and the output) and K (both operands, summed), and the
//                   contraction is one oneDNN matmul [batch..., M, K] × [batch..., K, N] →
//                   [batch..., M, N]. An operand or the output is read or written in place
//                   through strides when its M/N/K letters are adjacent in memory (the permutation
//                   costs nothing); otherwise, or when it has a diagonal or letters only it has
//                   (summed out first), it is gathered into scratch in canonical order first
//                   (the output scattered back after). Should oneDNN offer only its reference
//                   kernel for the strided form, everything goes through scratch.
//   loop nest       anything else (one operand, three or more, integer and fp64 types, a
//                   contraction whose K letters broadcast): one strided loop over the output's
//                   elements, each a sum over the summed letters of the operands' product
//                   (accumulated in double for floating point).
// Thread safety: one kernel runs on one thread at a time, with up to `threads` threads inside.
// Run() allocates nothing: loop counters live on the stack (at most kMaxEinsumLabels letters and
// kMaxEinsumOperands operands) and copies in the kernel's scratch.

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/registry.h"

namespace brigade::engine::onnx {
namespace {

// Labels 0–25 are 'A'–'Z', 26–51 'a'–'z' (so label order is ASCII order, the implicit output's),
// and 52 onwards the broadcast "..." dims, right-aligned across operands.
constexpr int kEinsumLetters = 52;
constexpr size_t kMaxEinsumLabels = 64;
constexpr size_t kMaxEinsumEllipsisDims = kMaxEinsumLabels - kEinsumLetters;
constexpr size_t kMaxEinsumOperands = 8;
// The loop nest visits every combination of labels once; past this it would run for hours.
constexpr int64_t kMaxEinsumLoopSteps = int64_t{1} << 40;

int EinsumLetterLabel(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

char EinsumLabelLetter(int label) {
  return static_cast<char>(label < 26 ? 'A' + label : 'a' + (label - 26));
}

struct EinsumEquation {
  std::vector<std::vector<int>> operands;  // one label per dim of each input
  std::vector<int> output;                 // one label per output dim
  std::vector<int64_t> size;               // per label: its size (the broadcast one for "...")
  std::vector<int> uses;                   // per label: occurrences over all inputs
};

// One term's labels, with -1 standing for its "...".
absl::StatusOr<std::vector<int>> ParseEinsumTerm(const KernelContext& ctx,
                                                 std::string_view equation, std::string_view term,
                                                 std::string_view which) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (term.substr(i, 3) != "...") {
        return ctx.Error("equation '", equation, "': ", which, " has a '.' outside an ellipsis");
      }
      if (ellipsis) return ctx.Error("equation '", equation, "': ", which, " has two ellipses");
      ellipsis = true;
      labels.push_back(-1);
      i += 2;
      continue;
    }
    const int label = EinsumLetterLabel(c);
    if (label < 0) {
      return ctx.Error("equation '", equation, "': ", which, " has '", std::string(1, c),
                       "', not a letter");
    }
    labels.push_back(label);
  }
  return labels;
}

absl::StatusOr<EinsumEquation> ParseEinsumEquation(const KernelContext& ctx) {
  if (!ctx.node->attributes.Has("equation")) return ctx.Error("attribute 'equation' is missing");
  std::string equation;
  for (char c : ctx.node->attributes.GetString("equation", "")) {
    if (c != ' ') equation.push_back(c);
  }
  const size_t arrow = equation.find("->");
  const std::string_view lhs = std::string_view(equation).substr(0, arrow);
  std::vector<std::string_view> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs()) {
    return ctx.Error("equation '", equation, "' has ", terms.size(), " operand terms for ",
                     ctx.num_inputs(), " inputs");
  }
  if (terms.size() > kMaxEinsumOperands) {
    return ctx.Unsupported("more than ", kMaxEinsumOperands, " operands");
  }
  EinsumEquation eq;
  eq.size.assign(kMaxEinsumLabels, -1);
  eq.uses.assign(kMaxEinsumLabels, 0);
  std::vector<std::vector<int>> parsed;
  size_t ellipsis_dims = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is missing");
    BRIGADE_ASSIGN_OR_RETURN(std::vector<int> labels,
                             ParseEinsumTerm(ctx, equation, terms[i], StrCat("operand ", i)));
    const size_t rank = ctx.input(i).shape.size();
    const bool has_ellipsis = std::find(labels.begin(), labels.end(), -1) != labels.end();
    const size_t letters = labels.size() - (has_ellipsis ? 1 : 0);
    if (has_ellipsis ? letters > rank : letters != rank) {
      return ctx.Error("equation '", equation, "': operand ", i, " has ", letters,
                       " letters for an input of rank ", rank);
    }
    if (has_ellipsis) ellipsis_dims = std::max(ellipsis_dims, rank - letters);
    parsed.push_back(std::move(labels));
  }
  if (ellipsis_dims > kMaxEinsumEllipsisDims) {
    return ctx.Unsupported("more than ", kMaxEinsumEllipsisDims, " dims under '...'");
  }
  // Expand each "..." into its labels, right-aligned, and fix every label's size.
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Shape& shape = ctx.input(i).shape;
    const size_t own = shape.size() - (parsed[i].size() - 1);  // dims under this "..."
    std::vector<int> labels;
    for (int label : parsed[i]) {
      if (label >= 0) {
        labels.push_back(label);
        continue;
      }
      for (size_t t = 0; t < own; ++t) {
        labels.push_back(kEinsumLetters + static_cast<int>(ellipsis_dims - own + t));
      }
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const auto l = static_cast<size_t>(labels[d]);
      const int64_t dim = shape[d];
      ++eq.uses[l];
      if (labels[d] >= kEinsumLetters) {
        if (eq.size[l] == -1 || eq.size[l] == 1) {
          eq.size[l] = dim;
        } else if (dim != 1 && dim != eq.size[l]) {
          return ctx.Error("equation '", equation, "': '...' dims of operand ", i, " (",
                           ShapeToString(shape), ") do not broadcast with the other operands'");
        }
      } else if (eq.size[l] == -1) {
        eq.size[l] = dim;
      } else if (eq.size[l] != dim) {
        return ctx.Error("equation '", equation, "': letter '",
                         std::string(1, EinsumLabelLetter(labels[d])), "' has size ", dim,
                         " in operand ", i, " and ", eq.size[l], " elsewhere");
      }
    }
    eq.operands.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    BRIGADE_ASSIGN_OR_RETURN(
        std::vector<int> labels,
        ParseEinsumTerm(ctx, equation, std::string_view(equation).substr(arrow + 2), "the output"));
    std::vector<bool> seen(kMaxEinsumLabels, false);
    for (int label : labels) {
      if (label < 0) {
        for (size_t t = 0; t < ellipsis_dims; ++t) {
          eq.output.push_back(kEinsumLetters + static_cast<int>(t));
        }
        continue;
      }
      const std::string letter(1, EinsumLabelLetter(label));
      if (eq.uses[static_cast<size_t>(label)] == 0) {
        return ctx.Error("equation '", equation, "': output letter '", letter,
                         "' is in no operand");
      }
      if (seen[static_cast<size_t>(label)]) {
        return ctx.Error("equation '", equation, "': output letter '", letter, "' is repeated");
      }
      seen[static_cast<size_t>(label)] = true;
      eq.output.push_back(label);
    }
  } else {
    for (size_t t = 0; t < ellipsis_dims; ++t) {
      eq.output.push_back(kEinsumLetters + static_cast<int>(t));
    }
    for (int label = 0; label < kEinsumLetters; ++label) {
      if (eq.uses[static_cast<size_t>(label)] == 1) eq.output.push_back(label);
    }
  }
  return eq;
}

// Per operand and label: the element stride that steps the label (the sum of the strides of
// every dim carrying it: a repeated letter walks the diagonal), 0 where the operand lacks the
// label or broadcasts it (size 1).
std::vector<int64_t> EinsumLabelStrides(const EinsumEquation& eq, size_t operand,
                                        const Shape& shape) {
  std::vector<int64_t> strides(kMaxEinsumLabels, 0);
  const Shape dense = Strides(shape);
  const std::vector<int>& labels = eq.operands[operand];
  for (size_t d = 0; d < labels.size(); ++d) {
    if (shape[d] != 1) strides[static_cast<size_t>(labels[d])] += dense[d];
  }
  return strides;
}

// Per label: its size in `operand` (1 where broadcast), 0 where the operand lacks it.
std::vector<int64_t> EinsumLabelSizes(const EinsumEquation& eq, size_t operand,
                                      const Shape& shape) {
  std::vector<int64_t> sizes(kMaxEinsumLabels, 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    sizes[static_cast<size_t>(eq.operands[operand][d])] = shape[d];
  }
  return sizes;
}

// ---------------------------------------------------------------------------------------------
// The loop nest: dst[o] = Σ_s Π_operands src_k[o·outer_k + s·sum_k], over the outer dims in the
// destination's row-major order (dst_strides place each) and the summed dims.

struct EinsumLoop {
  size_t operands = 0;
  std::vector<int64_t> dims, dst_strides;
  std::vector<int64_t> outer_strides;  // [dim * operands + operand]
  std::vector<int64_t> sum_dims;
  std::vector<int64_t> sum_strides;  // [dim * operands + operand]
  int64_t outer_count = 1, sum_count = 1;

  void AddOuter(int64_t dim, int64_t dst_stride, std::span<const int64_t> src_strides) {
    dims.push_back(dim);
    dst_strides.push_back(dst_stride);
    outer_strides.insert(outer_strides.end(), src_strides.begin(), src_strides.end());
    outer_count *= dim;
  }
  void AddSum(int64_t dim, std::span<const int64_t> src_strides) {
    sum_dims.push_back(dim);
    sum_strides.insert(sum_strides.end(), src_strides.begin(), src_strides.end());
    sum_count *= dim;
  }

  template <typename T>
  void Run(const T* const* src, T* dst, int threads) const {
    // Integers wrap (modulo 2^64, then the type's width) instead of overflowing, which would be
    // undefined for the signed ones: the data are the request's.
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    const size_t rank = dims.size(), sum_rank = sum_dims.size(), n = operands;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(sum_count, 1));
    ParallelFor(threads, outer_count, grain, [&](int64_t begin, int64_t end) {
      std::array<int64_t, kMaxEinsumLabels> coord{}, sum_coord{};
      std::array<int64_t, kMaxEinsumOperands> offset{}, sum_offset{};
      int64_t dst_offset = 0;
      int64_t rest = begin;
      for (size_t d = rank; d-- > 0;) {
        coord[d] = rest % dims[d];
        rest /= dims[d];
        dst_offset += coord[d] * dst_strides[d];
        for (size_t k = 0; k < n; ++k) offset[k] += coord[d] * outer_strides[d * n + k];
      }
      for (int64_t o = begin; o < end; ++o) {
        Acc acc = 0;
        for (size_t k = 0; k < n; ++k) sum_offset[k] = offset[k];
        for (int64_t s = 0; s < sum_count; ++s) {
          Acc product = 1;
          for (size_t k = 0; k < n; ++k) product *= static_cast<Acc>(src[k][sum_offset[k]]);
          acc += product;
          for (size_t d = sum_rank; d-- > 0;) {
            for (size_t k = 0; k < n; ++k) sum_offset[k] += sum_strides[d * n + k];
            if (++sum_coord[d] < sum_dims[d]) break;
            for (size_t k = 0; k < n; ++k) sum_offset[k] -= sum_strides[d * n + k] * sum_dims[d];
            sum_coord[d] = 0;
          }
        }
        dst[dst_offset] = static_cast<T>(acc);
        for (size_t d = rank; d-- > 0;) {
          dst_offset += dst_strides[d];
          for (size_t k = 0; k < n; ++k) offset[k] += outer_strides[d * n + k];
          if (++coord[d] < dims[d]) break;
          dst_offset -= dst_strides[d] * dims[d];
          for (size_t k = 0; k < n; ++k) offset[k] -= outer_strides[d * n + k] * dims[d];
          coord[d] = 0;
        }
      }
    });
  }
};

class EinsumLoopKernel final : public OpKernel {
 public:
  EinsumLoopKernel(DataType dtype, EinsumLoop loop) : dtype_(dtype), loop_(std::move(loop)) {}

  absl::Status Run(const RunContext& ctx) override {
    VisitNumeric(dtype_, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        std::array<const T*, kMaxEinsumOperands> src{};
        for (size_t k = 0; k < loop_.operands; ++k) src[k] = ctx.in<T>(k);
        loop_.Run<T>(src.data(), ctx.out<T>(0), ctx.threads);
      }
    });
    return absl::OkStatus();
  }

 private:
  const DataType dtype_;
  const EinsumLoop loop_;
};

// All inputs to the output in one loop nest.
absl::StatusOr<std::unique_ptr<OpKernel>> BuildEinsumLoop(KernelContext& ctx,
                                                          const EinsumEquation& eq) {
  const size_t n = eq.operands.size();
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < n; ++k) strides.push_back(EinsumLabelStrides(eq, k, ctx.input(k).shape));
  EinsumLoop loop;
  loop.operands = n;
  std::vector<bool> in_output(kMaxEinsumLabels, false);
  Shape out_shape;
  for (int label : eq.output) {
    in_output[static_cast<size_t>(label)] = true;
    out_shape.push_back(eq.size[static_cast<size_t>(label)]);
  }
  const Shape out_strides = Strides(out_shape);
  int64_t steps = 1;
  std::vector<int64_t> column(n);
  auto at = [&](size_t label) {
    for (size_t k = 0; k < n; ++k) column[k] = strides[k][label];
    return std::span<const int64_t>(column);
  };
  for (size_t d = 0; d < eq.output.size(); ++d) {
    const auto label = static_cast<size_t>(eq.output[d]);
    loop.AddOuter(eq.size[label], out_strides[d], at(label));
    if (__builtin_mul_overflow(steps, std::max<int64_t>(eq.size[label], 1), &steps)) {
      steps = kMaxEinsumLoopSteps + 1;
    }
  }
  for (size_t label = 0; label < kMaxEinsumLabels; ++label) {
    if (eq.uses[label] == 0 || in_output[label]) continue;
    loop.AddSum(eq.size[label], at(label));
    if (__builtin_mul_overflow(steps, std::max<int64_t>(eq.size[label], 1), &steps)) {
      steps = kMaxEinsumLoopSteps + 1;
    }
  }
  if (steps > kMaxEinsumLoopSteps) {
    return ctx.Unsupported("a loop of more than 2^40 steps (no matmul form for this equation)");
  }
  return std::make_unique<EinsumLoopKernel>(ctx.input(0).dtype, std::move(loop));
}

// ---------------------------------------------------------------------------------------------
// The batched matmul.

// The one stride that steps `labels` as a single merged dim in a tensor with per-label `sizes`
// and `strides`, or nullopt when they are not adjacent in memory in that order. Size-1 labels
// do not matter.
std::optional<int64_t> EinsumMergedStride(std::span<const int> labels,
                                          std::span<const int64_t> sizes,
                                          std::span<const int64_t> strides) {
  std::optional<int64_t> inner;
  int64_t merged = 1;
  for (size_t i = labels.size(); i-- > 0;) {
    const auto l = static_cast<size_t>(labels[i]);
    if (sizes[l] == 1) continue;
    if (inner.has_value() && strides[l] != *inner * merged) return std::nullopt;
    if (!inner.has_value()) inner = strides[l];
    merged *= sizes[l];
  }
  return inner.value_or(1);
}

// Gives the size-1 dims of a matmul operand [batch..., rows, cols] the strides a dense tensor would
// have there, so that oneDNN recognizes a plain (or transposed) matrix: their strides are the
// model's choice (any value reads the same element) but oneDNN's kernels match on them.
void FixEinsumUnitStrides(const dnnl::memory::dims& dims, dnnl::memory::dims& strides) {
  const size_t r = dims.size();
  if (dims[r - 1] == 1) strides[r - 1] = 1;
  if (dims[r - 2] == 1) strides[r - 2] = strides[r - 1] == 1 ? dims[r - 1] : 1;
  for (size_t i = r - 2; i-- > 0;) {
    if (dims[i] != 1) continue;
    int64_t outer = 1;
    for (size_t j = i + 1; j < r; ++j) outer = std::max(outer, strides[j] * dims[j]);
    strides[i] = outer;
  }
}

class EinsumMatMulKernel final : public OpKernel {
 public:
  struct Gather {
    EinsumLoop loop;  // one operand (the input or the product) into its destination
    size_t offset = 0;
  };
  EinsumMatMulKernel(DnnlCall call, int a_slot, int b_slot, int dst_slot, int scratchpad_slot,
                     size_t scratchpad_offset, std::optional<Gather> a, std::optional<Gather> b,
                     std::optional<Gather> dst)
      : call_(std::move(call)),
        a_slot_(a_slot),
        b_slot_(b_slot),
        dst_slot_(dst_slot),
        scratchpad_slot_(scratchpad_slot),
        scratchpad_offset_(scratchpad_offset),
        a_(std::move(a)),
        b_(std::move(b)),
        dst_(std::move(dst)) {}

  absl::Status Run(const RunContext& ctx) override {
    const float* a = ctx.in<float>(0);
    const float* b = ctx.in<float>(1);
    float* dst = ctx.out<float>(0);
    if (a_.has_value()) {
      float* copy = reinterpret_cast<float*>(ctx.scratch + a_->offset);
      a_->loop.Run<float>(&a, copy, ctx.threads);
      a = copy;
    }
    if (b_.has_value()) {
      float* copy = reinterpret_cast<float*>(ctx.scratch + b_->offset);
      b_->loop.Run<float>(&b, copy, ctx.threads);
      b = copy;
    }
    float* product = dst_.has_value() ? reinterpret_cast<float*>(ctx.scratch + dst_->offset) : dst;
    call_.SetHandle(a_slot_, a);
    call_.SetHandle(b_slot_, b);
    call_.SetHandle(dst_slot_, product);
    if (scratchpad_slot_ >= 0) call_.SetHandle(scratchpad_slot_, ctx.scratch + scratchpad_offset_);
    BRIGADE_RETURN_IF_ERROR(call_.Execute(*ctx.stream));
    if (dst_.has_value()) {
      const float* from = product;
      dst_->loop.Run<float>(&from, dst, ctx.threads);
    }
    return absl::OkStatus();
  }

 private:
  DnnlCall call_;
  const int a_slot_, b_slot_, dst_slot_, scratchpad_slot_;
  const size_t scratchpad_offset_;
  const std::optional<Gather> a_, b_, dst_;
};

// The matmul form of a two-operand fp32 contraction, or null when it has none (K letters that
// broadcast, too many batch dims, an empty dim).
absl::StatusOr<std::unique_ptr<OpKernel>> BuildEinsumMatMul(KernelContext& ctx,
                                                            const EinsumEquation& eq) {
  const Shape& a_shape = ctx.input(0).shape;
  const Shape& b_shape = ctx.input(1).shape;
  const std::vector<int64_t> a_size = EinsumLabelSizes(eq, 0, a_shape),
                             b_size = EinsumLabelSizes(eq, 1, b_shape);
  const std::vector<int64_t> a_stride = EinsumLabelStrides(eq, 0, a_shape);
  const std::vector<int64_t> b_stride = EinsumLabelStrides(eq, 1, b_shape);
  std::vector<bool> in_output(kMaxEinsumLabels, false);
  Shape out_shape;
  for (int label : eq.output) {
    in_output[static_cast<size_t>(label)] = true;
    out_shape.push_back(eq.size[static_cast<size_t>(label)]);
  }
  for (size_t l = 0; l < kMaxEinsumLabels; ++l) {
    if (eq.uses[l] > 0 && eq.size[l] == 0) return std::unique_ptr<OpKernel>();
  }
  const Shape out_dense = Strides(out_shape);
  std::vector<int64_t> out_stride(kMaxEinsumLabels, 0), out_size(kMaxEinsumLabels, 0);
  for (size_t d = 0; d < eq.output.size(); ++d) {
    out_stride[static_cast<size_t>(eq.output[d])] = out_dense[d];
    out_size[static_cast<size_t>(eq.output[d])] = out_shape[d];
  }
  // Sort the letters. Batch, M and N follow the output's order, K the first operand's.
  std::vector<int> batch, m, n, k, a_only, b_only;
  for (int label : eq.output) {
    const auto l = static_cast<size_t>(label);
    if (a_size[l] > 0 && b_size[l] > 0) {
      batch.push_back(label);
    } else if (a_size[l] > 0) {
      m.push_back(label);
    } else {
      n.push_back(label);
    }
  }
  bool a_diagonal = false, b_diagonal = false;
  std::vector<bool> listed(kMaxEinsumLabels, false);
  for (int label : eq.operands[0]) {
    const auto l = static_cast<size_t>(label);
    if (listed[l]) a_diagonal = true;
    listed[l] = true;
    if (in_output[l]) continue;
    if (b_size[l] == 0) {
      a_only.push_back(label);
    } else if (std::find(k.begin(), k.end(), label) == k.end()) {
      // A summed letter must not broadcast in the matmul: its size is the same in both.
      if (a_size[l] != b_size[l]) return std::unique_ptr<OpKernel>();
      k.push_back(label);
    }
  }
  std::fill(listed.begin(), listed.end(), false);
  for (int label : eq.operands[1]) {
    const auto l = static_cast<size_t>(label);
    if (listed[l]) b_diagonal = true;
    listed[l] = true;
    if (!in_output[l] && a_size[l] == 0) b_only.push_back(label);
  }
  // oneDNN takes at most DNNL_MAX_NDIMS dims: the batch ones, M and N (or K).
  if (batch.size() + 2 > DNNL_MAX_NDIMS) return std::unique_ptr<OpKernel>();
  auto product = [&](const std::vector<int>& labels) {
    int64_t p = 1;
    for (int label : labels) p *= eq.size[static_cast<size_t>(label)];
    return p;
  };
  const int64_t m_size = product(m), n_size = product(n), k_size = product(k);

  // The canonical dense layouts: A [batch(A's sizes)..., M, K], B [batch(B's)..., K, N], the
  // product [batch..., M, N]; per label the stride it has there.
  auto canonical = [&](const std::vector<int64_t>& sizes,
                       const std::vector<const std::vector<int>*>& groups) {
    std::vector<int64_t> strides(kMaxEinsumLabels, 0);
    int64_t stride = 1;
    for (size_t g = groups.size(); g-- > 0;) {
      for (size_t i = groups[g]->size(); i-- > 0;) {
        const auto l = static_cast<size_t>((*groups[g])[i]);
        strides[l] = stride;
        stride *= sizes[l];
      }
    }
    return strides;
  };
  const std::vector<int64_t> a_canon = canonical(a_size, {&batch, &m, &k});
  const std::vector<int64_t> b_canon = canonical(b_size, {&batch, &k, &n});
  const std::vector<int64_t> c_canon = canonical(out_size, {&batch, &m, &n});

  // The operands' and product's descriptions, strided where their letters allow it.
  struct Plan {
    bool gather_a, gather_b, scatter_dst;
  };
  auto describe = [&](const Plan& plan, dnnl::memory::desc* a_desc, dnnl::memory::desc* b_desc,
                      dnnl::memory::desc* c_desc) {
    dnnl::memory::dims a_dims, b_dims, c_dims, a_str, b_str, c_str;
    const std::vector<int64_t>& as = plan.gather_a ? a_canon : a_stride;
    const std::vector<int64_t>& bs = plan.gather_b ? b_canon : b_stride;
    const std::vector<int64_t>& cs = plan.scatter_dst ? c_canon : out_stride;
    for (int label : batch) {
      const auto l = static_cast<size_t>(label);
      a_dims.push_back(a_size[l]);
      b_dims.push_back(b_size[l]);
      c_dims.push_back(out_size[l]);
      // oneDNN wants some stride on a broadcast (size-1) dim; any will do.
      a_str.push_back(a_size[l] == 1 ? 1 : as[l]);
      b_str.push_back(b_size[l] == 1 ? 1 : bs[l]);
      c_str.push_back(out_size[l] == 1 ? 1 : cs[l]);
    }
    a_dims.insert(a_dims.end(), {m_size, k_size});
    b_dims.insert(b_dims.end(), {k_size, n_size});
    c_dims.insert(c_dims.end(), {m_size, n_size});
    a_str.insert(a_str.end(),
                 {*EinsumMergedStride(m, a_size, as), *EinsumMergedStride(k, a_size, as)});
    b_str.insert(b_str.end(),
                 {*EinsumMergedStride(k, b_size, bs), *EinsumMergedStride(n, b_size, bs)});
    c_str.insert(c_str.end(),
                 {*EinsumMergedStride(m, out_size, cs), *EinsumMergedStride(n, out_size, cs)});
    FixEinsumUnitStrides(a_dims, a_str);
    FixEinsumUnitStrides(b_dims, b_str);
    FixEinsumUnitStrides(c_dims, c_str);
    using dt = dnnl::memory::data_type;
    *a_desc = dnnl::memory::desc(a_dims, dt::f32, a_str);
    *b_desc = dnnl::memory::desc(b_dims, dt::f32, b_str);
    *c_desc = dnnl::memory::desc(c_dims, dt::f32, c_str);
  };
  Plan plan;
  plan.gather_a = a_diagonal || !a_only.empty() || !EinsumMergedStride(m, a_size, a_stride) ||
                  !EinsumMergedStride(k, a_size, a_stride);
  plan.gather_b = b_diagonal || !b_only.empty() || !EinsumMergedStride(k, b_size, b_stride) ||
                  !EinsumMergedStride(n, b_size, b_stride);
  plan.scatter_dst =
      !EinsumMergedStride(m, out_size, out_stride) || !EinsumMergedStride(n, out_size, out_stride);
  dnnl::memory::desc a_desc, b_desc, c_desc;
  dnnl::matmul::primitive_desc pd;
  for (int attempt = 0; attempt < 2; ++attempt) {
    BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "matmul", [&] {
      describe(plan, &a_desc, &b_desc, &c_desc);
      pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_desc, b_desc, c_desc),
                                        UserScratchpadAttr(), *ctx.engine);
    }));
    const std::string impl = pd.impl_info_str();
    if (impl.rfind("ref", 0) != 0 || (plan.gather_a && plan.gather_b && plan.scatter_dst)) break;
    plan = Plan{true, true, true};
  }

  // Scratch: the copies, then oneDNN's scratchpad.
  std::optional<EinsumMatMulKernel::Gather> gather_a, gather_b, scatter_dst;
  auto make_gather = [&](const std::vector<int64_t>& sizes, const std::vector<int64_t>& from,
                         const std::vector<int64_t>& to,
                         const std::vector<const std::vector<int>*>& groups,
                         const std::vector<int>& summed) {
    EinsumMatMulKernel::Gather g;
    g.loop.operands = 1;
    int64_t elements = 1;
    for (const std::vector<int>* group : groups) {
      for (int label : *group) {
        const auto l = static_cast<size_t>(label);
        g.loop.AddOuter(sizes[l], to[l], std::span<const int64_t>(&from[l], 1));
        elements *= sizes[l];
      }
    }
    for (int label : summed) {
      const auto l = static_cast<size_t>(label);
      g.loop.AddSum(sizes[l], std::span<const int64_t>(&from[l], 1));
    }
    g.offset = AlignScratch(ctx.scratch_bytes);
    ctx.scratch_bytes = g.offset + static_cast<size_t>(elements) * sizeof(float);
    return g;
  };
  if (plan.gather_a) gather_a = make_gather(a_size, a_stride, a_canon, {&batch, &m, &k}, a_only);
  if (plan.gather_b) gather_b = make_gather(b_size, b_stride, b_canon, {&batch, &k, &n}, b_only);
  if (plan.scatter_dst) {
    // The product, in canonical order, back into the output's order.
    EinsumMatMulKernel::Gather g;
    g.loop.operands = 1;
    for (int label : eq.output) {
      const auto l = static_cast<size_t>(label);
      g.loop.AddOuter(out_size[l], out_stride[l], std::span<const int64_t>(&c_canon[l], 1));
    }
    g.offset = AlignScratch(ctx.scratch_bytes);
    ctx.scratch_bytes =
        g.offset + static_cast<size_t>(DimProduct(out_shape, 0, out_shape.size())) * sizeof(float);
    scatter_dst = std::move(g);
  }
  DnnlCall call;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "matmul", [&] { call.set_primitive(dnnl::matmul(pd)); }));
  const int a_slot = call.AddArg(DNNL_ARG_SRC, a_desc, *ctx.engine);
  const int b_slot = call.AddArg(DNNL_ARG_WEIGHTS, b_desc, *ctx.engine);
  const int c_slot = call.AddArg(DNNL_ARG_DST, c_desc, *ctx.engine);
  size_t scratchpad_offset = 0;
  const int scratchpad_slot = AddScratchpad(pd, ctx, call, &scratchpad_offset);
  return std::make_unique<EinsumMatMulKernel>(
      std::move(call), a_slot, b_slot, c_slot, scratchpad_slot, scratchpad_offset,
      std::move(gather_a), std::move(gather_b), std::move(scatter_dst));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateEinsum(KernelContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("needs at least one input");
  BRIGADE_ASSIGN_OR_RETURN(EinsumEquation eq, ParseEinsumEquation(ctx));
  const DataType dtype = ctx.input(0).dtype;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).dtype != dtype) {
      return ctx.Error("input ", i, " is ", DataTypeName(ctx.input(i).dtype), ", input 0 ",
                       DataTypeName(dtype));
    }
  }
  if (dtype == DataType::kBool || !VisitNumeric(dtype, []<typename T>() {})) {
    return ctx.Unsupported("element type ", DataTypeName(dtype));
  }
  Shape out_shape;
  for (int label : eq.output) out_shape.push_back(eq.size[static_cast<size_t>(label)]);
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, out_shape));
  ctx.SetOutput(0, dtype, out_shape);
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();
  if (eq.operands.size() == 2 && dtype == DataType::kFp32) {
    BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> matmul, BuildEinsumMatMul(ctx, eq));
    if (matmul != nullptr) return matmul;
  }
  return BuildEinsumLoop(ctx, eq);
}

}  // namespace

void RegisterEinsumKernels(KernelRegistry* registry) {
  KernelDef def;
  def.op_type = "Einsum";
  def.since_version = 12;
  def.create = &CreateEinsum;
  registry->Add(def);
}

}  // namespace brigade::engine::onnx
