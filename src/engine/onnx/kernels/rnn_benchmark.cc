// Brigade's LSTM / GRU kernel (kernels/rnn.cc) against oneDNN 2.6's own RNN primitives
// (lstm_forward, lbr_gru_forward) on one layer of the bench models lstm_seq / gru_seq: 64 steps,
// hidden 256, bidirectional, input 128 (their first layer) or 512 (their second), batch 1 and 8,
// 1 and 2 threads. The measurement behind rnn.cc's choice of its own path; printed, not
// asserted.
//
//   ninja -C build onnx_rnn_benchmark
//   GOMP_SPINCOUNT=10000 build/src/engine/onnx/onnx_rnn_benchmark --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true    (one line)
//
// Arguments of each benchmark: cell (0 LSTM, 1 GRU with linear_before_reset), batch, input
// size, threads. oneDNN's primitive runs with its weights already in the layout it chose and
// its scratchpad allocated once, as the engine would hold them.

#include <omp.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "benchmark/benchmark.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/test_util/onnx_builder.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace brigade::engine::onnx {
namespace {

constexpr int64_t kSteps = 64, kHidden = 256;

void BM_BrigadeLayer(benchmark::State& state) {
  const bool lstm = state.range(0) == 0;
  const int64_t batch = state.range(1), input = state.range(2), gates = lstm ? 4 : 3;
  OnnxBuilder b;
  b.Input("x", DataType::kFp32, {kSteps, batch, input});
  b.Initializer("w", RandomTensor({2, gates * kHidden, input}, 1));
  b.Initializer("r", RandomTensor({2, gates * kHidden, kHidden}, 2));
  b.Initializer("b", RandomTensor({2, 2 * gates * kHidden}, 3));
  auto& node = b.Node(lstm ? "LSTM" : "GRU", {"x", "w", "r", "b"}, {"y"});
  OnnxBuilder::SetInt(node, "hidden_size", kHidden);
  OnnxBuilder::SetString(node, "direction", "bidirectional");
  if (!lstm) OnnxBuilder::SetInt(node, "linear_before_reset", 1);
  b.Output("y", DataType::kFp32, {kSteps, 2, batch, kHidden});
  auto loaded = LoadOnnxBytes(b.Serialize(), "");
  if (!loaded.ok()) return state.SkipWithError(std::string(loaded.status().message()).c_str());
  auto compiled = CompiledModel::Compile("rnn", std::move(loaded->graph));
  if (!compiled.ok()) return state.SkipWithError(std::string(compiled.status().message()).c_str());
  Session::Options options;
  options.threads = static_cast<int>(state.range(3));
  auto session = Session::Create(*compiled, options);
  if (!session.ok()) return state.SkipWithError(std::string(session.status().message()).c_str());
  const std::vector<Tensor> inputs{RandomTensor({kSteps, batch, input}, 4)};
  std::vector<Tensor> outputs;
  for (auto _ : state) {
    const absl::Status status = (*session)->Run(inputs, &outputs);
    if (!status.ok()) return state.SkipWithError(std::string(status.message()).c_str());
  }
}

void BM_DnnlLayer(benchmark::State& state) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const bool lstm = state.range(0) == 0;
  const int64_t batch = state.range(1), input = state.range(2), gates = lstm ? 4 : 3;
  omp_set_num_threads(static_cast<int>(state.range(3)));
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc src({kSteps, batch, input}, dt::f32, tag::tnc);
  const dnnl::memory::desc dst({kSteps, batch, 2 * kHidden}, dt::f32, tag::tnc);
  const dnnl::memory::desc w_layer({1, 2, input, gates, kHidden}, dt::f32, tag::any);
  const dnnl::memory::desc w_iter({1, 2, kHidden, gates, kHidden}, dt::f32, tag::any);
  // linear_before_reset GRU has a fourth bias row (Rb of the candidate).
  const dnnl::memory::desc bias({1, 2, lstm ? gates : gates + 1, kHidden}, dt::f32, tag::ldgo);
  const dnnl::memory::desc iter({1, 2, batch, kHidden}, dt::f32, tag::ldnc);
  dnnl::primitive primitive;
  dnnl::memory::desc w_layer_desc, w_iter_desc, scratchpad_desc;
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto dir = dnnl::rnn_direction::bidirectional_concat;
  if (lstm) {
    const dnnl::lstm_forward::primitive_desc pd(
        dnnl::lstm_forward::desc(prop, dir, src, iter, iter, w_layer, w_iter, bias, dst, iter,
                                 iter),
        engine);
    primitive = dnnl::lstm_forward(pd);
    w_layer_desc = pd.weights_layer_desc();
    w_iter_desc = pd.weights_iter_desc();
    scratchpad_desc = pd.scratchpad_desc();
    state.SetLabel(pd.impl_info_str());
  } else {
    const dnnl::lbr_gru_forward::primitive_desc pd(
        dnnl::lbr_gru_forward::desc(prop, dir, src, iter, w_layer, w_iter, bias, dst, iter),
        engine);
    primitive = dnnl::lbr_gru_forward(pd);
    w_layer_desc = pd.weights_layer_desc();
    w_iter_desc = pd.weights_iter_desc();
    scratchpad_desc = pd.scratchpad_desc();
    state.SetLabel(pd.impl_info_str());
  }
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC_LAYER, dnnl::memory(src, engine)},
      {DNNL_ARG_SRC_ITER, dnnl::memory(iter, engine)},
      {DNNL_ARG_WEIGHTS_LAYER, dnnl::memory(w_layer_desc, engine)},
      {DNNL_ARG_WEIGHTS_ITER, dnnl::memory(w_iter_desc, engine)},
      {DNNL_ARG_BIAS, dnnl::memory(bias, engine)},
      {DNNL_ARG_DST_LAYER, dnnl::memory(dst, engine)},
      {DNNL_ARG_DST_ITER, dnnl::memory(iter, engine)},
      {DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad_desc, engine)}};
  if (lstm) {
    args[DNNL_ARG_SRC_ITER_C] = dnnl::memory(iter, engine);
    args[DNNL_ARG_DST_ITER_C] = dnnl::memory(iter, engine);
  }
  // Small values everywhere (the timing does not depend on them; NaN-free inputs keep it so).
  for (auto& [arg, memory] : args) {
    auto* data = static_cast<float*>(memory.get_data_handle());
    const size_t count = memory.get_desc().get_size() / sizeof(float);
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(i % 17) * 0.01f - 0.08f;
  }
  for (auto _ : state) {
    primitive.execute(stream, args);
    stream.wait();
  }
}

void Configurations(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    for (int64_t cell : {0, 1}) {
      for (int64_t batch : {1, 8}) {
        for (int64_t input : {128, 512}) b->Args({cell, batch, input, threads});
      }
    }
  }
  b->ArgNames({"cell", "batch", "input", "threads"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_BrigadeLayer)->Apply(Configurations);
BENCHMARK(BM_DnnlLayer)->Apply(Configurations);

}  // namespace
}  // namespace brigade::engine::onnx

BENCHMARK_MAIN();
