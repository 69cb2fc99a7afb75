// LSTM, GRU and RNN (ONNX opset 7 and 14), fp32: every attribute (direction, activations with
// activation_alpha / activation_beta, clip, hidden_size, input_forget, linear_before_reset,
// layout), every optional input (B, sequence_lens, initial_h, initial_c, P) and output (Y, Y_h,
// Y_c).
//
// How a node runs:
//   1. XW = X · Wᵀ + bias for every time step and every direction at once: one oneDNN matmul
//      over the rows of X as they lie in memory ([seq·batch] or [batch·seq], layout 1), into
//      [rows, directions × gates × hidden]. W is packed once when constant. The bias is Wb + Rb,
//      except GRU's h gate with linear_before_reset, whose Rb is scaled by r and stays apart.
//   2. Per direction and time step: HR = H_{t-1} · Rᵀ, a small oneDNN matmul with R packed
//      once, then the gate math (rnn_cell.h: vectorised loops over the hidden units, built for
//      AVX-512, AVX2 and the baseline, picked at run time like the engine's other loops),
//      which update H (and C) in place and write Y. GRU without linear_before_reset needs
//      (r ⊙ H_{t-1}) · Rhᵀ once r is known: a second small matmul per step.
//   The two directions of a bidirectional node are independent: with two threads or more each
//   runs on its own OpenMP thread, with its own stream, primitives and scratch, and no barrier
//   per step; otherwise they run in turn and the matmuls take the threads.
// oneDNN's own RNN primitives (lstm_forward, lbr_gru_forward) are not used: they cover only part
// of the attributes (fixed LSTM/GRU activations; no clip, input_forget or sequence_lens; Y in
// another order for two directions), and on the bench models' layers (kernels/rnn_benchmark.cc,
// 2026-12-07, bench/results/onnx.md) they took 1–14% less CPU at one thread for GRU and for LSTM at
// batch 8 but 1.2–1.6× more for LSTM at batch 1, and at two threads their barrier per step made
// them several times slower on the shared machine, where this path (one direction per thread) has
// no barrier. One path keeps the semantics in one place.
//
// sequence_lens: at step t a batch row with t >= its length is inactive: its state stays as it
// is and its Y row is zero, so Y_h / Y_c hold the state after its last valid step (the reverse
// direction starts at its row's step length - 1). A row of length 0 has zero Y_h / Y_c, not
// initial_h / initial_c: ONNX leaves the case open and ONNX Runtime 1.30 answers zeros, so the
// same model gives the same answer on both.
//
// Thread safety: one kernel per plan, run by one thread at a time (kernel.h); Run() uses at most
// `threads` OpenMP threads. Ownership: the kernel owns its primitives, streams and derived
// constants (the combined bias); packed W and R are shared through PackedWeights. Failure: the
// factory answers INVALID_ARGUMENT naming the node and the attribute or input at fault (a bad
// direction, activation, hidden_size, clip or layout, a shape that does not match), UNIMPLEMENTED
// for element types other than fp32; Run() fails only on a sequence_lens entry outside
// [0, seq_length] or a oneDNN error. Run() allocates nothing itself (every buffer is scratch);
// oneDNN's execute builds its small per-call argument map, so a run makes a few small
// allocations per matmul call, one or two calls per step and direction.

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status_macros.h"
#include "engine/onnx/kernels/dnnl_util.h"
#include "engine/onnx/kernels/kernel_util.h"
#include "engine/onnx/kernels/packed_weights.h"
#include "engine/onnx/kernels/registry.h"
#include "engine/onnx/kernels/rnn_cell.h"

