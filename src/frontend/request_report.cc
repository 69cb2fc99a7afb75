#include "frontend/request_report.h"

namespace brigade::frontend {

void RequestReport::TakeResponse(const InferResponse& response) {
  model = response.model_name;
  version = response.model_version;
  clock = response.clock;
  batch_size = response.execution.batch_size;
  cache_hit = response.execution.cache_hit;
  steps = response.steps;
}

RequestObserver::Done DoneFor(RequestReport* report, const RequestEnd& end) {
  if (end.written) report->clock.Mark(Stage::kSent, end.sent_ns);
  RequestObserver::Done done;
  done.model = report->model;
  done.version = report->version;
  done.request_id = report->id;
  done.protocol = end.protocol;
  done.status =
      end.written || !report->status.ok()
          ? report->status
          : absl::Status(end.unwritten_code, absl::string_view(end.unwritten_message.data(),
                                                               end.unwritten_message.size()));
  done.protocol_code = end.protocol_code;
  done.clock = &report->clock;
  done.parent = end.parent;
  done.batch_size = report->batch_size;
  done.cache_hit = report->cache_hit;
  done.steps = report->steps;
  return done;
}

void ReportRequestDone(RequestObserver* observer, RequestReport* report, const RequestEnd& end) {
  if (observer == nullptr) return;
  observer->OnRequestDone(DoneFor(report, end));
}

}  // namespace brigade::frontend
