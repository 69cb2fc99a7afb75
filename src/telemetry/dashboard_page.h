#ifndef BRIGADE_TELEMETRY_DASHBOARD_PAGE_H_
#define BRIGADE_TELEMETRY_DASHBOARD_PAGE_H_

// The live dashboard (web/dashboard.html with its stylesheet and scripts inlined at build time by
// web/embed_dashboard.cmake): one self-contained HTML page that polls /metrics and draws, per
// model, requests/s, errors, queue, in-flight, busy instances, cache hit rate, the t0→t5 stage
// breakdown with p50/p90/p99, and the batch-size histogram. Serve it at GET / with
// kDashboardContentType; it fetches /metrics from the same origin.
//
// The bytes are static and immutable: safe from any thread, valid for the whole process.

#include <string_view>

namespace brigade::telemetry {

inline constexpr std::string_view kDashboardContentType = "text/html; charset=utf-8";

std::string_view DashboardPage();

}  // namespace brigade::telemetry

#endif  // BRIGADE_TELEMETRY_DASHBOARD_PAGE_H_
