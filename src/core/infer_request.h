#ifndef BRIGADE_CORE_INFER_REQUEST_H_
#define BRIGADE_CORE_INFER_REQUEST_H_

// InferRequest: one inference request in flight, protocol-neutral, from the codec that decoded it
// to the callback that answers it.
//
// Ownership: a request travels as std::unique_ptr<InferRequest>; exactly one stage owns it at a
// time (transport → server → scheduler queue → instance). Whoever owns it last must call
// Complete() exactly once; the destructor does not answer, so a dropped request is a bug that the
// debug-build check in the destructor reports.
//
// Inputs usually *borrow* the transport's receive buffer (see Tensor::View), which the tensors
// keep alive, so decoding a binary tensor never copies it.
//
// Thread safety: none needed for the data (single owner). `cancel` is shared with the transport,
// which sets it from its own thread when the client goes away; readers poll it.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "core/deadline.h"
#include "core/infer_response.h"
#include "core/parameters.h"
#include "core/stage_clock.h"
#include "core/tensor.h"

namespace brigade {

// Which front end a request came through, for metrics and logs.
enum class Protocol : uint8_t { kInProcess = 0, kHttp, kGrpc };
std::string_view ProtocolName(Protocol protocol);

struct InferInput {
  std::string name;
  Tensor tensor;
  Parameters parameters;
};

// An output the client asked for. `binary` is the HTTP binary extension's `binary_data` (resolved
// by the codec, including the request-wide `binary_data_output`); other transports ignore it.
struct RequestedOutput {
  std::string name;
  Parameters parameters;
  bool binary = false;
};

// Set by the transport when the client disconnects or cancels; checked before work starts.
class CancelFlag {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> cancelled_{false};
};

// Called exactly once with the response or the error that ends the request.
using InferCallback = absl::AnyInvocable<void(absl::StatusOr<InferResponse>)>;

// What the owner of the request path keeps with a request while it travels (the server's request
// pipeline keeps the route it chose and the cache's pending store there). Opaque to every stage
// below that owner, which only carries it along with the request.
class RequestContext {
 public:
  virtual ~RequestContext() = default;
};

struct InferRequest {
  InferRequest() = default;
  InferRequest(const InferRequest&) = delete;
  InferRequest& operator=(const InferRequest&) = delete;
  InferRequest(InferRequest&&) = default;
  InferRequest& operator=(InferRequest&&) = default;
  ~InferRequest();

  std::string id;
  std::string model_name;
  // Requested version; -1 means "let the version policy choose" (the highest ready version).
  int64_t model_version = -1;
  Parameters parameters;
  std::vector<InferInput> inputs;
  // Empty means "all outputs" (with `binary_data_output` deciding their encoding on HTTP).
  std::vector<RequestedOutput> outputs;
  bool all_outputs_binary = false;

  // Schedule policy: 0 = the model's default level, 1 = highest.
  uint32_t priority = 0;
  // From the `timeout` parameter (µs) or the transport's own deadline; earliest wins.
  Deadline deadline;
  Protocol protocol = Protocol::kInProcess;
  StageClock clock;
  std::shared_ptr<CancelFlag> cancel;
  // See RequestContext; null until the request path's owner sets it.
  std::shared_ptr<RequestContext> context;

  // The reply path; see the ownership contract above.
  InferCallback on_complete;

  // The input with this name, or null.
  const InferInput* FindInput(std::string_view input_name) const;

  bool cancelled() const { return cancel != nullptr && cancel->cancelled(); }

  // Answers the request (once). Later calls are ignored.
  void Complete(absl::StatusOr<InferResponse> result);
  bool completed() const { return on_complete == nullptr; }
};

}  // namespace brigade

#endif  // BRIGADE_CORE_INFER_REQUEST_H_
