// onnx_run: runs one ONNX model on Brigade's engine, to compare it with ONNX Runtime
// (bench/onnx_compare.sh) and to time it (bench/onnx_bench.sh). Prints one JSON line.
//
//   onnx_run --model M.onnx [--threads N] [--batch B] [--runs R] [--warmup W]
//            [--compare DIR]    # inputs and expected outputs from ort-run.js --dump DIR:
//                               # reports max abs / rel error per output, the largest expected
//                               # |value|, rows whose argmax agrees ([N, C] outputs) and whether
//                               # every element is within 1e-5 abs + 1e-4 rel of ONNX Runtime's
//            [--no-optimize]    # skip the graph passes
//            [--dump-outputs DIR]  # also write each output as DIR/output_<name>.bin (raw)
//            [--profile]        # print time per op type over the timed runs (stderr)
//            [--split-budget-kib K]  # batch splitting budget (Session::Options); 0 never
//                               # splits; default half the L3 cache
//            [--keep-sources]   # keep the fp32 initializers beside their packed copies
//                               # (the engine before PlanAndReleaseSources), for comparison
//            [--instances N]    # N sessions of the one compiled model, each run once; the
//                               # JSON gives the RSS after the first and after all of them
//            [--precision fp32|bf16]  # multiply-adds of convolutions and constant-weight
//                               # matmuls (CompiledModel::Options); bf16 falls back to fp32 on
//                               # CPUs without native bf16, and the JSON says which ran
//   onnx_run --peak [--threads N]   # this CPU's measured fp32 FMA peak on N threads, GFLOP/s,
//                                   # on its widest vectors (AVX-512 or AVX2)
//   onnx_run --inspect --model M.onnx [--batch B]   # what `brigade inspect` prints
//
// Inputs are random (fixed seed) unless --compare gives them: floats in [-1, 1), integers in
// [0, 1000), and inputs whose name contains "mask" all ones, as ort-run.js does. The batch
// dimension (the first variable dim) takes --batch. GFLOP/s counts conv/matmul FLOPs (2×MAC).

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/planner.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/inspect.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"
#include "simdjson.h"

namespace {

using brigade::DataType;
using brigade::Shape;
using brigade::StrCat;
using brigade::Tensor;
namespace onnx = brigade::engine::onnx;

struct Flags {
  std::string model, compare, dump_outputs, precision = "fp32";
  int threads = 1, batch = 1, runs = 50, warmup = 5, split_budget_kib = -1;
  int instances = 1;
  bool optimize = true, peak = false, inspect = false, profile = false, keep_sources = false;
};

// A /proc/self/status field in KiB (VmRSS, VmHWM), 0 when absent.
int64_t StatusKib(std::string_view field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':') {
      int64_t kib = 0;
      std::string_view rest(line);
      rest.remove_prefix(field.size() + 1);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
      rest = rest.substr(0, rest.find(' '));
      return brigade::ParseInteger(rest, &kib) ? kib : 0;
    }
  }
  return 0;
}

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// FMA throughput of one thread: 12 independent FMA chains on the widest vectors the CPU has
// (16 floats with AVX-512, else 8 with AVX2), so the peak is the one oneDNN's kernels can reach.
__attribute__((target("avx2,fma"))) double FmaLoop256(int64_t iterations) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t n = 0; n < iterations; ++n) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  float sink = 0;
  for (int i = 0; i < 12; ++i) sink += _mm256_cvtss_f32(acc[i]);
  return sink;
}

__attribute__((target("avx512f"))) double FmaLoop512(int64_t iterations) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t n = 0; n < iterations; ++n) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  float sink = 0;
  for (int i = 0; i < 12; ++i) sink += _mm512_cvtss_f32(acc[i]);
  return sink;
}

struct Peak {
  int lanes = 0;  // floats per FMA
  double gflops = 0;
};

// Best of many short trials, so a trial that ran undisturbed sets the figure even on a busy
// machine.
Peak MeasurePeak(int threads) {
  constexpr int64_t kIterations = 4'000'000;
  const bool wide = __builtin_cpu_supports("avx512f");
  Peak peak{wide ? 16 : 8, 0};
  for (int trial = 0; trial < 30; ++trial) {
    const double start = NowMs();
    double sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += wide ? FmaLoop512(kIterations) : FmaLoop256(kIterations);
    const double seconds = (NowMs() - start) / 1e3;
    const double flops = 2.0 * peak.lanes * 12 * static_cast<double>(kIterations) * threads;
    if (sink == 42) std::printf("%f", sink);  // keep the loop alive
    peak.gflops = std::max(peak.gflops, flops / seconds / 1e9);
  }
  return peak;
}

