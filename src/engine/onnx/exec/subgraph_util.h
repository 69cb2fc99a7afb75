#ifndef BRIGADE_ENGINE_ONNX_EXEC_SUBGRAPH_UTIL_H_
#define BRIGADE_ENGINE_ONNX_EXEC_SUBGRAPH_UTIL_H_

// What the control-flow kernels (control_flow.cc: If, Loop; scan_kernel.cc: Scan) share: their
// scratch layout, the checks and descriptions of a subgraph's captured inputs (attribute.h), and
// planning a subgraph with errors that name the node. Internal to exec/.
//
// Thread safety: free functions and a plan-time value type. Failure: INVALID_ARGUMENT (or the
// planner's status) naming the node and `what`.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/onnx/exec/planner.h"
#include "engine/onnx/ir/attribute.h"
#include "engine/onnx/ir/graph.h"
#include "engine/onnx/kernels/kernel.h"

namespace brigade::engine::onnx {

inline constexpr size_t kScratchAlignment = 64;

inline size_t AlignToScratch(size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

// Carves the node's scratch into aligned pieces at plan time; Run() adds the offsets to
// RunContext::scratch.
class ScratchLayout {
 public:
  size_t Add(size_t bytes) {
    const size_t offset = bytes_;
    bytes_ += AlignToScratch(bytes);
    return offset;
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

// A carried value's (Loop) or scan state's (Scan) two scratch buffers, which iterations
// alternate between.
struct CarriedBuffers {
  size_t bytes = 0;
  size_t a = 0, b = 0;  // scratch offsets
};

// "fp32 [2, 3]": a value's type and shape, for errors.
std::string Describe(const ValueInfo& info);

// The subgraph's formal inputs: those before its captured ones (attribute.h).
size_t FormalInputs(const Attribute& subgraph);

// INVALID_ARGUMENT unless every captured value of `subgraph` is an input the node has.
absl::Status CheckCaptures(const KernelContext& ctx, const Attribute& subgraph,
                           std::string_view what);

// Appends the descriptions of `subgraph`'s captured inputs: the node's inputs they come from,
// known at plan time when the enclosing plan knows them.
void AppendCaptured(const KernelContext& ctx, const Attribute& subgraph,
                    std::vector<ValueInfo>* infos);

// PlanSubgraph, with the node and `what` in its errors.
absl::StatusOr<SubgraphPlan> PlanNamedSubgraph(const KernelContext& ctx, const Attribute& subgraph,
                                               std::span<const ValueInfo> inputs,
                                               std::string_view what);

// Per node input: whether it is a captured value one of the node's subgraphs needs at plan time.
std::vector<bool> CapturedValueInputs(const Node& node);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_SUBGRAPH_UTIL_H_
