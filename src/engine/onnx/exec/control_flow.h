#ifndef BRIGADE_ENGINE_ONNX_EXEC_CONTROL_FLOW_H_
#define BRIGADE_ENGINE_ONNX_EXEC_CONTROL_FLOW_H_

// ONNX control flow: If, Loop and Scan (every opset the engine imports, 7–17: tensors only, the
// engine has no sequence or optional types), as kernels whose factories plan their subgraphs
// (planner.h PlanSubgraph) for the node's input signature.
//
//   If    plans both branches (only the taken one when the condition is known at plan time);
//         both must give every output the same type and shape, else UNIMPLEMENTED naming the
//         node (ONNX lets them differ; one static plan cannot). Run() runs the taken branch
//         straight into the node's outputs.
//   Loop  plans the body once, with the iteration number a run-time value and the condition
//         input known true (the body only ever runs after a true condition), or once per
//         iteration when the body's shapes depend on the iteration number (the trip count must
//         then be known at plan time, at most kMaxUnrolledPlans). Loop-carried values must keep
//         their type and shape across iterations (UNIMPLEMENTED otherwise). The trip count and
//         the condition may be run-time values, except with scan outputs: their size is the
//         iteration count, which must then be known at plan time (a constant, computed from
//         shapes, or the contents of a graph input, which join the plan key). Run() alternates
//         the carried values between two scratch buffers and writes scan outputs in place.
//         More than kMaxLoopIterations iterations fail the request (RESOURCE_EXHAUSTED).
//   Scan  plans the body once per signature; the sequence length comes from the shapes, so it
//         is always known. Slices along axis 0 are read and written in place, others copied.
//         Scan-8 (a batch axis first, the body run per row) runs whole sequences only: a
//         sequence_lens entry shorter than the sequence fails (UNIMPLEMENTED).
//
// Each subgraph's arena is part of the node's scratch, so the enclosing plan sizes and places
// it; Run() allocates nothing. Values a subgraph reads from enclosing graphs arrive as the
// node's extra inputs (attribute.h), planned as known when the enclosing plan knows them.
//
// Thread safety: like every kernel (kernel.h): one plan, one thread at a time.

#include <cstdint>

namespace brigade::engine::onnx {

// Iterations one Loop node may run per request before the request fails.
inline constexpr int64_t kMaxLoopIterations = int64_t{1} << 20;
// Body plans one Loop node may build when its body's shapes depend on the iteration number.
inline constexpr int64_t kMaxUnrolledPlans = 64;

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_EXEC_CONTROL_FLOW_H_
