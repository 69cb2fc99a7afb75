// Latency of one Execute() through the TorchScript backend on the bundled Fashion-MNIST models,
// by batch size and intra-op threads, optionally with a competing busy thread (what another
// instance, the server's I/O threads or a build do to OpenMP's spinning workers).
//
//   build-*/src/engine/torch/engine_torch_backend_benchmark
//   OMP_WAIT_POLICY=PASSIVE build-*/src/engine/torch/engine_torch_backend_benchmark
//   LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack ...  (the
//       reference BLAS instead of the one the alternatives system selects)
//
// Arguments of each case: model (0 = fashion_mnist, 1 = fashion_mnist_small), batch rows,
// intra-op threads, busy competitor (0/1); select with --benchmark_filter, e.g.
// 'model:0/batch:(1|32)/threads:(1|2)/busy:0', and use --benchmark_repetitions=5 on a shared
// machine. Prints; asserts nothing.

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "benchmark/benchmark.h"
#include "engine/torch/fashion_mnist_data.h"
#include "engine/torch/torch_backend.h"

namespace brigade::engine {
namespace {

constexpr const char* kModels[] = {"fashion_mnist", "fashion_mnist_small"};

std::shared_ptr<Model> LoadModel(int index) {
  static std::map<int, std::shared_ptr<Model>> models;
  auto& model = models[index];
  if (model == nullptr) {
    ModelLoadOptions options;
    options.model_name = kModels[index];
    options.model_path = std::string(BRIGADE_MODELS_DIR) + "/" + kModels[index] + "/1/model.pt";
    options.max_batch_size = 32;
    TorchBackend backend;
    auto loaded = backend.Load(options);
    if (loaded.ok()) model = *std::move(loaded);
  }
  return model;
}

Tensor Images(int64_t rows) {
  static auto test_set = ReadFashionMnist(std::string(kFashionMnistDir), "t10k");
  if (test_set.ok()) {
    auto slice = test_set->images.SliceRows(0, rows);
    if (slice.ok()) return *slice;
  }
  auto zeros = Tensor::Zeros(DataType::kFp32, {rows, 1, 28, 28});
  return zeros.ok() ? *zeros : Tensor();
}

// Spins on another thread for as long as it lives.
class BusyThread {
 public:
  BusyThread()
      : thread_([this] {
          while (!stop_.load(std::memory_order_relaxed)) {
          }
        }) {}
  ~BusyThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void BM_Execute(benchmark::State& state) {
  const int model_index = static_cast<int>(state.range(0));
  const int64_t rows = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  std::shared_ptr<Model> model = LoadModel(model_index);
  if (model == nullptr) {
    state.SkipWithError("model failed to load");
    return;
  }
  InstanceOptions options;
  options.intra_op_threads = threads;
  auto instance = model->CreateInstance(options);
  if (!instance.ok()) {
    state.SkipWithError(std::string(instance.status().message()).c_str());
    return;
  }
  std::vector<Tensor> inputs = {Images(rows)};
  std::vector<Tensor> outputs;
  for (int i = 0; i < 20; ++i) (void)(*instance)->Execute(inputs, &outputs);  // warm-up
  std::unique_ptr<BusyThread> busy;
  if (state.range(3) != 0) busy = std::make_unique<BusyThread>();
  for (auto _ : state) {
    absl::Status status = (*instance)->Execute(inputs, &outputs);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(outputs);
  }
  state.SetLabel(kModels[model_index]);
  state.counters["images/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Execute)
    ->ArgNames({"model", "batch", "threads", "busy"})
    ->ArgsProduct({{0, 1}, {1, 32}, {1, 2}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace brigade::engine

BENCHMARK_MAIN();
