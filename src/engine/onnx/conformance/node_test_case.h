#ifndef BRIGADE_ENGINE_ONNX_CONFORMANCE_NODE_TEST_CASE_H_
#define BRIGADE_ENGINE_ONNX_CONFORMANCE_NODE_TEST_CASE_H_

// One ONNX backend node test (a directory with model.onnx and test_data_set_N/{input,output}_K.pb)
// run through Brigade's full pipeline — load, optimize, compile, execute — and compared with the
// expected outputs using ONNX's backend-test tolerances (rtol 1e-3, atol 1e-7 for floats, exact
// for integers and bools).
// Thread safety: free functions.

#include <string>

#include "absl/status/status.h"

namespace brigade::engine::onnx {

enum class NodeTestOutcome { kPassed, kFailed, kSkipped };

struct NodeTestResult {
  NodeTestOutcome outcome = NodeTestOutcome::kSkipped;
  // Why it failed or was skipped.
  std::string detail;
};

// Runs the test in `dir`. Skipped when the model uses an op the engine does not implement at all;
// any other problem (unsupported attribute, wrong result, load error) is a failure.
NodeTestResult RunNodeTest(const std::string& dir);

}  // namespace brigade::engine::onnx

#endif  // BRIGADE_ENGINE_ONNX_CONFORMANCE_NODE_TEST_CASE_H_