namespace brigade::engine::onnx {
namespace {

// A bound on hidden_size before anything is sized from it: R alone is gates × hidden² floats, so
// 65536 is already 64 GiB for an LSTM, the engine's largest tensor.
constexpr int64_t kMaxRnnHidden = int64_t{1} << 16;

// ---------------------------------------------------------------------------------------------
// Activations, as the node's attributes name them

struct RnnActSpec {
  std::string_view name;  // lower case; the attribute is matched case-insensitively
  RnnAct kind;
  int params;         // 1: takes alpha, 2: alpha and beta
  float alpha, beta;  // the defaults of the ONNX op of the same name
};

constexpr RnnActSpec kRnnActSpecs[] = {
    {"relu", RnnAct::kRelu, 0, 0.0f, 0.0f},
    {"tanh", RnnAct::kTanh, 0, 0.0f, 0.0f},
    {"sigmoid", RnnAct::kSigmoid, 0, 0.0f, 0.0f},
    {"affine", RnnAct::kAffine, 2, 1.0f, 0.0f},
    {"leakyrelu", RnnAct::kLeakyRelu, 1, 0.01f, 0.0f},
    {"thresholdedrelu", RnnAct::kThresholdedRelu, 1, 1.0f, 0.0f},
    {"scaledtanh", RnnAct::kScaledTanh, 2, 1.0f, 1.0f},
    {"hardsigmoid", RnnAct::kHardSigmoid, 2, 0.2f, 0.5f},
    {"elu", RnnAct::kElu, 1, 1.0f, 0.0f},
    {"softsign", RnnAct::kSoftsign, 0, 0.0f, 0.0f},
    {"softplus", RnnAct::kSoftplus, 0, 0.0f, 0.0f},
};

bool EqualsLower(std::string_view name, std::string_view lower) {
  if (name.size() != lower.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c =
        name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] - 'A' + 'a') : name[i];
    if (c != lower[i]) return false;
  }
  return true;
}

