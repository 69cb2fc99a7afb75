#ifndef BRIGADE_ENGINE_ONNX_KERNELS_RNN_CELL_H_
#define BRIGADE_ENGINE_ONNX_KERNELS_RNN_CELL_H_

// The gate math of LSTM, GRU and RNN (kernels/rnn.cc) for one time step of one direction: the
// activations ONNX names, clip, peepholes, input_forget, linear_before_reset and sequence_lens,
// as vectorised loops over the hidden units built for AVX-512, AVX2 and the baseline and picked
// once for this CPU (cpu_isa.h's LoopIsaForCpu). The matmuls around it (X·Wᵀ, H·Rᵀ) are rnn.cc's.
//
// Thread safety: RnnStepForCpu() is computed once; a step function touches only the buffers its
// RnnStep names. Ownership: RnnStep borrows every pointer for the call. Failure: none (the
// factory in rnn.cc validates shapes and attributes before any step runs).

#include <cstddef>
#include <cstdint>

namespace brigade::engine::onnx {

enum class RnnCell { kRnn, kGru, kLstm };

inline int64_t RnnGates(RnnCell cell) {
  return cell == RnnCell::kLstm ? 4 : cell == RnnCell::kGru ? 3 : 1;
}
// Activations per direction: f (RNN); f, g (GRU); f, g, h (LSTM).
inline size_t RnnActivationCount(RnnCell cell) {
  return cell == RnnCell::kLstm ? 3 : cell == RnnCell::kGru ? 2 : 1;
}

// Activation functions, as RNN ops name them (alpha and beta where the function takes them).
enum class RnnAct {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct RnnActivation {
  RnnAct kind = RnnAct::kTanh;
  float alpha = 0.0f, beta = 0.0f;
};

// One time step of one direction.
struct RnnStep {
  RnnCell cell = RnnCell::kRnn;
  int64_t hidden = 0, batch = 0;
  const RnnActivation* act = nullptr;  // this direction's f, g, h
  float clip = 0.0f;                   // > 0: pre-activations clipped to [-clip, clip]
  bool input_forget = false;           // LSTM: f = 1 - i
  bool lbr = false;                    // GRU: linear_before_reset
  const float* peephole = nullptr;     // LSTM: this direction's P (i, o, f), or null
  const float* rbh = nullptr;          // GRU with lbr: Rb of the h gate
  // This step's XW rows (bias included), this direction's columns, `xw_stride` apart.
  const float* xw = nullptr;
  int64_t xw_stride = 0;
  const float* hr =
      nullptr;  // H_{t-1} · Rᵀ, [batch, gates × hidden] ([batch, 2 hidden]: GRU, no lbr)
  const float* hr2 = nullptr;  // GRU without lbr: (r ⊙ H_{t-1}) · Rhᵀ, [batch, hidden]
  float* h = nullptr;          // state, [batch, hidden], updated in place
  float* c = nullptr;          // LSTM cell state, [batch, hidden]
  float* gates = nullptr;      // work, [batch, gates × hidden]
  float* rh = nullptr;         // GRU without lbr: r ⊙ H_{t-1}, [batch, hidden]
  float* y = nullptr;          // this step's Y rows, `y_stride` apart, or null
  int64_t y_stride = 0;
  const int32_t* lens = nullptr;  // sequence_lens, or null
  int64_t t = 0;
  int phase = 0;  // GRU without lbr: 0 = z, r and r ⊙ H; 1 = the candidate and H
};

using RnnStepFn = void (*)(const RnnStep&);

// The step function for this CPU's widest vector unit.
RnnStepFn RnnStepForCpu();

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_KERNELS_RNN_CELL_H_
