#ifndef BRIGADE_FRONTEND_REQUEST_REPORT_H_
#define BRIGADE_FRONTEND_REQUEST_REPORT_H_

// RequestReport: what a front end keeps about one inference request from its arrival until its
// answer is written, and the one place that turns it into the RequestObserver's record of the
// finished request. The HTTP handler, the unary gRPC reactor and the streaming gRPC reactor all
// report through ReportRequestDone; only what differs between them (protocol, the code sent,
// whether and when the answer was written, what an unwritten answer counts as, the trace
// parent) is passed as a RequestEnd.
//
// Rules every transport gets from here:
//   * names: the client's model/version until a response names the resolved ones (TakeResponse);
//   * t5: stamped into the report's clock only when the whole answer was written;
//   * status: a failure is reported as it was answered; an OK answer that never reached the
//     client is reported with the transport's `unwritten` code and message instead.
//
// A plain value type (not synchronized; one owner at a time, like the request). The Done that
// DoneFor returns borrows the report and `end.parent`: use it before either changes or goes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/infer_request.h"
#include "core/infer_response.h"
#include "core/stage_clock.h"
#include "server/request_observer.h"
#include "telemetry/trace_context.h"

namespace brigade::frontend {

struct RequestReport {
  std::string model{};    // as the client named it, then as the response resolved it
  std::string version{};  // likewise ("" = the version policy's choice, before a response)
  std::string id{};
  StageClock clock{};     // the transport's arrival and decode stamps; the response's once it came
  absl::Status status{};  // what the request was answered with
  int batch_size = 0;
  bool cache_hit = false;
  std::vector<StepRecord> steps{};  // an ensemble's steps, for the trace

  // Takes the resolved names, the stage stamps and the execution facts from the response that
  // answers the request (its status stays the transport's to set: encoding may still fail).
  void TakeResponse(const InferResponse& response);
};

// How the answer left one transport.
struct RequestEnd {
  Protocol protocol = Protocol::kHttp;
  std::optional<int> protocol_code{};  // HTTP status or gRPC code sent, when the transport knows
  bool written = false;                // the whole answer reached the client
  int64_t sent_ns = 0;                 // t5, when written
  // The W3C trace context the request arrived with; null for none. Borrowed for the call.
  const std::optional<telemetry::TraceContext>* parent = nullptr;
  // What an OK request counts as when its answer was not written.
  absl::StatusCode unwritten_code = absl::StatusCode::kCancelled;
  std::string_view unwritten_message = "the answer was not written";
};

// The observer's record of the request: stamps t5 into `report->clock` when `end.written`, and
// borrows `*report` and `*end.parent` (see the file comment).
RequestObserver::Done DoneFor(RequestReport* report, const RequestEnd& end);

// DoneFor, handed to `observer`; nothing when `observer` is null.
void ReportRequestDone(RequestObserver* observer, RequestReport* report, const RequestEnd& end);

}  // namespace brigade::frontend

#endif  // BRIGADE_FRONTEND_REQUEST_REPORT_H_