// The activations of every direction, `RnnActivationCount(cell)` per direction in order. Alphas
// and betas are consumed in the order of the functions that take them (as ONNX Runtime does);
// a function left without one takes its op's default, and surplus values are ignored, as ONNX
// Runtime ignores them, so that models it runs load here too.
absl::StatusOr<std::vector<RnnActivation>> ParseActivations(const KernelContext& ctx, RnnCell cell,
                                                            int64_t dirs) {
  const AttributeMap& attrs = ctx.node->attributes;
  const size_t per = RnnActivationCount(cell);
  const std::span<const std::string> names = attrs.GetStrings("activations");
  std::vector<RnnActivation> acts;
  if (names.empty()) {
    const RnnActivation sigmoid{RnnAct::kSigmoid}, tanh{RnnAct::kTanh};
    for (int64_t d = 0; d < dirs; ++d) {
      if (cell == RnnCell::kRnn) {
        acts.push_back(tanh);
      } else {
        acts.push_back(sigmoid);
        acts.push_back(tanh);
        if (cell == RnnCell::kLstm) acts.push_back(tanh);
      }
    }
    return acts;
  }
  // A bidirectional node may name one direction's functions for both.
  if (names.size() != per * static_cast<size_t>(dirs) && !(dirs == 2 && names.size() == per)) {
    return ctx.Error("activations: ", names.size(), " functions given, expected ",
                     per * static_cast<size_t>(dirs), " (", per, " per direction)");
  }
  const std::span<const float> alphas = attrs.GetFloats("activation_alpha");
  const std::span<const float> betas = attrs.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const RnnActSpec* spec = nullptr;
    for (const RnnActSpec& s : kRnnActSpecs) {
      if (EqualsLower(name, s.name)) spec = &s;
    }
    if (spec == nullptr) return ctx.Error("activations: unknown function '", name, "'");
    RnnActivation act{spec->kind, spec->alpha, spec->beta};
    if (spec->params >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (spec->params >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    acts.push_back(act);
  }
  if (acts.size() < per * static_cast<size_t>(dirs)) {
    const std::vector<RnnActivation> first = acts;
    acts.insert(acts.end(), first.begin(), first.end());
  }
  return acts;
}

// ---------------------------------------------------------------------------------------------
// The kernel

struct RnnShape {
  RnnCell cell = RnnCell::kRnn;
  int64_t dirs = 1;
  bool reverse = false;  // direction = reverse (a bidirectional node's direction 1 always is)
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int64_t layout = 0;
  float clip = 0.0f;
  bool input_forget = false, lbr = false;
  std::vector<RnnActivation> acts;

  int64_t gates() const { return RnnGates(cell); }
  int64_t gate_width() const { return gates() * hidden; }  // one direction's XW columns
  int64_t xw_width() const { return dirs * gate_width(); }
  bool two_gemms() const { return cell == RnnCell::kGru && !lbr; }
};

// A matmul whose operands are re-pointed each run.
struct RnnGemm {
  DnnlCall call;
  int src = -1, weights = -1, bias = -1, dst = -1, scratchpad = -1;
  size_t scratchpad_offset = 0;
  size_t weights_offset = 0;  // floats into the node input, when the weights are not packed
};

struct RnnDirection {
  std::array<RnnGemm, 2> gemm;  // H·Rᵀ (GRU without lbr: z and r), then (r ⊙ H)·Rhᵀ
  std::unique_ptr<dnnl::stream> stream;  // for running beside the other direction
  size_t h = 0, c = 0, hr = 0, hr2 = 0, gates = 0, rh = 0;  // scratch offsets
};

// Input order of all three ops: X, W, R, B, sequence_lens, initial_h, then LSTM's initial_c, P.
constexpr size_t kInX = 0, kInW = 1, kInR = 2, kInB = 3, kInLens = 4, kInH0 = 5, kInC0 = 6,
                 kInP = 7;

// bias[N] (XW's, per direction Wb + Rb, GRU-lbr's h gate Wb only) and rbh[dirs × hidden] (GRU-lbr's
// h gate Rb) from B ([dirs, 2 × gates × hidden]; null: zeros).
void CombineBias(const RnnShape& g, const float* b, float* bias, float* rbh) {
  const int64_t gw = g.gate_width(), n = g.hidden;
  for (int64_t d = 0; d < g.dirs; ++d) {
    const float* wb = b == nullptr ? nullptr : b + d * 2 * gw;
    const float* rb = b == nullptr ? nullptr : wb + gw;
    for (int64_t k = 0; k < gw; ++k) {
      const bool apart = g.cell == RnnCell::kGru && g.lbr && k >= 2 * n;
      bias[d * gw + k] = b == nullptr ? 0.0f : wb[k] + (apart ? 0.0f : rb[k]);
      if (apart && rbh != nullptr) rbh[d * n + k - 2 * n] = b == nullptr ? 0.0f : rb[k];
    }
  }
}

// What the factory builds for a kernel: the matmuls, the combined bias when B is known, and
// where each buffer lies in the kernel's scratch.
struct RnnPlan {
  RnnGemm projection;  // XW = X · Wᵀ + bias
  std::array<RnnDirection, 2> dirs;
  std::vector<float> bias, rbh;  // from a constant or absent B (CombineBias)
  bool bias_in_scratch = false;  // B known only at run time: combined into scratch
  size_t xw = 0, bias_offset = 0, rbh_offset = 0;     // scratch offsets
  std::vector<std::shared_ptr<const Tensor>> packed;  // keeps packed W and R alive
};

// Whether the node has input `i` in this run (the span ends at the node's last input).
bool Present(const RunContext& ctx, size_t i) {
  return i < ctx.inputs.size() && ctx.inputs[i] != nullptr;
}

class RnnKernel final : public OpKernel {
 public:
  RnnKernel(std::string name, RnnShape shape, RnnPlan plan)
      : name_(std::move(name)), g_(std::move(shape)), p_(std::move(plan)) {}

  absl::Status Run(const RunContext& ctx) override {
    const int64_t n = g_.hidden, batch = g_.batch, seq = g_.seq, dirs = g_.dirs;
    std::byte* scratch = ctx.scratch;
    auto at = [scratch](size_t offset) { return reinterpret_cast<float*>(scratch + offset); };
    const int32_t* lens = Present(ctx, kInLens) ? ctx.in<int32_t>(kInLens) : nullptr;
    int64_t max_len = seq;
    if (lens != nullptr) {
      max_len = 0;
      for (int64_t b = 0; b < batch; ++b) {
        if (lens[b] < 0 || lens[b] > seq) {
          return absl::InvalidArgumentError(StrCat("node '", name_, "': sequence_lens[", b,
                                                   "] = ", lens[b], " is outside [0, ", seq, "]"));
        }
        max_len = std::max<int64_t>(max_len, lens[b]);
      }
    }
    const float* bias = p_.bias.data();
    const float* rbh = p_.rbh.data();
    if (p_.bias_in_scratch) {
      float* b = at(p_.bias_offset);
      float* r = at(p_.rbh_offset);
      CombineBias(g_, ctx.in<float>(kInB), b, r);
      bias = b;
      rbh = r;
    }
    float* xw = at(p_.xw);
    if (seq > 0) {
      RnnGemm& p = p_.projection;
      p.call.SetHandle(p.src, ctx.inputs[kInX]);
      if (p.weights >= 0) p.call.SetHandle(p.weights, ctx.inputs[kInW]);
      p.call.SetHandle(p.bias, bias);
      p.call.SetHandle(p.dst, xw);
      if (p.scratchpad >= 0) p.call.SetHandle(p.scratchpad, scratch + p.scratchpad_offset);
      BRIGADE_RETURN_IF_ERROR(p.call.Execute(*ctx.stream));
    }

    // Initial states, and the per-direction step template.
    std::array<RnnStep, 2> steps;
    for (int64_t d = 0; d < dirs; ++d) {
      RnnDirection& dir = p_.dirs[static_cast<size_t>(d)];
      float* h = at(dir.h);
      float* c = g_.cell == RnnCell::kLstm ? at(dir.c) : nullptr;
      InitState(ctx, kInH0, d, h);
      if (c != nullptr) InitState(ctx, kInC0, d, c);
      if (g_.two_gemms()) std::memset(at(dir.rh), 0, static_cast<size_t>(batch * n) * 4);
      RnnStep& s = steps[static_cast<size_t>(d)];
      s.cell = g_.cell;
      s.hidden = n;
      s.batch = batch;
      s.act = &g_.acts[static_cast<size_t>(d) * RnnActivationCount(g_.cell)];
      s.clip = g_.clip;
      s.input_forget = g_.input_forget;
      s.lbr = g_.lbr;
      s.peephole = Present(ctx, kInP) ? ctx.in<float>(kInP) + d * 3 * n : nullptr;
      s.rbh = rbh + d * n;
      s.hr = at(dir.hr);
      s.hr2 = g_.two_gemms() ? at(dir.hr2) : nullptr;
      s.h = h;
      s.c = c;
      s.gates = at(dir.gates);
      s.rh = g_.two_gemms() ? at(dir.rh) : nullptr;
      s.lens = lens;
      for (size_t k = 0; k < (g_.two_gemms() ? 2u : 1u); ++k) {
        RnnGemm& m = dir.gemm[k];
        m.call.SetHandle(m.src, k == 0 ? h : s.rh);
        m.call.SetHandle(m.dst, k == 0 ? s.hr : s.hr2);
        if (m.weights >= 0) m.call.SetHandle(m.weights, ctx.in<float>(kInR) + m.weights_offset);
        if (m.scratchpad >= 0) m.call.SetHandle(m.scratchpad, scratch + m.scratchpad_offset);
      }
    }
    float* y = ctx.outputs.size() > 0 ? ctx.out<float>(0) : nullptr;
    const RnnStepFn step_fn = RnnStepForCpu();
    auto run_direction = [&](int64_t d, dnnl::stream& stream) -> absl::Status {
      RnnDirection& dir = p_.dirs[static_cast<size_t>(d)];
      RnnStep s = steps[static_cast<size_t>(d)];
      const bool reverse = g_.reverse || d == 1;
      for (int64_t i = 0; i < seq; ++i) {
        const int64_t t = reverse ? seq - 1 - i : i;
        s.t = t;
        if (g_.layout == 0) {
          s.xw = xw + t * batch * g_.xw_width() + d * g_.gate_width();
          s.xw_stride = g_.xw_width();
          s.y = y == nullptr ? nullptr : y + (t * dirs + d) * batch * n;
          s.y_stride = n;
        } else {
          s.xw = xw + t * g_.xw_width() + d * g_.gate_width();
          s.xw_stride = seq * g_.xw_width();
          s.y = y == nullptr ? nullptr : y + (t * dirs + d) * n;
          s.y_stride = seq * dirs * n;
        }
        if (t >= max_len) {  // every row is past its length
          if (s.y != nullptr) {
            for (int64_t b = 0; b < batch; ++b) {
              std::memset(s.y + b * s.y_stride, 0, static_cast<size_t>(n) * sizeof(float));
            }
          }
          continue;
        }
        BRIGADE_RETURN_IF_ERROR(dir.gemm[0].call.Execute(stream));
        s.phase = 0;
        step_fn(s);
        if (g_.two_gemms()) {
          BRIGADE_RETURN_IF_ERROR(dir.gemm[1].call.Execute(stream));
          s.phase = 1;
          step_fn(s);
        }
      }
      return absl::OkStatus();
    };
    if (dirs == 2 && ctx.threads >= 2) {
      std::array<absl::Status, 2> status;
#pragma omp parallel for num_threads(2) schedule(static, 1)
      for (int d = 0; d < 2; ++d) {
        // The matmuls inside run on this thread alone (oneDNN sees a nested region anyway).
        omp_set_num_threads(1);
        status[static_cast<size_t>(d)] = run_direction(d, *p_.dirs[static_cast<size_t>(d)].stream);
      }
      BRIGADE_RETURN_IF_ERROR(status[0]);
      BRIGADE_RETURN_IF_ERROR(status[1]);
    } else {
      for (int64_t d = 0; d < dirs; ++d) BRIGADE_RETURN_IF_ERROR(run_direction(d, *ctx.stream));
    }

    // Y_h, Y_c: the final states.
    for (size_t k = 1; k < ctx.outputs.size(); ++k) {
      if (ctx.outputs[k] == nullptr) continue;
      float* out = ctx.out<float>(k);
      for (int64_t d = 0; d < dirs; ++d) {
        const RnnDirection& dir = p_.dirs[static_cast<size_t>(d)];
        const float* state = at(k == 1 ? dir.h : dir.c);
        for (int64_t b = 0; b < batch; ++b) {
          float* row = out + (g_.layout == 0 ? d * batch + b : b * dirs + d) * n;
          if (lens != nullptr && lens[b] == 0) {
            std::memset(row, 0, static_cast<size_t>(n) * sizeof(float));
          } else {
            std::memcpy(row, state + b * n, static_cast<size_t>(n) * sizeof(float));
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // The state of direction `d` from initial_h / initial_c (node input `input`), or zeros.
  void InitState(const RunContext& ctx, size_t input, int64_t d, float* state) const {
    const int64_t n = g_.hidden;
    const size_t row_bytes = static_cast<size_t>(n) * sizeof(float);
    if (!Present(ctx, input)) {
      std::memset(state, 0, static_cast<size_t>(g_.batch) * row_bytes);
      return;
    }
    const float* init = ctx.in<float>(input);
    for (int64_t b = 0; b < g_.batch; ++b) {
      const int64_t row = g_.layout == 0 ? d * g_.batch + b : b * g_.dirs + d;
      std::memcpy(state + b * n, init + row * n, row_bytes);
    }
  }

  const std::string name_;
  const RnnShape g_;
  RnnPlan p_;
};

// Reserves `floats` floats at the end of ctx's scratch; returns the byte offset.
size_t ReserveFloats(KernelContext& ctx, int64_t floats) {
  const size_t offset = AlignScratch(ctx.scratch_bytes);
  ctx.scratch_bytes = offset + static_cast<size_t>(floats) * sizeof(float);
  return offset;
}

// A matmul [m, k] · [k, n_cols] + optional [1, n_cols] bias into a plain [m, n_cols] buffer, whose
// weights are the transpose of `n_cols` rows of `k` floats starting `row0` rows into node input
// `input`: packed once when the input is constant, else read through strides each run.
absl::Status BuildGemm(KernelContext& ctx, size_t input, int64_t row0, int64_t m, int64_t k,
                       int64_t n_cols, bool with_bias, const std::string& key, RnnGemm* gemm,
                       std::vector<std::shared_ptr<const Tensor>>* packed) {
  using dt = dnnl::memory::data_type;
  const ValueInfo& w = ctx.input(input);
  const dnnl::memory::desc src({m, k}, dt::f32, dnnl::memory::dims{k, 1});
  const dnnl::memory::desc w_plain({k, n_cols}, dt::f32, dnnl::memory::dims{1, k});
  const dnnl::memory::desc bias({1, n_cols}, dt::f32, dnnl::memory::dims{n_cols, 1});
  const dnnl::memory::desc dst({m, n_cols}, dt::f32, dnnl::memory::dims{n_cols, 1});
  const bool pack = w.constant != nullptr;
  dnnl::matmul::primitive_desc pd;
  BRIGADE_RETURN_IF_ERROR(CatchDnnl(ctx, "matmul", [&] {
    const dnnl::memory::desc w_desc =
        pack ? dnnl::memory::desc({k, n_cols}, dt::f32, dnnl::memory::format_tag::any) : w_plain;
    const dnnl::primitive_attr attr = UserScratchpadAttr();
    pd = with_bias ? dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, w_desc, bias, dst), attr,
                                                  *ctx.engine)
                   : dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, w_desc, dst), attr,
                                                  *ctx.engine);
    gemm->call.set_primitive(dnnl::matmul(pd));
  }));
  gemm->src = gemm->call.AddArg(DNNL_ARG_SRC, src, *ctx.engine);
  if (pack) {
    const dnnl::memory::desc packed_desc = pd.weights_desc();
    const float* source = w.constant->values<float>().data() + row0 * k;
    BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const Tensor> buffer,
                             PackConstant(ctx, key, w_plain, source, packed_desc));
    gemm->call.AddArg(DNNL_ARG_WEIGHTS, packed_desc, *ctx.engine, buffer->data());
    packed->push_back(std::move(buffer));
  } else {
    gemm->weights = gemm->call.AddArg(DNNL_ARG_WEIGHTS, w_plain, *ctx.engine);
    gemm->weights_offset = static_cast<size_t>(row0 * k);
  }
  if (with_bias) gemm->bias = gemm->call.AddArg(DNNL_ARG_BIAS, bias, *ctx.engine);
  gemm->dst = gemm->call.AddArg(DNNL_ARG_DST, dst, *ctx.engine);
  gemm->scratchpad = AddScratchpad(pd, ctx, gemm->call, &gemm->scratchpad_offset);
  return absl::OkStatus();
}

// INVALID_ARGUMENT unless input `i` (named `what`) is absent or has exactly `shape`.
absl::Status ExpectShape(const KernelContext& ctx, size_t i, std::string_view what,
                         const Shape& shape, std::string_view meaning) {
  if (!ctx.has_input(i) || ctx.input(i).shape == shape) return absl::OkStatus();
  return ctx.Error(what, ": shape ", ShapeToString(ctx.input(i).shape), ", expected ",
                   ShapeToString(shape), " (", meaning, ")");
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateRnnKernel(KernelContext& ctx, RnnCell cell) {
  const AttributeMap& attrs = ctx.node->attributes;
  const bool lstm = cell == RnnCell::kLstm;
  if (!ctx.has_input(kInX) || !ctx.has_input(kInW) || !ctx.has_input(kInR)) {
    return ctx.Error("X, W and R are required");
  }
  if (ctx.num_inputs() > (lstm ? 8u : 6u)) return ctx.Error("too many inputs");
  if (ctx.outputs.size() > (lstm ? 3u : 2u)) return ctx.Error("too many outputs");
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const DataType want = i == kInLens ? DataType::kInt32 : DataType::kFp32;
    if (ctx.input(i).dtype != want) {
      if (i == kInLens) return ctx.Error("sequence_lens must be int32");
      return ctx.Unsupported("element type ", DataTypeName(ctx.input(i).dtype), " (fp32 only)");
    }
  }

  RnnShape g;
  g.cell = cell;
  const std::string direction = attrs.GetString("direction", "forward");
  if (direction == "bidirectional") {
    g.dirs = 2;
  } else if (direction == "reverse") {
    g.reverse = true;
  } else if (direction != "forward") {
    return ctx.Error("direction: '", direction, "' is not forward, reverse or bidirectional");
  }
  g.layout = attrs.GetInt("layout", 0);
  if (g.layout != 0 && g.layout != 1) return ctx.Error("layout: ", g.layout, " is not 0 or 1");
  if (attrs.Has("clip")) {
    g.clip = attrs.GetFloat("clip", 0.0f);
    if (!(g.clip > 0.0f)) return ctx.Error("clip: ", g.clip, " is not a positive threshold");
  }
  const int64_t input_forget = attrs.GetInt("input_forget", 0);
  if (input_forget != 0 && input_forget != 1) {
    return ctx.Error("input_forget: ", input_forget, " is not 0 or 1");
  }
  g.input_forget = lstm && input_forget == 1;
  const int64_t lbr = attrs.GetInt("linear_before_reset", 0);
  if (lbr != 0 && lbr != 1) return ctx.Error("linear_before_reset: ", lbr, " is not 0 or 1");
  g.lbr = cell == RnnCell::kGru && lbr == 1;

  const Shape& x = ctx.input(kInX).shape;
  const Shape& w = ctx.input(kInW).shape;
  const Shape& r = ctx.input(kInR).shape;
  if (x.size() != 3) return ctx.Error("X: rank ", x.size(), ", expected 3");
  if (w.size() != 3) return ctx.Error("W: rank ", w.size(), ", expected 3");
  if (r.size() != 3) return ctx.Error("R: rank ", r.size(), ", expected 3");
  g.seq = g.layout == 0 ? x[0] : x[1];
  g.batch = g.layout == 0 ? x[1] : x[0];
  g.input = x[2];
  if (attrs.Has("hidden_size")) {
    g.hidden = attrs.GetInt("hidden_size", 0);
    if (g.hidden < 1 || g.hidden > kMaxRnnHidden) {
      return ctx.Error("hidden_size: ", g.hidden, " is outside [1, ", kMaxRnnHidden, "]");
    }
    if (r[2] != g.hidden) {
      return ctx.Error("hidden_size: ", g.hidden, " does not match R's shape ", ShapeToString(r));
    }
  } else {
    g.hidden = r[2];
    if (g.hidden < 1 || g.hidden > kMaxRnnHidden) {
      return ctx.Error("R: hidden size ", g.hidden, " (its last dimension) is outside [1, ",
                       kMaxRnnHidden, "]");
    }
  }
  if (g.input < 1) return ctx.Unsupported("X: input_size ", g.input, " (an empty feature axis)");
  const int64_t dirs = g.dirs, n = g.hidden, gw = g.gate_width();
  if (w[0] != dirs || w[1] != gw || w[2] != g.input) {
    return ctx.Error(attrs.Has("hidden_size") && w[1] != gw ? "hidden_size: W" : "W", ": shape ",
                     ShapeToString(w), ", expected [", dirs, ", ", gw, ", ", g.input,
                     "] (num_directions, ", g.gates(), " × hidden_size, input_size of X)");
  }
  BRIGADE_RETURN_IF_ERROR(ExpectShape(ctx, kInR, "R", Shape{dirs, gw, n},
                                      "num_directions, gates × hidden_size, hidden_size"));
  BRIGADE_RETURN_IF_ERROR(
      ExpectShape(ctx, kInB, "B", Shape{dirs, 2 * gw}, "num_directions, 2 × gates × hidden_size"));
  BRIGADE_RETURN_IF_ERROR(ExpectShape(ctx, kInLens, "sequence_lens", Shape{g.batch}, "batch_size"));
  const Shape state = g.layout == 0 ? Shape{dirs, g.batch, n} : Shape{g.batch, dirs, n};
  const std::string_view state_meaning = g.layout == 0
                                             ? "num_directions, batch_size, hidden_size"
                                             : "batch_size, num_directions, hidden_size (layout 1)";
  BRIGADE_RETURN_IF_ERROR(ExpectShape(ctx, kInH0, "initial_h", state, state_meaning));
  if (lstm) {
    BRIGADE_RETURN_IF_ERROR(ExpectShape(ctx, kInC0, "initial_c", state, state_meaning));
    BRIGADE_RETURN_IF_ERROR(
        ExpectShape(ctx, kInP, "P", Shape{dirs, 3 * n}, "num_directions, 3 × hidden_size"));
  }
  BRIGADE_ASSIGN_OR_RETURN(g.acts, ParseActivations(ctx, cell, dirs));

  const Shape y = g.layout == 0 ? Shape{g.seq, dirs, g.batch, n} : Shape{g.batch, g.seq, dirs, n};
  for (size_t k = 0; k < ctx.outputs.size(); ++k) {
    if (ctx.output_used[k]) ctx.SetOutput(k, DataType::kFp32, k == 0 ? y : state);
  }
  BRIGADE_RETURN_IF_ERROR(CheckOutputSizes(ctx));
  // XW, the largest scratch buffer; the rest are a few rows per direction.
  BRIGADE_RETURN_IF_ERROR(CheckShapeSize(ctx, Shape{g.seq, g.batch, g.xw_width()}));
  if (ctx.shape_only) return std::unique_ptr<OpKernel>();

  RnnPlan plan;
  // Every output is empty: the planner never runs the kernel, which needs no matmuls.
  if (g.batch == 0) return std::make_unique<RnnKernel>(ctx.node->name, g, std::move(plan));
  const ValueInfo* b_info = ctx.has_input(kInB) ? &ctx.input(kInB) : nullptr;
  if (b_info != nullptr && b_info->constant == nullptr) {
    plan.bias_in_scratch = true;
    plan.bias_offset = ReserveFloats(ctx, g.xw_width());
    plan.rbh_offset = ReserveFloats(ctx, dirs * n);
  } else {
    plan.bias.resize(static_cast<size_t>(g.xw_width()));
    plan.rbh.resize(static_cast<size_t>(dirs * n));
    CombineBias(g, b_info == nullptr ? nullptr : b_info->constant->values<float>().data(),
                plan.bias.data(), plan.rbh.data());
  }
  plan.xw = ReserveFloats(ctx, g.seq * g.batch * g.xw_width());
  const std::string& name = ctx.node->name;
  if (g.seq > 0) {
    BRIGADE_RETURN_IF_ERROR(BuildGemm(ctx, kInW, 0, g.seq * g.batch, g.input, g.xw_width(), true,
                                      StrCat(name, "/W"), &plan.projection, &plan.packed));
  }
  for (int64_t d = 0; d < dirs; ++d) {
    RnnDirection& dir = plan.dirs[static_cast<size_t>(d)];
    dir.h = ReserveFloats(ctx, g.batch * n);
    dir.c = ReserveFloats(ctx, lstm ? g.batch * n : 0);
    dir.gates = ReserveFloats(ctx, g.batch * gw);
    if (g.two_gemms()) {
      dir.hr = ReserveFloats(ctx, g.batch * 2 * n);
      dir.hr2 = ReserveFloats(ctx, g.batch * n);
      dir.rh = ReserveFloats(ctx, g.batch * n);
      BRIGADE_RETURN_IF_ERROR(BuildGemm(ctx, kInR, d * gw, g.batch, n, 2 * n, false,
                                        StrCat(name, "/R", d, "zr"), &dir.gemm[0], &plan.packed));
      BRIGADE_RETURN_IF_ERROR(BuildGemm(ctx, kInR, d * gw + 2 * n, g.batch, n, n, false,
                                        StrCat(name, "/R", d, "h"), &dir.gemm[1], &plan.packed));
    } else {
      dir.hr = ReserveFloats(ctx, g.batch * gw);
      BRIGADE_RETURN_IF_ERROR(BuildGemm(ctx, kInR, d * gw, g.batch, n, gw, false,
                                        StrCat(name, "/R", d), &dir.gemm[0], &plan.packed));
    }
    if (dirs == 2) {
      BRIGADE_RETURN_IF_ERROR(CatchDnnl(
          ctx, "stream", [&] { dir.stream = std::make_unique<dnnl::stream>(*ctx.engine); }));
    }
  }
  return std::make_unique<RnnKernel>(ctx.node->name, std::move(g), std::move(plan));
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateLstm(KernelContext& ctx) {
  return CreateRnnKernel(ctx, RnnCell::kLstm);
}
absl::StatusOr<std::unique_ptr<OpKernel>> CreateGru(KernelContext& ctx) {
  return CreateRnnKernel(ctx, RnnCell::kGru);
}
absl::StatusOr<std::unique_ptr<OpKernel>> CreateSimpleRnn(KernelContext& ctx) {
  return CreateRnnKernel(ctx, RnnCell::kRnn);
}

}  // namespace

void RegisterRnnKernels(KernelRegistry* registry) {
  // Versions 7 and 14 (14 adds `layout`); the engine loads no opset below 7.
  for (const auto& [op, create] : {std::pair{"LSTM", &CreateLstm}, std::pair{"GRU", &CreateGru},
                                   std::pair{"RNN", &CreateSimpleRnn}}) {
    KernelDef def;
    def.op_type = op;
    def.since_version = 7;
    def.create = create;
    registry->Add(def);
  }
}

}  // namespace brigade::engine::onnx
