#ifndef BRIGADE_ENGINE_ONNX_PASSES_PASS_H_
#define BRIGADE_ENGINE_ONNX_PASSES_PASS_H_

// GraphPass: one graph rewrite. Each pass lives in its own file pair with a header comment
// showing the rewrite as a before → after example, and its own unit test.
//
// Contract: Run() leaves the graph valid (topologically sorted, every input defined, removed
// nodes compacted away) and computing the same outputs; it returns whether anything changed.
// Errors are reserved for broken invariants; a pattern that does not match is simply skipped.
// Thread safety: passes are stateless; each Run() works on the graph it is given.

#include <string_view>

#include "absl/status/statusor.h"
#include "engine/onnx/ir/graph.h"

namespace brigade::engine::onnx {

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<bool> Run(Graph* graph) const = 0;
};

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_PASSES_PASS_H_
