#include "telemetry/request_metrics.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <unordered_map>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::telemetry {
namespace {

// Label counts are fixed by construction in this file, so resolving a cell cannot fail; if it
// ever does, the metric definitions here are broken, which is a bug to stop on.
template <typename Cell>
Cell* MustResolve(absl::StatusOr<Cell*> cell) {
  if (!cell.ok()) {
    std::fprintf(stderr, "request_metrics: %s\n", std::string(cell.status().message()).c_str());
    std::abort();
  }
  return *cell;
}

template <typename Cell, typename Resolve>
Cell* Lazy(std::atomic<Cell*>& slot, const Resolve& resolve) {
  Cell* cell = slot.load(std::memory_order_acquire);
  if (cell != nullptr) [[likely]] {
    return cell;
  }
  cell = MustResolve(resolve());
  slot.store(cell, std::memory_order_release);
  return cell;
}

size_t ProtocolIndex(Protocol protocol) {
  return std::min<size_t>(static_cast<size_t>(protocol), 2);
}

}  // namespace

std::string_view RequestOutcomeName(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kSuccess:
      return "success";
    case RequestOutcome::kError:
      return "error";
    case RequestOutcome::kRejected:
      return "rejected";
    case RequestOutcome::kTimedOut:
      return "timed_out";
    case RequestOutcome::kShed:
      return "shed";
    case RequestOutcome::kCancelled:
      return "cancelled";
  }
  return "error";
}

RequestOutcome OutcomeFromStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return RequestOutcome::kSuccess;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
      return RequestOutcome::kRejected;
    case absl::StatusCode::kDeadlineExceeded:
      return RequestOutcome::kTimedOut;
    case absl::StatusCode::kCancelled:
      return RequestOutcome::kCancelled;
    default:
      return RequestOutcome::kError;
  }
}

ModelRequestMetrics::ModelRequestMetrics(const RequestMetrics* parent, std::string model,
                                         std::string version, Gauge* queue_length, Gauge* in_flight,
                                         Gauge* busy_instances)
    : parent_(parent),
      model_(std::move(model)),
      version_(std::move(version)),
      queue_length_(queue_length),
      in_flight_(in_flight),
      busy_instances_(busy_instances) {}

Counter* ModelRequestMetrics::RequestCounter(Protocol protocol, RequestOutcome outcome) {
  return Lazy(requests_[ProtocolIndex(protocol)][static_cast<size_t>(outcome)], [&] {
    return parent_->families().requests->WithLabels(
        {model_, version_, ProtocolName(protocol), RequestOutcomeName(outcome)});
  });
}

Histogram* ModelRequestMetrics::StageHistogram(Protocol protocol, LatencyStage stage) {
  return Lazy(stages_[ProtocolIndex(protocol)][static_cast<size_t>(stage)], [&] {
    return parent_->families().stage_duration->WithLabels(
        {model_, version_, ProtocolName(protocol), LatencyStageName(stage)});
  });
}

void ModelRequestMetrics::RecordRequest(Protocol protocol, RequestOutcome outcome,
                                        const StageClock& clock) {
  RequestCounter(protocol, outcome)->Add();
  for (int i = 0; i < kNumLatencyStages; ++i) {
    const auto stage = static_cast<LatencyStage>(i);
    if (const std::optional<int64_t> ns = LatencyStageNs(clock, stage)) {
      StageHistogram(protocol, stage)->Observe(*ns);
    }
  }
}

void ModelRequestMetrics::RecordBatch(int batch_size) {
  Lazy(batch_size_, [&] {
    return parent_->families().batch_size->WithLabels({model_, version_});
  })->Observe(batch_size);
}

