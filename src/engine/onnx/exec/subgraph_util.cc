#include "engine/onnx/exec/subgraph_util.h"

#include <algorithm>
#include <utility>

#include "core/strings.h"
#include "engine/onnx/exec/compiled_model.h"

namespace brigade::engine::onnx {

std::string Describe(const ValueInfo& info) {
  return StrCat(DataTypeName(info.dtype), " ", ShapeToString(info.shape));
}

// The subgraph's formal inputs: those before its captured ones (attribute.h).
size_t FormalInputs(const Attribute& subgraph) {
  return subgraph.g->inputs().size() -
         std::min(subgraph.g->inputs().size(), subgraph.captures.size());
}

absl::Status CheckCaptures(const KernelContext& ctx, const Attribute& subgraph,
                           std::string_view what) {
  if (subgraph.captures.size() > subgraph.g->inputs().size()) {
    return ctx.Error(what, " captures more values than it has inputs");
  }
  for (int index : subgraph.captures) {
    if (index < 0 || !ctx.has_input(static_cast<size_t>(index))) {
      return ctx.Error(what, ": captured value (node input ", index, ") is missing");
    }
  }
  return absl::OkStatus();
}

// Appends the descriptions of `subgraph`'s captured inputs: the node's inputs they come from,
// known at plan time when the enclosing plan knows them.
void AppendCaptured(const KernelContext& ctx, const Attribute& subgraph,
                    std::vector<ValueInfo>* infos) {
  for (int index : subgraph.captures) {
    ValueInfo info = ctx.input(static_cast<size_t>(index));
    info.layout = Layout{};  // control-flow nodes take plain inputs only (no blocked_inputs)
    infos->push_back(std::move(info));
  }
}

absl::StatusOr<SubgraphPlan> PlanNamedSubgraph(const KernelContext& ctx, const Attribute& subgraph,
                                               std::span<const ValueInfo> inputs,
                                               std::string_view what) {
  auto planned = PlanSubgraph(*subgraph.g, inputs, ctx);
  if (!planned.ok()) {
    return absl::Status(planned.status().code(),
                        StrCat("node '", ctx.node->name, "' (", ctx.node->op_type, "): ", what,
                               ": ", planned.status().message()));
  }
  return planned;
}

// Per node input: whether it is a captured value one of the node's subgraphs needs at plan
// time. Each subgraph is analysed once (ShapeDecidingInputs), whatever it captures, so nested
// subgraphs cost their size, not a product of capture counts.
std::vector<bool> CapturedValueInputs(const Node& node) {
  std::vector<bool> needed(node.inputs.size(), false);
  for (const Attribute* subgraph : Subgraphs(node)) {
    if (subgraph->captures.empty()) continue;
    const size_t formal = FormalInputs(*subgraph);
    const std::vector<bool> deciding = ShapeDecidingInputs(*subgraph->g);
    for (size_t j = 0; j < subgraph->captures.size(); ++j) {
      const size_t input = static_cast<size_t>(subgraph->captures[j]);
      if (input < needed.size() && formal + j < deciding.size() && deciding[formal + j]) {
        needed[input] = true;
      }
    }
  }
  return needed;
}

}  // namespace brigade::engine::onnx
