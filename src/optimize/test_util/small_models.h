#ifndef BRIGADE_OPTIMIZE_TEST_UTIL_SMALL_MODELS_H_
#define BRIGADE_OPTIMIZE_TEST_UTIL_SMALL_MODELS_H_

// Test support of src/optimize: a two-layer classifier and its pruned twin, for the gate's and
// the prune job's tests.
//
//   Mlp reference = Mlp::Prunable();        // 8 → 6 → 3, hidden units 4 and 5 feed nothing
//   Mlp pruned = reference.FirstHidden(4);  // 8 → 4 → 3, the same outputs on every input
//
// The reference's w2 rows of the hidden units past `keep` are zero, so cutting them is a pruning
// that loses no accuracy by construction. Not for production code.
//
// Thread safety: values; free functions.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "engine/onnx/test_util/onnx_builder.h"

namespace brigade::optimize::test_util {

inline Tensor Values(std::vector<int64_t> shape, const std::vector<float>& v) {
  return *Tensor::FromValues<float>(Shape(shape.begin(), shape.end()), std::span<const float>(v));
}

// x [-1, 8] → Gemm "fc1" (w1 [8, hidden], b1) → Relu → Gemm "fc2" (w2 [hidden, classes], b2) → y.
struct Mlp {
  Tensor w1, b1, w2, b2;

  static Mlp Prunable(int64_t keep = 4) {
    using engine::onnx::RandomTensor;
    const Tensor random = RandomTensor({6, 3}, 3);
    std::vector<float> w2(random.values<float>().begin(), random.values<float>().end());
    std::fill(w2.begin() + keep * 3, w2.end(), 0.0f);
    return {RandomTensor({8, 6}, 1), RandomTensor({6}, 2), Values({6, 3}, w2),
            RandomTensor({3}, 4)};
  }

  // Random weights unrelated to Prunable's, `hidden` wide.
  static Mlp Random(int64_t hidden, int64_t classes, uint32_t seed) {
    using engine::onnx::RandomTensor;
    return {RandomTensor({8, hidden}, seed), RandomTensor({hidden}, seed + 1),
            RandomTensor({hidden, classes}, seed + 2), RandomTensor({classes}, seed + 3)};
  }

  // The first `keep` hidden units only.
  Mlp FirstHidden(int64_t keep) const {
    const std::span<const float> v = w1.values<float>();
    const int64_t rows = w1.shape()[0], cols = w1.shape()[1];
    std::vector<float> narrow;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < keep; ++c) narrow.push_back(v[static_cast<size_t>(r * cols + c)]);
    }
    const std::span<const float> bias = b1.values<float>();
    return {Values({rows, keep}, narrow),
            Values({keep}, std::vector<float>(bias.begin(), bias.begin() + keep)),
            *w2.SliceRows(0, keep), b2};
  }

  std::string Serialize() const {
    engine::onnx::OnnxBuilder b;
    b.Input("x", DataType::kFp32, {-1, 8});
    b.Initializer("w1", w1);
    b.Initializer("b1", b1);
    b.Initializer("w2", w2);
    b.Initializer("b2", b2);
    b.Node("Gemm", {"x", "w1", "b1"}, {"h"}).set_name("fc1");
    b.Node("Relu", {"h"}, {"r"});
    b.Node("Gemm", {"r", "w2", "b2"}, {"y"}).set_name("fc2");
    b.Output("y", DataType::kFp32, {-1, w2.shape()[1]});
    return b.Serialize();
  }
};

}  // namespace brigade::optimize::test_util

#endif  // BRIGADE_OPTIMIZE_TEST_UTIL_SMALL_MODELS_H_
