#ifndef BRIGADE_SCHEDULER_SCHEDULER_METRICS_H_
#define BRIGADE_SCHEDULER_SCHEDULER_METRICS_H_

// AppendSchedulerMetrics: the scheduler's decisions as Prometheus text families, so every
// batching and admission decision can be explained from a scrape of GET /metrics. Every series
// carries the labels model and version; the families are (prefix brigade_scheduler_):
//
//   info{policy}                         1, naming the batch policy the version runs
//   admitted_total                       requests the queue accepted
//   refused_total{reason}                refused at once: queue_full | level_full | expired |
//                                        predicted_late (admission control's shed) | draining
//   refusal_latency_seconds              histogram: arrival at the queue to the refusal's answer
//   timeouts_total                       left the queue when their timeout passed (REJECT)
//   cancellations_total                  cancelled by their client while queued or before their
//                                        batch started (work skipped)
//   delayed_total                        timed out under DELAY: moved behind their level
//   batches_total{reason}                released batches by why they left (batch_policy.h)
//   batch_size                           histogram: rows of each released batch
//   batch_wait_seconds                   histogram: the oldest request's queue wait at release
//   predicted_p99_seconds                histogram: the profile's p99 service time for the
//                                        released size (batches that had a prediction)
//   service_seconds                      histogram: measured service time of executed batches
//   predicted_batches_total              executed batches that had a prediction
//   slower_than_predicted_p99_total      of those, how many took longer than predicted
//   p50_prediction_error_seconds_total   sum of |measured - predicted p50| over those
//   queue_requests, held_for_ordering    gauges: live queue and ordering state
//   arrival_rows_per_second, utilization gauges: the load signals the policies see
//   profile_p50_seconds, profile_p99_seconds
//                                        gauges {instance, batch_size}: the latency profile the
//                                        adaptive policies and admission control predict with
//
// Durations are exposed in seconds. The output passes `promtool check metrics` without lints
// (scheduler_metrics_test.cc runs it when promtool is installed).
//
// Thread safety: a pure function of its arguments.

#include <span>
#include <string>

#include "scheduler/scheduler_stats.h"

namespace brigade::scheduler {

// Appends the families above for `schedulers` (one snapshot per loaded version) to `out`;
// appends nothing when `schedulers` is empty.
void AppendSchedulerMetrics(std::span<const SchedulerSnapshot> schedulers, std::string* out);

}  // namespace brigade::scheduler

#endif  // BRIGADE_SCHEDULER_SCHEDULER_METRICS_H_