std::optional<DataType> FromOrtType(std::string_view type) {
  if (type == "float32") return DataType::kFp32;
  if (type == "float64") return DataType::kFp64;
  if (type == "int64") return DataType::kInt64;
  if (type == "int32") return DataType::kInt32;
  if (type == "int8") return DataType::kInt8;
  if (type == "uint8") return DataType::kUint8;
  if (type == "bool") return DataType::kBool;
  return std::nullopt;
}

struct Dumped {
  std::string name;
  Tensor tensor;
};

// Reads one side ("inputs"/"outputs") of an ort-run.js --dump manifest.
bool ReadDump(const std::string& dir, const char* side, std::vector<Dumped>* out) {
  simdjson::dom::parser parser;
  simdjson::dom::element manifest;
  if (parser.load(dir + "/manifest.json").get(manifest)) return false;
  simdjson::dom::array entries;
  if (manifest[side].get_array().get(entries)) return false;
  for (simdjson::dom::element e : entries) {
    std::string_view name, type, file;
    simdjson::dom::array dims;
    if (e["name"].get_string().get(name) || e["type"].get_string().get(type) ||
        e["file"].get_string().get(file) || e["shape"].get_array().get(dims)) {
      return false;
    }
    Shape shape;
    for (simdjson::dom::element d : dims) shape.push_back(d.get_int64().value_unsafe());
    const auto dtype = FromOrtType(type);
    if (!dtype.has_value()) return false;
    std::ifstream in(dir + "/" + std::string(file), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto tensor = Tensor::Copy(*dtype, shape, std::as_bytes(std::span(bytes)));
    if (!tensor.ok()) return false;
    out->push_back(Dumped{std::string(name), *std::move(tensor)});
  }
  return true;
}

Tensor RandomInput(const onnx::Value& spec, int batch, std::mt19937& rng) {
  Shape shape = spec.shape.value_or(Shape{});
  bool batched = false;
  for (int64_t& d : shape) {
    if (d < 0) {
      d = batched ? 1 : batch;
      batched = true;
    }
  }
  Tensor t = *Tensor::Zeros(spec.dtype, shape);
  const bool mask = spec.name.find("mask") != std::string::npos;
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> integer(0, 999);
  switch (spec.dtype) {
    case DataType::kFp32:
      for (float& v : t.mutable_values<float>()) v = mask ? 1.0f : real(rng);
      break;
    case DataType::kInt64:
      for (int64_t& v : t.mutable_values<int64_t>()) v = mask ? 1 : integer(rng);
      break;
    case DataType::kInt32:
      for (int32_t& v : t.mutable_values<int32_t>()) v = mask ? 1 : integer(rng);
      break;
    default:
      break;
  }
  return t;
}

// Time per op type (and the share of the total) over the timed runs, largest first.
void PrintProfile(const onnx::Session& session, int runs) {
  const onnx::ExecutionPlan& plan = *session.last_plan();
  std::map<std::string, std::pair<int64_t, int>> by_op;
  int64_t total = 0;
  for (size_t i = 0; i < plan.steps.size() && i < session.step_ns().size(); ++i) {
    auto& entry = by_op[plan.steps[i].op_type];
    entry.first += session.step_ns()[i];
    entry.second += 1;
    total += session.step_ns()[i];
  }
  std::vector<std::pair<int64_t, std::string>> sorted;
  sorted.reserve(by_op.size());
  for (const auto& [op, entry] : by_op) sorted.emplace_back(entry.first, op);
  std::sort(sorted.rbegin(), sorted.rend());
  std::fprintf(stderr, "%-28s %6s %10s %6s\n", "op", "steps", "ms/run", "share");
  for (const auto& [ns, op] : sorted) {
    std::fprintf(stderr, "%-28s %6d %10.3f %5.1f%%\n", op.c_str(), by_op[op].second,
                 static_cast<double>(ns) / 1e6 / runs, 100.0 * static_cast<double>(ns) / total);
  }
}

int Run(const Flags& flags) {
  auto loaded = onnx::LoadOnnxFile(flags.model);
  if (!loaded.ok()) {
    std::fprintf(stderr, "onnx_run: %s\n", std::string(loaded.status().message()).c_str());
    return 1;
  }
  onnx::Graph graph = std::move(loaded->graph);
  if (flags.optimize) {
    if (auto report = onnx::OptimizeGraph(&graph); !report.ok()) {
      std::fprintf(stderr, "onnx_run: %s\n", std::string(report.status().message()).c_str());
      return 1;
    }
  }
  std::vector<Tensor> inputs;
  std::vector<Dumped> expected;
  if (!flags.compare.empty()) {
    std::vector<Dumped> dumped;
    if (!ReadDump(flags.compare, "inputs", &dumped) ||
        !ReadDump(flags.compare, "outputs", &expected)) {
      std::fprintf(stderr, "onnx_run: cannot read %s/manifest.json\n", flags.compare.c_str());
      return 1;
    }
    for (onnx::ValueId id : graph.inputs()) {
      const auto it = std::find_if(dumped.begin(), dumped.end(),
                                   [&](const Dumped& d) { return d.name == graph.value(id).name; });
      if (it == dumped.end()) {
        std::fprintf(stderr, "onnx_run: dump lacks input %s\n", graph.value(id).name.c_str());
        return 1;
      }
      inputs.push_back(it->tensor);
    }
  } else {
    std::mt19937 rng(1);
    for (onnx::ValueId id : graph.inputs()) {
      inputs.push_back(RandomInput(graph.value(id), flags.batch, rng));
    }
  }
  std::vector<std::string> output_names;
  for (onnx::ValueId id : graph.outputs()) output_names.push_back(graph.value(id).name);
  onnx::CompiledModel::Options compile_options;
  if (flags.precision == "bf16") {
    compile_options.precision = onnx::ComputePrecision::kBf16;
  } else if (flags.precision != "fp32") {
    std::fprintf(stderr, "onnx_run: --precision %s: expected fp32 or bf16\n",
                 flags.precision.c_str());
    return 2;
  }
  auto compiled = onnx::CompiledModel::Compile(flags.model, std::move(graph), compile_options);
  if (!compiled.ok()) {
    std::fprintf(stderr, "onnx_run: %s\n", std::string(compiled.status().message()).c_str());
    return 1;
  }
  if (!(*compiled)->precision_note().empty()) {
    std::fprintf(stderr, "onnx_run: %s\n", (*compiled)->precision_note().c_str());
  }
  if (!flags.keep_sources) {
    // As OnnxBackend::Load does: pack the weights once and free the initializers packed.
    if (auto status = onnx::PlanAndReleaseSources(**compiled, inputs); !status.ok()) {
      std::fprintf(stderr, "onnx_run: releasing sources: %s\n",
                   std::string(status.message()).c_str());
    }
  }
  onnx::Session::Options options;
  options.threads = flags.threads;
  options.profile = flags.profile;
  if (flags.split_budget_kib >= 0) {
    options.split_budget_bytes = static_cast<size_t>(flags.split_budget_kib) << 10;
  }
  auto session = onnx::Session::Create(*compiled, options);
  if (!session.ok()) {
    std::fprintf(stderr, "onnx_run: %s\n", std::string(session.status().message()).c_str());
    return 1;
  }
  std::vector<Tensor> outputs;
  const double plan_start = NowMs();
  if (auto status = (*session)->Run(inputs, &outputs); !status.ok()) {
    std::fprintf(stderr, "onnx_run: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  const double first_ms = NowMs() - plan_start;
  const int64_t rss_one_kib = StatusKib("VmRSS");
  std::vector<std::unique_ptr<onnx::Session>> more_instances;
  for (int i = 1; i < flags.instances; ++i) {
    auto another = onnx::Session::Create(*compiled, options);
    std::vector<Tensor> ignored;
    if (!another.ok() || !(*another)->Run(inputs, &ignored).ok()) {
      std::fprintf(stderr, "onnx_run: instance %d failed\n", i + 1);
      return 1;
    }
    more_instances.push_back(*std::move(another));
  }
  if (!flags.dump_outputs.empty()) {
    for (size_t j = 0; j < outputs.size(); ++j) {
      std::ofstream(flags.dump_outputs + "/output_" + output_names[j] + ".bin", std::ios::binary)
          .write(reinterpret_cast<const char*>(outputs[j].data()),
                 static_cast<std::streamsize>(outputs[j].byte_size()));
    }
  }
  const int batch = inputs.empty() || inputs[0].shape().empty()
                        ? flags.batch
                        : static_cast<int>(inputs[0].shape()[0]);
  std::string result =
      StrCat("{\"engine\":\"brigade\",\"model\":\"", flags.model, "\",\"threads\":", flags.threads,
             ",\"batch\":", batch, ",\"precision\":\"",
             (*compiled)->precision() == onnx::ComputePrecision::kBf16 ? "bf16" : "fp32",
             "\",\"first_run_ms\":", fmt::format("{:.1f}", first_ms),
             fmt::format(",\"instances\":{},\"rss_mib_one_instance\":{:.1f},\"rss_mib\":{:.1f},"
                         "\"packed_mib\":{:.1f},\"released_mib\":{:.1f}",
                         flags.instances, static_cast<double>(rss_one_kib) / 1024,
                         static_cast<double>(StatusKib("VmRSS")) / 1024,
                         static_cast<double>((*compiled)->weights().total_bytes()) / (1 << 20),
                         static_cast<double>((*compiled)->released_bytes()) / (1 << 20)));
  if (!flags.compare.empty()) {
    bool all_ok = true;
    result += ",\"outputs\":[";
    for (size_t j = 0; j < outputs.size(); ++j) {
      const auto it = std::find_if(expected.begin(), expected.end(),
                                   [&](const Dumped& d) { return d.name == output_names[j]; });
      if (it == expected.end() || it->tensor.shape() != outputs[j].shape() ||
          it->tensor.dtype() != outputs[j].dtype()) {
        std::fprintf(stderr, "onnx_run: output %s missing or shaped differently\n",
                     output_names[j].c_str());
        return 1;
      }
      if (outputs[j].dtype() != DataType::kFp32) {
        // Indices and other non-float outputs (NonMaxSuppression's rows) must match exactly.
        const auto got = outputs[j].bytes();
        const auto want = it->tensor.bytes();
        const size_t element = DataTypeSize(outputs[j].dtype());
        int64_t differing = 0;
        for (size_t i = 0; i + element <= got.size(); i += element) {
          differing += std::memcmp(got.data() + i, want.data() + i, element) != 0;
        }
        all_ok = all_ok && differing == 0;
        result += fmt::format("{}{{\"name\":\"{}\",\"shape\":\"{}\",\"differing_elements\":{}}}",
                              j == 0 ? "" : ",", output_names[j],
                              brigade::ShapeToString(outputs[j].shape()), differing);
        continue;
      }
      double max_abs = 0, max_rel = 0, max_want = 0;
      int64_t violations = 0;
      const auto got = outputs[j].values<float>();
      const auto want = it->tensor.values<float>();
      for (size_t i = 0; i < got.size(); ++i) {
        const double diff = std::abs(static_cast<double>(got[i]) - want[i]);
        max_abs = std::max(max_abs, diff);
        max_want = std::max(max_want, std::abs(static_cast<double>(want[i])));
        max_rel = std::max(max_rel, diff / std::max(1e-6, std::abs(static_cast<double>(want[i]))));
        if (!(diff <= 1e-5 + 1e-4 * std::abs(static_cast<double>(want[i])))) ++violations;
      }
      all_ok = all_ok && violations == 0;
      // Rows of a [N, C] output (classifier logits) whose argmax agrees with the expected one.
      int64_t rows = 0, top1_agree = 0;
      if (outputs[j].shape().size() == 2 && outputs[j].shape()[1] > 1) {
        const auto width = static_cast<size_t>(outputs[j].shape()[1]);
        rows = outputs[j].shape()[0];
        for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
          const auto row_got = got.subspan(r * width, width);
          const auto row_want = want.subspan(r * width, width);
          top1_agree += std::max_element(row_got.begin(), row_got.end()) - row_got.begin() ==
                        std::max_element(row_want.begin(), row_want.end()) - row_want.begin();
        }
      }
      result += fmt::format(
          "{}{{\"name\":\"{}\",\"max_abs_err\":{:.3g},\"max_rel_err\":{:.3g},"
          "\"max_abs_expected\":{:.3g},\"outside_1e-4rel_1e-5abs\":{},\"rows\":{},"
          "\"top1_agree\":{}}}",
          j == 0 ? "" : ",", output_names[j], max_abs, max_rel, max_want, violations, rows,
          top1_agree);
    }
    result += fmt::format("],\"match\":{}}}", all_ok ? "true" : "false");
    std::printf("%s\n", result.c_str());
    return all_ok ? 0 : 3;
  }
  for (int i = 0; i < flags.warmup; ++i) (void)(*session)->Run(inputs, &outputs);
  (*session)->ResetProfile();
  std::vector<double> times;
  for (int i = 0; i < flags.runs; ++i) {
    const double start = NowMs();
    (void)(*session)->Run(inputs, &outputs);
    times.push_back(NowMs() - start);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  if (flags.profile) PrintProfile(**session, flags.runs);
  const double gflop = static_cast<double>((*session)->last_run_flops()) / 1e9;
  result += fmt::format(
      ",\"runs\":{},\"median_ms\":{:.3f},\"p90_ms\":{:.3f},\"min_ms\":{:.3f},\"gflop\":{:.3f},"
      "\"gflops_per_s\":{:.1f},\"steps\":{},\"arena_mib\":{:.1f},\"chunk_rows\":{}}}",
      flags.runs, median, times[std::min(times.size() - 1, times.size() * 9 / 10)], times[0], gflop,
      gflop / (median / 1e3), (*session)->last_plan()->steps.size(),
      static_cast<double>((*session)->arena_bytes()) / (1 << 20), (*session)->last_chunk_rows());
  std::printf("%s\n", result.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto next = [&](int* out) { return i + 1 < argc && brigade::ParseInteger(argv[++i], out); };
    if (flag == "--model" && i + 1 < argc) {
      flags.model = argv[++i];
    } else if (flag == "--compare" && i + 1 < argc) {
      flags.compare = argv[++i];
    } else if (flag == "--dump-outputs" && i + 1 < argc) {
      flags.dump_outputs = argv[++i];
    } else if (flag == "--precision" && i + 1 < argc) {
      flags.precision = argv[++i];
    } else if ((flag == "--threads" && next(&flags.threads)) ||
               (flag == "--batch" && next(&flags.batch)) ||
               (flag == "--runs" && next(&flags.runs)) ||
               (flag == "--instances" && next(&flags.instances)) ||
               (flag == "--warmup" && next(&flags.warmup)) ||
               (flag == "--split-budget-kib" && next(&flags.split_budget_kib))) {
      // Parsed into flags by next().
    } else if (flag == "--keep-sources") {
      flags.keep_sources = true;
    } else if (flag == "--no-optimize") {
      flags.optimize = false;
    } else if (flag == "--peak") {
      flags.peak = true;
    } else if (flag == "--inspect") {
      flags.inspect = true;
    } else if (flag == "--profile") {
      flags.profile = true;
    } else {
      std::fprintf(stderr, "onnx_run: bad argument %s (see the header of bench/onnx_run.cc)\n",
                   flag.c_str());
      return 2;
    }
  }
  if (flags.peak) {
    const Peak peak = MeasurePeak(flags.threads);
    std::printf("{\"threads\":%d,\"fma_lanes\":%d,\"fma_peak_gflops\":%.1f}\n", flags.threads,
                peak.lanes, peak.gflops);
    return 0;
  }
  if (flags.inspect) {
    onnx::InspectOptions options;
    options.batch = flags.batch;
    options.optimize = flags.optimize;
    auto text = onnx::InspectOnnxModel(flags.model, options);
    if (!text.ok()) {
      std::fprintf(stderr, "onnx_run: %s\n", std::string(text.status().message()).c_str());
      return 1;
    }
    std::printf("%s", text->c_str());
    return 0;
  }
  if (flags.model.empty() || flags.threads < 1 || flags.batch < 1 || flags.runs < 1) {
    std::fprintf(stderr, "usage: onnx_run --model M.onnx [--threads N] [--batch B] ...\n");
    return 2;
  }
  omp_set_num_threads(flags.threads);
  return Run(flags);
}
