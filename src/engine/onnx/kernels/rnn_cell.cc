#include "engine/onnx/kernels/rnn_cell.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "engine/onnx/kernels/cpu_isa.h"

namespace brigade::engine::onnx {
namespace {

// exp(x) to about 2 ulp, written so that GCC vectorises a loop of it (no libm call): clamped to
// the range where 2^n stays a normal float, n = round(x / ln 2) by the 1.5·2^23 trick,
// r = x - n·ln 2 in two parts, e^r by a degree-6 polynomial (the classic Cephes expf one), and
// 2^n put straight into the exponent bits.
__attribute__((always_inline)) inline float RnnExp(float x) {
  x = std::min(std::max(x, -87.3f), 88.3f);
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}

__attribute__((always_inline)) inline float RnnSigmoid(float x) {
  return 1.0f / (1.0f + RnnExp(-x));
}

// tanh: 1 - 2 / (e^{2|x|} + 1) with x's sign, which loses relative precision near 0, so below
// |x| = 0.625 an odd polynomial (Cephes tanhf's) takes over; both are computed and one selected,
// which keeps the loop branch-free.
__attribute__((always_inline)) inline float RnnTanh(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  const float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
                        1.33314422036e-1f) *
                           z -
                       3.33332819422e-1f) *
                          z * x +
                      x;
  const float large = std::copysign(1.0f - 2.0f / (RnnExp(2.0f * a) + 1.0f), x);
  return a < 0.625f ? small : large;
}

// x[0, n) = act(x[0, n)). The switch sits outside the loops so each loop vectorises.
__attribute__((always_inline)) inline void RnnActivate(const RnnActivation& act, float* x,
                                                       int64_t n) {
  const float alpha = act.alpha, beta = act.beta;
  switch (act.kind) {
    case RnnAct::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);
      break;
    case RnnAct::kTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = RnnTanh(x[i]);
      break;
    case RnnAct::kSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = RnnSigmoid(x[i]);
      break;
    case RnnAct::kAffine:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
      break;
    case RnnAct::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : alpha * x[i];
      break;
    case RnnAct::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : 0.0f;
      break;
    case RnnAct::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * RnnTanh(beta * x[i]);
      break;
    case RnnAct::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(alpha * x[i] + beta, 0.0f), 1.0f);
      break;
    case RnnAct::kElu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : alpha * (RnnExp(x[i]) - 1.0f);
      break;
    case RnnAct::kSoftsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::fabs(x[i]));
      break;
    case RnnAct::kSoftplus:
      // log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
      for (int64_t i = 0; i < n; ++i) {
        x[i] = std::max(x[i], 0.0f) + std::log1p(std::exp(-std::fabs(x[i])));
      }
      break;
  }
}

__attribute__((always_inline)) inline void RnnClip(float clip, float* x, int64_t n) {
  if (clip <= 0.0f) return;
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], -clip), clip);
}