std::vector<protocol::StageLatency> ModelRequestMetrics::StageSummary() const {
  const HistogramBuckets& buckets = parent_->families().stage_duration->buckets();
  std::vector<protocol::StageLatency> out;
  out.reserve(kNumLatencyStages);
  for (int i = 0; i < kNumLatencyStages; ++i) {
    HistogramSnapshot merged;
    for (const auto& per_protocol : stages_) {
      if (const Histogram* histogram = per_protocol[i].load(std::memory_order_acquire)) {
        merged.Merge(histogram->Snapshot());
      }
    }
    protocol::StageLatency stage{
        .stage = std::string(LatencyStageName(static_cast<LatencyStage>(i))),
        .count = merged.count()};
    stage.p50_ns = EstimateQuantile(buckets, merged, 0.50);
    stage.p90_ns = EstimateQuantile(buckets, merged, 0.90);
    stage.p99_ns = EstimateQuantile(buckets, merged, 0.99);
    out.push_back(stage);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<RequestMetrics>> RequestMetrics::Create(MetricsRegistry* registry) {
  Families f{};
  BRIGADE_ASSIGN_OR_RETURN(
      f.requests,
      registry->AddCounter("brigade_requests_total",
                           "Inference requests answered, by protocol and outcome (success, error, "
                           "rejected, timed_out, shed, cancelled).",
                           {"model", "version", "protocol", "outcome"}));
  BRIGADE_ASSIGN_OR_RETURN(
      f.stage_duration,
      registry->AddHistogram(
          "brigade_request_stage_duration_seconds",
          "Time requests spent in each stage: receive (t0 to decoded), preprocess (to t1), queue, "
          "compute (queue leave to t3), postprocess (to t4), send (to t5), total (t0 to t5).",
          {"model", "version", "protocol", "stage"}, HistogramBuckets::LatencyNs()));
  BRIGADE_ASSIGN_OR_RETURN(
      f.batch_size, registry->AddHistogram("brigade_batch_size", "Rows per backend execution.",
                                           {"model", "version"}, HistogramBuckets::PowersOfTwo()));
  BRIGADE_ASSIGN_OR_RETURN(
      f.queue_length,
      registry->AddGauge("brigade_queue_length", "Requests waiting in the model's scheduler queue.",
                         {"model", "version"}));
  BRIGADE_ASSIGN_OR_RETURN(
      f.in_flight, registry->AddGauge("brigade_requests_in_flight",
                                      "Requests accepted for the model and not yet answered.",
                                      {"model", "version"}));
  BRIGADE_ASSIGN_OR_RETURN(
      f.busy_instances,
      registry->AddGauge("brigade_instances_busy", "Model instances executing a batch now.",
                         {"model", "version"}));
  auto metrics = std::make_unique<RequestMetrics>(f);
  metrics->unresolved_ = std::make_unique<ModelRequestMetrics>(
      metrics.get(), "", "", &metrics->unresolved_gauges_[0], &metrics->unresolved_gauges_[1],
      &metrics->unresolved_gauges_[2]);
  return metrics;
}

// Keys are (model, version); lookups take string views, so finding a handle allocates nothing.
class RequestMetrics::HandleTable {
 public:
  void Insert(const std::string& model, const std::string& version, ModelRequestMetrics* handle) {
    map_.emplace(Key{model, version}, handle);
    // The newest version stands for the model when a request failed before naming one.
    auto [it, inserted] = newest_.emplace(Key{model, ""}, Newest{version, handle});
    if (!inserted && NumericLess(it->second.version, version)) it->second = {version, handle};
  }
  // An empty `version` finds the model's newest version.
  ModelRequestMetrics* Find(std::string_view model, std::string_view version) const {
    if (version.empty()) {
      const auto it = newest_.find(KeyView{model, ""});
      return it == newest_.end() ? nullptr : it->second.handle;
    }
    const auto it = map_.find(KeyView{model, version});
    return it == map_.end() ? nullptr : it->second;
  }

 private:
  struct Key {
    std::string model;
    std::string version;
  };
  struct KeyView {
    std::string_view model;
    std::string_view version;
  };
  static KeyView View(const Key& key) { return {key.model, key.version}; }
  static KeyView View(const KeyView& key) { return key; }
  struct Hash {
    using is_transparent = void;
    template <typename K>
    size_t operator()(const K& key) const {
      const KeyView view = View(key);
      const size_t h = std::hash<std::string_view>()(view.model);
      return h ^ (std::hash<std::string_view>()(view.version) + 0x9E3779B97F4A7C15ull + (h << 6) +
                  (h >> 2));
    }
  };
  struct Equal {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a).model == View(b).model && View(a).version == View(b).version;
    }
  };
  struct Newest {
    std::string version;
    ModelRequestMetrics* handle;
  };
  // Decimal version strings compare by length first ("10" > "9").
  static bool NumericLess(std::string_view a, std::string_view b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  }
  std::unordered_map<Key, ModelRequestMetrics*, Hash, Equal> map_;
  std::unordered_map<Key, Newest, Hash, Equal> newest_;
};

RequestMetrics::RequestMetrics(Families families) : families_(families) {}
RequestMetrics::~RequestMetrics() = default;

ModelRequestMetrics* RequestMetrics::ForModel(std::string_view model, std::string_view version) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<ModelRequestMetrics>& handle =
      models_[{std::string(model), std::string(version)}];
  if (handle == nullptr) {
    handle = std::make_unique<ModelRequestMetrics>(
        this, std::string(model), std::string(version),
        MustResolve(families_.queue_length->WithLabels({model, version})),
        MustResolve(families_.in_flight->WithLabels({model, version})),
        MustResolve(families_.busy_instances->WithLabels({model, version})));
    // Publish a new immutable table with every handle; readers switch to it atomically.
    auto table = std::make_unique<HandleTable>();
    for (const auto& [key, value] : models_) table->Insert(key.first, key.second, value.get());
    published_.store(table.get(), std::memory_order_release);
    tables_.push_back(std::move(table));
  }
  return handle.get();
}

ModelRequestMetrics* RequestMetrics::Lookup(std::string_view model,
                                            std::string_view version) const {
  const HandleTable* table = published_.load(std::memory_order_acquire);
  return table == nullptr ? nullptr : table->Find(model, version);
}

void RequestMetrics::RecordRequest(std::string_view model, std::string_view version,
                                   Protocol protocol, RequestOutcome outcome,
                                   const StageClock& clock) {
  ModelRequestMetrics* handle = Lookup(model, version);
  (handle != nullptr ? handle : unresolved_.get())->RecordRequest(protocol, outcome, clock);
}

}  // namespace brigade::telemetry
