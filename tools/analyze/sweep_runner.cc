#include "tools/analyze/sweep_runner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>

#include "core/clock.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "tools/analyze/accuracy.h"
#include "tools/analyze/config_generator.h"
#include "tools/analyze/point_repository.h"
#include "tools/analyze/server_process.h"

namespace brigade::analyze {
namespace {

namespace fs = std::filesystem;

constexpr double kNsPerMs = 1e6;

class NullProgress final : public SweepProgress {
 public:
  void BeginConfig(size_t, size_t, std::string_view) override {}
  void Step(std::string_view) override {}
  void EndConfig(std::string_view) override {}
  void Update(const loadgen::Progress&) override {}
  void Done() override {}
};

struct VariantState {
  bool evaluated = false;
  std::vector<int32_t> predictions;
  // The load generator's dataset folder (empty until written).
  std::string load_inputs_dir;
  std::string load_inputs_error;
};

double SecondsSince(int64_t start_ns) { return (Clock::Real()->NowNs() - start_ns) * 1e-9; }

double ScaleFor(const SweepOptions& options, const EvalSet& eval, DataType input_type) {
  if (!std::isnan(options.eval_scale)) return options.eval_scale;
  return DefaultScale(eval.inputs.dtype(), input_type);
}

// The first examples of `eval`, converted to the model's input, one request's rows per file.
absl::Status WriteLoadInputs(const protocol::ModelMetadata& metadata, const EvalSet& eval,
                             int64_t rows, int samples, double scale, const std::string& dir) {
  if (metadata.inputs.size() != 1) {
    return absl::InvalidArgumentError(StrCat("model '", metadata.name, "' has ",
                                             metadata.inputs.size(),
                                             " inputs; the evaluation set feeds exactly one"));
  }
  const protocol::TensorMetadata& input = metadata.inputs[0];
  const bool batched = !input.shape.empty() && input.shape[0] == -1;
  const Shape row_shape(input.shape.begin() + (batched ? 1 : 0), input.shape.end());
  if (!batched) rows = 1;
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return absl::InternalError(StrCat("cannot create ", dir, ": ", error.message()));
  int written = 0;
  for (int64_t begin = 0; written < samples && begin + rows <= eval.size(); begin += rows) {
    BRIGADE_ASSIGN_OR_RETURN(Tensor tensor,
                             EvalRows(eval, begin, rows, input.dtype, scale, row_shape, batched));
    const std::string path = (fs::path(dir) / fmt::format("sample-{:05d}.bin", written)).string();
    BRIGADE_RETURN_IF_ERROR(WriteTextFile(
        path, std::string_view(reinterpret_cast<const char*>(tensor.data()), tensor.byte_size())));
    ++written;
  }
  if (written == 0) {
    return absl::InvalidArgumentError(StrCat("the evaluation set's ", eval.size(),
                                             " examples do not fill one request of ", rows,
                                             " rows"));
  }
  return absl::OkStatus();
}

std::string ErrorsText(const loadgen::ErrorsByKind& errors) {
  std::string text;
  for (const auto& [kind, count] : errors) {
    if (!text.empty()) text += "; ";
    text += StrCat(count.count, " × ", kind, ": ", count.example);
  }
  return text;
}

PointResult FromLevel(size_t config, const loadgen::LevelResult& level, double accuracy) {
  PointResult point;
  point.config = config;
  point.mode = level.mode;
  point.concurrency = level.mode == loadgen::LoadMode::kClosedLoop ? level.workers : 0;
  point.target_rate_per_s = level.target_rate;
  point.ok = level.ok;
  point.failed = level.failed;
  point.server = level.server;
  point.accuracy = accuracy;
  if (level.ok == 0) {
    point.error = StrCat("no request succeeded: ", ErrorsText(level.errors));
    return point;
  }
  point.p50_ms = level.latency.PercentileNs(50) / kNsPerMs;
  point.p90_ms = level.latency.PercentileNs(90) / kNsPerMs;
  point.p99_ms = level.latency.PercentileNs(99) / kNsPerMs;
  point.mean_ms = level.latency.mean_ns() / kNsPerMs;
  point.throughput_per_s = level.throughput_per_s;
  if (level.failed > 0) {
    // Failed requests are not served traffic: such a point cannot be recommended.
    point.error = StrCat(level.failed, " of ", level.ok + level.failed,
                         " requests failed: ", ErrorsText(level.errors));
    point.p99_ms = kNotMeasured;
  }
  return point;
}

std::string PointSummary(const PointResult& point) {
  if (!point.error.empty()) return point.error;
  return fmt::format("p99 {:.2f} ms  {:.0f}/s", point.p99_ms, point.throughput_per_s);
}

class Sweep {
 public:
  Sweep(const SweepSpace& space, const std::vector<config::ModelConfig>& bases, const EvalSet& eval,
        const SweepOptions& options, SweepProgress* progress)
      : space_(space),
        bases_(bases),
        eval_(eval),
        options_(options),
        progress_(progress),
        states_(space.variants.size()) {
    for (const Variant& variant : space.variants) {
      VariantResult result;
      result.name = variant.name;
      result.model_dir = variant.model_dir;
      result.base_max_batch_size = variant.base_max_batch_size;
      const config::ModelConfig& base = bases[result_.variants.size()];
      result.platform = !base.platform().empty() ? base.platform() : base.backend();
      result_.variants.push_back(std::move(result));
    }
  }

