#include "tools/loadgen/bench_report.h"

#include <cmath>
#include <vector>

#include "core/json_text.h"
#include "core/strings.h"

namespace brigade::loadgen {
namespace {

constexpr double kUs = 1e-3;  // ns → µs

struct PercentileColumn {
  std::string_view name;
  double percentile;
};
constexpr PercentileColumn kPercentiles[] = {
    {"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99_9", 99.9}};

std::string ProtocolLabel(const BenchReport& report) {
  const std::string_view shm = report.shared_memory == SharedMemory::kSystem ? "+shm" : "";
  if (report.protocol == client::ClientProtocol::kGrpc) return StrCat("grpc", shm);
  return StrCat(report.http_binary ? "http-binary" : "http-json", shm);
}

// ", zipf s=1" when samples are drawn from a Zipf distribution; empty when cycled.
std::string OrderLabel(const BenchReport& report) {
  if (report.sample_order != SampleOrder::kZipf) return "";
  return fmt::format(", zipf s={}", report.zipf_exponent);
}

std::string LevelName(const LevelResult& level) {
  if (level.mode == LoadMode::kClosedLoop) return StrCat("c=", level.workers);
  return StrCat(LoadModeName(level.mode), "@", level.target_rate, "/s");
}

// Fixed one-decimal text; "-" when `value` is absent.
std::string Us(std::optional<double> value_us) {
  if (!value_us.has_value()) return "-";
  return fmt::format("{:.1f}", *value_us);
}

std::optional<double> ComputeUs(const LevelResult& level) {
  if (!level.server.has_value() || level.server->requests == 0) return std::nullopt;
  return level.server->compute_ns() * kUs;
}

std::optional<double> OverheadUs(const LevelResult& level, double latency_us) {
  const std::optional<double> compute = ComputeUs(level);
  if (!compute.has_value() || level.latency.count() == 0) return std::nullopt;
  return latency_us - *compute;
}

double PercentileUs(const LatencyHistogram& histogram, double percentile) {
  return histogram.PercentileNs(percentile) * kUs;
}

double MaxRatePerCore(const LevelResult& level) {
  return level.client_cpu_us_per_request > 0 ? 1e6 / level.client_cpu_us_per_request : 0;
}

void AppendHistogramJson(const LatencyHistogram& histogram, std::string* out) {
  out->append("{\"count\":");
  AppendJsonInt(histogram.count(), out);
  out->append(",\"min\":");
  AppendJsonDouble(histogram.min_ns() * kUs, out);
  out->append(",\"mean\":");
  AppendJsonDouble(histogram.mean_ns() * kUs, out);
  for (const PercentileColumn& column : kPercentiles) {
    out->append(",");
    AppendJsonString(column.name, out);
    out->append(":");
    AppendJsonDouble(PercentileUs(histogram, column.percentile), out);
  }
  out->append(",\"max\":");
  AppendJsonDouble(histogram.max_ns() * kUs, out);
  out->append("}");
}

void AppendOptionalJson(std::optional<double> value, std::string* out) {
  if (value.has_value()) {
    AppendJsonDouble(*value, out);
  } else {
    out->append("null");
  }
}

}  // namespace

std::string FormatTable(const BenchReport& report) {
  std::string out = fmt::format(
      "model {} ({}), {}, batch {}, {} input sample{}{}\n", report.model.name,
      report.model.platform.empty() ? "?" : report.model.platform, ProtocolLabel(report),
      report.batch_size, report.samples, report.samples == 1 ? "" : "s", OrderLabel(report));
  out += fmt::format(
      "{:<22} {:>9} {:>6} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} "
      "{:>9} {:>9} {:>9} {:>8}\n",
      "level", "ok", "errors", "req/s", "p50 µs", "p90 µs", "p95 µs", "p99 µs", "p99.9 µs",
      "max µs", "queue µs", "compute", "ovh p50", "ovh p99", "cli µs/r");
  for (const LevelResult& level : report.levels) {
    const double p50 = PercentileUs(level.latency, 50);
    const double p99 = PercentileUs(level.latency, 99);
    std::optional<double> queue;
    if (level.server.has_value() && level.server->requests > 0) {
      queue = level.server->queue_ns * kUs;
    }
    out += fmt::format(
        "{:<22} {:>9} {:>6} {:>10.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} "
        "{:>9} {:>9} {:>9} {:>9} {:>8.1f}\n",
        LevelName(level), level.ok, level.failed, level.throughput_per_s, p50,
        PercentileUs(level.latency, 90), PercentileUs(level.latency, 95), p99,
        PercentileUs(level.latency, 99.9), level.latency.max_ns() * kUs, Us(queue),
        Us(ComputeUs(level)), Us(OverheadUs(level, p50)), Us(OverheadUs(level, p99)),
        level.client_cpu_us_per_request);
  }
  for (const LevelResult& level : report.levels) {
    if (level.mode != LoadMode::kClosedLoop) {
      out += fmt::format(
          "{}: latency counted from the intended send time; service p50 {:.1f} µs p99 {:.1f} "
          "µs; send lag p50 {:.1f} µs p99 {:.1f} µs{}\n",
          LevelName(level), PercentileUs(level.service, 50), PercentileUs(level.service, 99),
          PercentileUs(level.send_lag, 50), PercentileUs(level.send_lag, 99),
          level.unsent > 0 ? fmt::format("; {} due requests never sent (server slower than the "
                                         "rate)",
                                         level.unsent)
                           : "");
    }
    for (const auto& [kind, count] : level.errors) {
      out += fmt::format("{}: {} × {} (e.g. \"{}\")\n", LevelName(level), count.count, kind,
                         count.example);
    }
    if (!level.server.has_value()) {
      out += fmt::format("{}: no server breakdown: {}\n", LevelName(level), level.server_note);
    } else if (level.server->requests > 0) {
      out += fmt::format(
          "{}: server per request: queue {:.1f} µs, compute_input {:.1f}, compute_infer {:.1f}, "
          "compute_output {:.1f}, server total {:.1f} µs; mean batch {:.2f}; client CPU {:.1f} "
          "µs/request (≈ {:.0f} req/s per client core)\n",
          LevelName(level), level.server->queue_ns * kUs, level.server->compute_input_ns * kUs,
          level.server->compute_infer_ns * kUs, level.server->compute_output_ns * kUs,
          level.server->request_ns * kUs, level.server->mean_batch_size,
          level.client_cpu_us_per_request, MaxRatePerCore(level));
    }
    if (level.server.has_value() && level.server->cache_lookups() > 0) {
      out += fmt::format("{}: response cache: hit rate {:.1f}% ({} hits, {} misses)\n",
                         LevelName(level), level.server->cache_hit_rate() * 100,
                         level.server->cache_hits, level.server->cache_misses);
    }
  }
  return out;
}

std::string FormatCsv(const BenchReport& report) {
  std::string out =
      "model,protocol,batch_size,mode,workers,target_rate,ok,failed,unsent,elapsed_s,"
      "throughput_per_s,latency_mean_us,latency_p50_us,latency_p90_us,latency_p95_us,"
      "latency_p99_us,latency_p99_9_us,latency_max_us,service_p50_us,service_p99_us,"
      "server_queue_us,server_compute_input_us,server_compute_infer_us,"
      "server_compute_output_us,server_compute_us,server_request_us,mean_batch_size,"
      "overhead_p50_us,overhead_p99_us,client_cpu_us_per_request,server_cache_hits,"
      "server_cache_misses,server_cache_hit_rate\n";
  for (const LevelResult& level : report.levels) {
    const bool have_server = level.server.has_value() && level.server->requests > 0;
    auto server_field = [&](double ns) {
      return have_server ? fmt::format("{:.3f}", ns * kUs) : std::string();
    };
    auto optional_field = [](std::optional<double> value) {
      return value.has_value() ? fmt::format("{:.3f}", *value) : std::string();
    };
    const double p50 = PercentileUs(level.latency, 50);
    const double p99 = PercentileUs(level.latency, 99);
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{:.3f},{:.1f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},"
        "{:.3f},{:.3f},{:.3f},{},{},{},{},{},{},{},{},{},{:.3f},{},{},{}\n",
        report.model.name, ProtocolLabel(report), report.batch_size, LoadModeName(level.mode),
        level.workers, level.target_rate, level.ok, level.failed, level.unsent, level.elapsed_s,
        level.throughput_per_s, level.latency.mean_ns() * kUs, p50, PercentileUs(level.latency, 90),
        PercentileUs(level.latency, 95), p99, PercentileUs(level.latency, 99.9),
        level.latency.max_ns() * kUs, PercentileUs(level.service, 50),
        PercentileUs(level.service, 99), server_field(have_server ? level.server->queue_ns : 0),
        server_field(have_server ? level.server->compute_input_ns : 0),
        server_field(have_server ? level.server->compute_infer_ns : 0),
        server_field(have_server ? level.server->compute_output_ns : 0),
        server_field(have_server ? level.server->compute_ns() : 0),
        server_field(have_server ? level.server->request_ns : 0),
        have_server ? fmt::format("{:.3f}", level.server->mean_batch_size) : std::string(),
        optional_field(OverheadUs(level, p50)), optional_field(OverheadUs(level, p99)),
        level.client_cpu_us_per_request,
        level.server.has_value() ? fmt::format("{}", level.server->cache_hits) : std::string(),
        level.server.has_value() ? fmt::format("{}", level.server->cache_misses) : std::string(),
        level.server.has_value() && level.server->cache_lookups() > 0
            ? fmt::format("{:.4f}", level.server->cache_hit_rate())
            : std::string());
  }
  return out;
}

