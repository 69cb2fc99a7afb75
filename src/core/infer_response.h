#ifndef BRIGADE_CORE_INFER_RESPONSE_H_
#define BRIGADE_CORE_INFER_RESPONSE_H_

// InferResponse: the protocol-neutral answer to one InferRequest. Codecs turn it into JSON,
// binary-extension bytes or a gRPC ModelInferResponse; nothing here knows about wire formats.
// A plain value type; output tensors may share storage with a batched backend output.

#include <string>
#include <vector>

#include "core/parameters.h"
#include "core/stage_clock.h"
#include "core/tensor.h"

namespace brigade {

struct InferOutput {
  std::string name;
  Tensor tensor;
  Parameters parameters;
};

// How an answer was produced. Brigade-internal: never encoded for clients; read by metrics,
// traces and the access log.
struct ExecutionInfo {
  int batch_size = 0;      // rows of the batch the request ran in; 0 = it did not execute
  bool cache_hit = false;  // answered from the response cache
};

// One step of a composed model (an ensemble's step) as it ran: the step's model and its own
// stage stamps, carried to the trace (a span per step). A step run in the server (a switch, a
// fusion) has no model: its stamps are kInferStart and kInferEnd around its work.
struct StepRecord {
  std::string model_name{};
  std::string model_version{};
  StageClock clock{};
  ExecutionInfo execution{};
  // The step as messages name it ("step 2 (switch 'by_group')"); "" when not known.
  std::string step{};
  // A switch's: the branch it took.
  std::string branch{};
};

struct InferResponse {
  std::string model_name;
  std::string model_version;  // resolved version, decimal ("1")
  std::string id;             // echoed from the request
  Parameters parameters;
  std::vector<InferOutput> outputs;
  // The request's stage stamps, carried back so the transport can add t5 and report the whole.
  StageClock clock;
  ExecutionInfo execution;
  // The steps that answered it, in the order they finished; empty for a plain model.
  std::vector<StepRecord> steps;

  // The output with this name, or null.
  const InferOutput* FindOutput(std::string_view output_name) const {
    for (const InferOutput& output : outputs) {
      if (output.name == output_name) return &output;
    }
    return nullptr;
  }
};

}  // namespace brigade

#endif  // BRIGADE_CORE_INFER_RESPONSE_H_
