#include "engine/onnx/inspect.h"

#include <map>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"
#include "engine/onnx/exec/session.h"
#include "engine/onnx/kernels/registry.h"
#include "engine/onnx/loader/model_loader.h"
#include "engine/onnx/passes/optimizer.h"

namespace brigade::engine::onnx {
namespace {

std::string OpName(const Node& node) {
  return node.domain.empty() ? node.op_type : StrCat(node.domain, ".", node.op_type);
}

void AppendOps(const Graph& graph, std::string* out) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes()) ++counts[OpName(node)];
  std::vector<std::pair<int, std::string>> sorted;
  sorted.reserve(counts.size());
  for (const auto& [op, n] : counts) sorted.emplace_back(-n, op);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [n, op] : sorted) {
    fmt::format_to(std::back_inserter(*out), "    {:>5}  {}\n", -n, op);
  }
  // Subgraphs (If branches, Loop and Scan bodies), each with its ops on one line.
  for (const Node& node : graph.nodes()) {
    for (const auto& [name, attribute] : node.attributes.entries()) {
      if (attribute.kind != Attribute::Kind::kGraph || attribute.g == nullptr) continue;
      std::map<std::string, int> inner;
      for (const Node& inner_node : attribute.g->nodes()) ++inner[OpName(inner_node)];
      std::string ops;
      for (const auto& [op, count] : inner) {
        ops += fmt::format("{}{} {}", ops.empty() ? "" : ", ", count, op);
      }
      fmt::format_to(std::back_inserter(*out), "           {} {}: {} nodes ({})\n", node.name, name,
                     attribute.g->nodes().size(), ops);
    }
  }
}

void AppendTensors(const Graph& graph, const std::vector<ValueId>& ids, std::string* out) {
  for (ValueId id : ids) {
    const Value& v = graph.value(id);
    fmt::format_to(std::back_inserter(*out), "    {}  {}  {}\n", v.name, DataTypeName(v.dtype),
                   v.shape.has_value() ? ShapeToString(*v.shape) : std::string("[?]"));
  }
}

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", bytes, units[u]);
}

// Zero inputs for the plan: the first variable dim takes `batch`, other variable dims 1.
absl::StatusOr<std::vector<Tensor>> PlanInputs(const Graph& graph, int batch) {
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    Shape shape = v.shape.value_or(Shape{});
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0) shape[d] = d == 0 ? batch : 1;
    }
    BRIGADE_ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(v.dtype, shape));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace

absl::StatusOr<std::string> InspectOnnxModel(const std::string& path,
                                             const InspectOptions& options) {
  LoadOptions load;
  load.require_supported = false;
  BRIGADE_ASSIGN_OR_RETURN(LoadedModel loaded, LoadOnnxFile(path, load));
  Graph& graph = loaded.graph;
  std::string out;
  auto add = [&out]<typename... Args>(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
  };
  add("model       {}\n", path);
  add("producer    {} {}   IR version {}\n", loaded.producer_name, loaded.producer_version,
      loaded.ir_version);
  std::string opsets;
  for (const auto& [domain, version] : graph.opsets()) {
    opsets += StrCat(domain.empty() ? "ai.onnx" : domain, ":", version, " ");
  }
  add("opsets      {}\n", opsets);
  add("inputs\n");
  AppendTensors(graph, graph.inputs(), &out);
  add("outputs\n");
  AppendTensors(graph, graph.outputs(), &out);
  int64_t params = 0;
  size_t param_bytes = 0;
  for (size_t i = 0; i < graph.num_values(); ++i) {
    const Value& v = graph.value(static_cast<ValueId>(i));
    if (!v.constant.has_value()) continue;
    params += v.constant->num_elements();
    param_bytes += v.constant->byte_size();
  }
  add("parameters  {} ({})\n", params, HumanBytes(static_cast<double>(param_bytes)));
  add("ops ({} nodes)\n", graph.nodes().size());
  AppendOps(graph, &out);

  // Support: the first node without a kernel, if any.
  std::string unsupported;
  for (const Node& node : graph.nodes()) {
    if (KernelRegistry::Get().Find(node.domain, node.op_type, node.opset) == nullptr) {
      unsupported = StrCat("node '", node.name, "' (", OpName(node), ", opset ", node.opset,
                           ") has no kernel");
      break;
    }
  }
  if (options.optimize && unsupported.empty()) {
    BRIGADE_ASSIGN_OR_RETURN(OptimizeReport report, OptimizeGraph(&graph));
    add("passes      nodes\n");
    add("    {:>5}  (loaded)\n", report.nodes_before);
    for (const PassReport& pass : report.passes) {
      add("    {:>5}  {}{}\n", pass.nodes_after, pass.pass, pass.changed ? "" : " (no change)");
    }
    add("ops after optimization ({} nodes)\n", graph.nodes().size());
    AppendOps(graph, &out);
  }
  if (!unsupported.empty()) {
    add("plan        not runnable: {}\n", unsupported);
    return out;
  }
  BRIGADE_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, PlanInputs(graph, options.batch));
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<CompiledModel> compiled,
                           CompiledModel::Compile(path, std::move(graph)));
  Session::Options session_options;
  session_options.split_budget_bytes = 0;  // describe the batch-`batch` plan itself
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                           Session::Create(compiled, session_options));
  std::vector<Tensor> outputs;
  const absl::Status run = session->Run(inputs, &outputs);
  if (!run.ok() || session->last_plan() == nullptr) {
    add("plan        not runnable with zero inputs at batch {}: {}\n", options.batch,
        run.message());
    return out;
  }
  const ExecutionPlan& plan = *session->last_plan();
  int reorders = 0;
  for (const auto& step : plan.steps) reorders += step.op_type == "Reorder";
  add("plan (batch {})\n", options.batch);
  add("    steps          {} ({} layout reorders)\n", plan.steps.size(), reorders);
  add("    FLOPs          {} ({:.3f} G; conv/matmul, 2 x MAC)\n", plan.total_flops,
      static_cast<double>(plan.total_flops) / 1e9);
  add("    arena          {}\n", HumanBytes(static_cast<double>(plan.arena_bytes)));
  add("    packed weights {} in {} buffers\n",
      HumanBytes(static_cast<double>(compiled->weights().total_bytes())),
      compiled->weights().count());
  return out;
}

}  // namespace brigade::engine::onnx