__attribute__((always_inline)) inline void LstmRow(const RnnStep& s, const float* xw,
                                                   const float* hr, float* h, float* c, float* g,
                                                   float* y) {
  const int64_t n = s.hidden;
  float* gi = g;
  float* go = g + n;
  float* gf = g + 2 * n;
  float* gc = g + 3 * n;
  for (int64_t j = 0; j < 4 * n; ++j) g[j] = xw[j] + hr[j];
  if (s.peephole != nullptr) {
    const float* pi = s.peephole;
    const float* pf = s.peephole + 2 * n;
    for (int64_t j = 0; j < n; ++j) {
      gi[j] += pi[j] * c[j];
      gf[j] += pf[j] * c[j];
    }
  }
  RnnClip(s.clip, gi, n);
  RnnClip(s.clip, gf, n);
  RnnClip(s.clip, gc, n);
  RnnActivate(s.act[0], gi, n);
  RnnActivate(s.act[1], gc, n);
  if (s.input_forget) {
    for (int64_t j = 0; j < n; ++j) gf[j] = 1.0f - gi[j];
  } else {
    RnnActivate(s.act[0], gf, n);
  }
  for (int64_t j = 0; j < n; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
  // The output gate's peephole reads the new cell state.
  if (s.peephole != nullptr) {
    const float* po = s.peephole + n;
    for (int64_t j = 0; j < n; ++j) go[j] += po[j] * c[j];
  }
  RnnClip(s.clip, go, n);
  RnnActivate(s.act[0], go, n);
  for (int64_t j = 0; j < n; ++j) gc[j] = c[j];
  RnnActivate(s.act[2], gc, n);
  for (int64_t j = 0; j < n; ++j) h[j] = go[j] * gc[j];
  if (y != nullptr) std::memcpy(y, h, static_cast<size_t>(n) * sizeof(float));
}

// GRU, z and r (both directions of linear_before_reset).
__attribute__((always_inline)) inline void GruResetUpdate(const RnnStep& s, const float* xw,
                                                          const float* hr, float* g) {
  const int64_t n2 = 2 * s.hidden;
  for (int64_t j = 0; j < n2; ++j) g[j] = xw[j] + hr[j];
  RnnClip(s.clip, g, n2);
  RnnActivate(s.act[0], g, n2);
}

// GRU, H = (1 - z) ⊙ candidate + z ⊙ H_{t-1}, the candidate's pre-activation in g[2n, 3n).
__attribute__((always_inline)) inline void GruFinish(const RnnStep& s, float* h, float* g,
                                                     float* y) {
  const int64_t n = s.hidden;
  const float* gz = g;
  float* gh = g + 2 * n;
  RnnClip(s.clip, gh, n);
  RnnActivate(s.act[1], gh, n);
  for (int64_t j = 0; j < n; ++j) h[j] = (1.0f - gz[j]) * gh[j] + gz[j] * h[j];
  if (y != nullptr) std::memcpy(y, h, static_cast<size_t>(n) * sizeof(float));
}

__attribute__((always_inline)) inline void RnnStepBody(const RnnStep& s) {
  const int64_t n = s.hidden;
  const int64_t gates = RnnGates(s.cell);
  const bool last_phase = !(s.cell == RnnCell::kGru && !s.lbr && s.phase == 0);
  for (int64_t b = 0; b < s.batch; ++b) {
    float* y = s.y == nullptr ? nullptr : s.y + b * s.y_stride;
    if (s.lens != nullptr && s.t >= s.lens[b]) {
      if (y != nullptr && last_phase) std::memset(y, 0, static_cast<size_t>(n) * sizeof(float));
      continue;
    }
    const float* xw = s.xw + b * s.xw_stride;
    float* h = s.h + b * n;
    float* g = s.gates + b * gates * n;
    switch (s.cell) {
      case RnnCell::kLstm:
        LstmRow(s, xw, s.hr + b * 4 * n, h, s.c + b * n, g, y);
        break;
      case RnnCell::kGru:
        if (s.lbr) {
          const float* hr = s.hr + b * 3 * n;
          GruResetUpdate(s, xw, hr, g);
          const float* gr = g + n;
          float* gh = g + 2 * n;
          for (int64_t j = 0; j < n; ++j) {
            gh[j] = xw[2 * n + j] + gr[j] * (hr[2 * n + j] + s.rbh[j]);
          }
          GruFinish(s, h, g, y);
        } else if (s.phase == 0) {
          GruResetUpdate(s, xw, s.hr + b * 2 * n, g);
          const float* gr = g + n;
          float* rh = s.rh + b * n;
          for (int64_t j = 0; j < n; ++j) rh[j] = gr[j] * h[j];
        } else {
          const float* hr2 = s.hr2 + b * n;
          float* gh = g + 2 * n;
          for (int64_t j = 0; j < n; ++j) gh[j] = xw[2 * n + j] + hr2[j];
          GruFinish(s, h, g, y);
        }
        break;
      case RnnCell::kRnn:
        for (int64_t j = 0; j < n; ++j) g[j] = xw[j] + s.hr[b * n + j];
        RnnClip(s.clip, g, n);
        RnnActivate(s.act[0], g, n);
        std::memcpy(h, g, static_cast<size_t>(n) * sizeof(float));
        if (y != nullptr) std::memcpy(y, g, static_cast<size_t>(n) * sizeof(float));
        break;
    }
  }
}

__attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"))) void RnnStepAvx512(const RnnStep& s) {
  RnnStepBody(s);
}

__attribute__((target("avx2,fma"))) void RnnStepAvx2(const RnnStep& s) { RnnStepBody(s); }

void RnnStepBaseline(const RnnStep& s) { RnnStepBody(s); }

}  // namespace

RnnStepFn RnnStepForCpu() {
  switch (LoopIsaForCpu()) {
    case LoopIsa::kAvx512:
      return &RnnStepAvx512;
    case LoopIsa::kAvx2:
      return &RnnStepAvx2;
    default:
      return &RnnStepBaseline;
  }
}

}  // namespace brigade::engine::onnx