std::string FormatJson(const BenchReport& report) {
  std::string out = "{\"model\":";
  AppendJsonString(report.model.name, &out);
  out += ",\"platform\":";
  AppendJsonString(report.model.platform, &out);
  out += ",\"protocol\":";
  AppendJsonString(ProtocolLabel(report), &out);
  out += ",\"batch_size\":";
  AppendJsonInt(report.batch_size, &out);
  out += ",\"samples\":";
  AppendJsonInt(static_cast<int64_t>(report.samples), &out);
  out += ",\"sample_order\":";
  AppendJsonString(SampleOrderName(report.sample_order), &out);
  if (report.sample_order == SampleOrder::kZipf) {
    out += ",\"zipf_exponent\":";
    AppendJsonDouble(report.zipf_exponent, &out);
  }
  out += ",\"levels\":[";
  for (size_t i = 0; i < report.levels.size(); ++i) {
    const LevelResult& level = report.levels[i];
    if (i > 0) out += ",";
    out += "{\"mode\":";
    AppendJsonString(LoadModeName(level.mode), &out);
    out += ",\"workers\":";
    AppendJsonInt(level.workers, &out);
    out += ",\"target_rate\":";
    AppendJsonDouble(level.target_rate, &out);
    out += ",\"ok\":";
    AppendJsonInt(level.ok, &out);
    out += ",\"failed\":";
    AppendJsonInt(level.failed, &out);
    out += ",\"unsent\":";
    AppendJsonInt(level.unsent, &out);
    out += ",\"elapsed_s\":";
    AppendJsonDouble(level.elapsed_s, &out);
    out += ",\"throughput_per_s\":";
    AppendJsonDouble(level.throughput_per_s, &out);
    out += ",\"latency_us\":";
    AppendHistogramJson(level.latency, &out);
    out += ",\"service_us\":";
    AppendHistogramJson(level.service, &out);
    out += ",\"send_lag_us\":";
    AppendHistogramJson(level.send_lag, &out);
    out += ",\"errors\":{";
    bool first = true;
    for (const auto& [kind, count] : level.errors) {
      if (!first) out += ",";
      first = false;
      AppendJsonString(kind, &out);
      out += ":{\"count\":";
      AppendJsonInt(count.count, &out);
      out += ",\"example\":";
      AppendJsonString(count.example, &out);
      out += "}";
    }
    out += "},\"server\":";
    if (level.server.has_value()) {
      const ServerBreakdown& s = *level.server;
      out += "{\"requests\":";
      AppendJsonInt(static_cast<int64_t>(s.requests), &out);
      out += ",\"failures\":";
      AppendJsonInt(static_cast<int64_t>(s.failures), &out);
      const std::pair<std::string_view, double> means[] = {
          {"queue_us", s.queue_ns},
          {"compute_input_us", s.compute_input_ns},
          {"compute_infer_us", s.compute_infer_ns},
          {"compute_output_us", s.compute_output_ns},
          {"compute_us", s.compute_ns()},
          {"request_us", s.request_ns}};
      for (const auto& [name, ns] : means) {
        out += ",";
        AppendJsonString(name, &out);
        out += ":";
        AppendJsonDouble(ns * kUs, &out);
      }
      out += ",\"executions\":";
      AppendJsonInt(static_cast<int64_t>(s.executions), &out);
      out += ",\"mean_batch_size\":";
      AppendJsonDouble(s.mean_batch_size, &out);
      out += ",\"cache_hits\":";
      AppendJsonInt(static_cast<int64_t>(s.cache_hits), &out);
      out += ",\"cache_misses\":";
      AppendJsonInt(static_cast<int64_t>(s.cache_misses), &out);
      out += ",\"cache_hit_rate\":";
      AppendOptionalJson(
          s.cache_lookups() > 0 ? std::optional<double>(s.cache_hit_rate()) : std::nullopt, &out);
      out += "}";
    } else {
      out += "null";
    }
    out += ",\"server_note\":";
    AppendJsonString(level.server_note, &out);
    out += ",\"overhead_us\":{\"mean\":";
    AppendOptionalJson(OverheadUs(level, level.latency.mean_ns() * kUs), &out);
    out += ",\"p50\":";
    AppendOptionalJson(OverheadUs(level, PercentileUs(level.latency, 50)), &out);
    out += ",\"p99\":";
    AppendOptionalJson(OverheadUs(level, PercentileUs(level.latency, 99)), &out);
    out += "},\"client_cpu_us_per_request\":";
    AppendJsonDouble(level.client_cpu_us_per_request, &out);
    out += ",\"client_max_requests_per_s_per_core\":";
    AppendJsonDouble(MaxRatePerCore(level), &out);
    out += "}";
  }
  out += "]}\n";
  return out;
}

}  // namespace brigade::loadgen