  void RunConfig(const ServingConfig& config);
  SweepResult Take() { return std::move(result_); }
  // Removes what the sweep wrote under the work folder, then the folder itself when that leaves
  // it empty (a folder the user named keeps anything else it holds).
  void RemoveWorkFiles();

 private:
  // The failure of a whole configuration: one point per load level, each with the error.
  void FailConfig(size_t config_index, std::string_view error);
  void Evaluate(int variant, client::Client& client, const protocol::ModelMetadata& metadata,
                const ServingConfig& config);
  void PrepareLoadInputs(int variant, const protocol::ModelMetadata& metadata);

  const SweepSpace& space_;
  const std::vector<config::ModelConfig>& bases_;
  const EvalSet& eval_;
  const SweepOptions& options_;
  SweepProgress* progress_;
  std::vector<VariantState> states_;
  SweepResult result_;
  // Folders written under the work folder.
  std::vector<std::string> written_;
};

void Sweep::RemoveWorkFiles() {
  std::error_code ignored;
  for (const std::string& path : written_) fs::remove_all(path, ignored);
  fs::remove(options_.work_dir, ignored);
}

void Sweep::FailConfig(size_t config_index, std::string_view error) {
  result_.configs[config_index].error = std::string(error);
  const loadgen::BenchOptions& load = options_.load;
  const bool closed = load.mode == loadgen::LoadMode::kClosedLoop;
  const size_t levels = closed ? load.concurrency.size() : load.rates.size();
  for (size_t i = 0; i < levels; ++i) {
    PointResult point;
    point.config = config_index;
    point.mode = load.mode;
    point.concurrency = closed ? load.concurrency[i] : 0;
    point.target_rate_per_s = closed ? 0 : load.rates[i];
    const int variant = result_.configs[config_index].config.variant;
    point.accuracy = result_.variants[static_cast<size_t>(variant)].accuracy;
    point.error = std::string(error);
    result_.points.push_back(std::move(point));
  }
  progress_->EndConfig(error);
}

void Sweep::Evaluate(int variant, client::Client& client, const protocol::ModelMetadata& metadata,
                     const ServingConfig& config) {
  VariantState& state = states_[static_cast<size_t>(variant)];
  VariantResult& result = result_.variants[static_cast<size_t>(variant)];
  state.evaluated = true;
  progress_->Step(StrCat("accuracy on ", eval_.size(), " examples"));
  PredictOptions predict;
  predict.model = result.name;
  predict.output = options_.output_name;
  predict.batch_rows = config.max_batch_size > 0
                           ? std::min<int64_t>(options_.eval_batch_rows, config.max_batch_size)
                           : 1;
  predict.scale =
      metadata.inputs.empty() ? 1.0 : ScaleFor(options_, eval_, metadata.inputs[0].dtype);
  const int64_t start_ns = Clock::Real()->NowNs();
  absl::StatusOr<std::vector<int32_t>> predictions =
      PredictClasses(client, metadata, eval_, predict);
  result.eval_seconds = SecondsSince(start_ns);
  if (!predictions.ok()) {
    result.error = StrCat("accuracy: ", ToStd(predictions.status().message()));
    return;
  }
  std::vector<int64_t> expected;
  if (options_.agreement) {
    if (result.name == options_.reference) {
      expected.assign(predictions->begin(), predictions->end());
    } else {
      const auto reference =
          std::find_if(space_.variants.begin(), space_.variants.end(),
                       [&](const Variant& v) { return v.name == options_.reference; });
      const size_t r = static_cast<size_t>(reference - space_.variants.begin());
      if (reference == space_.variants.end() || !states_[r].evaluated ||
          states_[r].predictions.empty()) {
        result.error = StrCat("agreement: the reference variant '", options_.reference,
                              "' has no predictions");
        return;
      }
      expected.assign(states_[r].predictions.begin(), states_[r].predictions.end());
    }
  } else {
    expected = eval_.labels;
  }
  absl::StatusOr<Score> score = ScorePredictions(*predictions, expected);
  if (!score.ok()) {
    result.error = StrCat("accuracy: ", ToStd(score.status().message()));
    return;
  }
  result.accuracy = score->accuracy;
  result.examples = score->examples;
  result.correct = score->correct;
  state.predictions = *std::move(predictions);
}

void Sweep::PrepareLoadInputs(int variant, const protocol::ModelMetadata& metadata) {
  VariantState& state = states_[static_cast<size_t>(variant)];
  if (!state.load_inputs_dir.empty() || !state.load_inputs_error.empty()) return;
  const std::string dir = (fs::path(options_.work_dir) / StrCat("load-inputs-", variant)).string();
  written_.push_back(dir);
  const double scale =
      metadata.inputs.empty() ? 1.0 : ScaleFor(options_, eval_, metadata.inputs[0].dtype);
  absl::Status status = WriteLoadInputs(metadata, eval_, options_.load.inputs.batch_size,
                                        options_.load_samples, scale, dir);
  if (status.ok()) {
    state.load_inputs_dir = dir;
  } else {
    state.load_inputs_error = StrCat("load inputs: ", ToStd(status.message()));
  }
}

void Sweep::RunConfig(const ServingConfig& config) {
  const Variant& variant = space_.variants[static_cast<size_t>(config.variant)];
  ConfigResult config_result;
  config_result.config = config;
  config_result.variant = variant.name;
  const size_t config_index = result_.configs.size();
  result_.configs.push_back(config_result);

  absl::StatusOr<config::ModelConfig> generated =
      GenerateConfig(bases_[static_cast<size_t>(config.variant)], config);
  if (!generated.ok()) return FailConfig(config_index, ToStd(generated.status().message()));
  const std::string header = GeneratedConfigHeader(variant.name, config);
  result_.configs[config_index].config_text = ConfigToText(*generated, header);
  const std::string repository =
      (fs::path(options_.work_dir) / fmt::format("config-{:03d}", config_index)).string();
  written_.push_back(repository);
  if (absl::Status status = WritePointRepository(variant.model_dir, *generated, header, repository);
      !status.ok()) {
    return FailConfig(config_index, ToStd(status.message()));
  }

  progress_->Step("starting server");
  ServerProcess::Options server_options;
  server_options.binary = options_.brigade_binary;
  server_options.model_repository = repository;
  server_options.extra_args = options_.serve_args;
  server_options.start_timeout_ms = options_.server_start_timeout_ms;
  server_options.bearer_token = options_.load.client.bearer_token;
  const int64_t start_ns = Clock::Real()->NowNs();
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(server_options);
  if (!server.ok()) return FailConfig(config_index, ToStd(server.status().message()));
  result_.configs[config_index].server_start_s = SecondsSince(start_ns);

  client::ClientOptions client_options;
  client_options.address = (*server)->address();
  client_options.timeout_ms = options_.load.client.timeout_ms;
  client_options.bearer_token = options_.load.client.bearer_token;
  absl::StatusOr<std::unique_ptr<client::Client>> client = client::Client::Create(client_options);
  if (!client.ok()) return FailConfig(config_index, ToStd(client.status().message()));
  absl::StatusOr<protocol::ModelMetadata> metadata = (*client)->GetModelMetadata(variant.name, "");
  if (!metadata.ok()) {
    return FailConfig(config_index, StrCat("model metadata: ", ToStd(metadata.status().message())));
  }
  if (!states_[static_cast<size_t>(config.variant)].evaluated) {
    Evaluate(config.variant, **client, *metadata, config);
  }
  PrepareLoadInputs(config.variant, *metadata);
  const VariantState& state = states_[static_cast<size_t>(config.variant)];
  if (!state.load_inputs_error.empty()) return FailConfig(config_index, state.load_inputs_error);

  progress_->Step("measuring");
  loadgen::BenchOptions load = options_.load;
  load.client.address = (*server)->address();
  load.client.protocol = client::ClientProtocol::kHttp;
  load.http_binary = true;
  load.model_name = variant.name;
  load.model_version.clear();
  load.inputs.directory = state.load_inputs_dir;
  absl::StatusOr<loadgen::BenchReport> report = loadgen::RunBench(load, progress_);
  (*server)->Stop();
  if (!report.ok()) return FailConfig(config_index, ToStd(report.status().message()));
  const double accuracy = result_.variants[static_cast<size_t>(config.variant)].accuracy;
  std::string summary;
  for (const loadgen::LevelResult& level : report->levels) {
    PointResult point = FromLevel(config_index, level, accuracy);
    if (!summary.empty()) summary += " | ";
    summary += StrCat(Analysis::LoadLabel(point), " ", PointSummary(point));
    result_.points.push_back(std::move(point));
  }
  if (!options_.keep_work_dir) {
    // Model links only; the next configuration gets its own folder.
    std::error_code ignored;
    fs::remove_all(repository, ignored);
  }
  progress_->EndConfig(summary);
}

}  // namespace

absl::StatusOr<SweepResult> RunSweep(const SweepSpace& space, const SweepPlan& plan,
                                     const std::vector<config::ModelConfig>& bases,
                                     const EvalSet& eval, const SweepOptions& options,
                                     SweepProgress* progress) {
  if (bases.size() != space.variants.size()) {
    return absl::InvalidArgumentError("one base configuration per variant is needed");
  }
  std::error_code error;
  fs::create_directories(options.work_dir, error);
  if (error) {
    return absl::InternalError(
        StrCat("cannot create work folder ", options.work_dir, ": ", error.message()));
  }
  NullProgress quiet;
  SweepProgress* sink = progress != nullptr ? progress : &quiet;
  Sweep sweep(space, bases, eval, options, sink);
  for (size_t i = 0; i < plan.configs.size(); ++i) {
    const ServingConfig& config = plan.configs[i];
    sink->BeginConfig(
        i, plan.configs.size(),
        StrCat(space.variants[static_cast<size_t>(config.variant)].name, " ", config.Label()));
    sweep.RunConfig(config);
  }
  if (!options.keep_work_dir) sweep.RemoveWorkFiles();
  return sweep.Take();
}

}  // namespace brigade::analyze
