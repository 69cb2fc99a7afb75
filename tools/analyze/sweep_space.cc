#include "tools/analyze/sweep_space.h"

#include <algorithm>

#include "core/strings.h"

namespace brigade::analyze {
namespace {

absl::StatusOr<int64_t> ParseMicroseconds(std::string_view text, std::string_view policy) {
  int64_t value = 0;
  if (!ParseInteger(text, &value) || value < 0) {
    return absl::InvalidArgumentError(
        StrCat("batching policy '", policy, "': '", text, "' is not a number of microseconds"));
  }
  return value;
}

absl::Status CheckAxis(const std::vector<int>& values, std::string_view axis, int minimum) {
  if (values.empty()) return absl::InvalidArgumentError(StrCat("no ", axis, " to sweep"));
  for (int value : values) {
    if (value < minimum) {
      return absl::InvalidArgumentError(StrCat(axis, " ", value, " is below ", minimum));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string BatchingPolicy::Label() const {
  switch (kind) {
    case BatchingKind::kNone:
      return "none";
    case BatchingKind::kFixedDelay:
      return StrCat("delay:", delay_us);
    case BatchingKind::kP99Model:
      return StrCat("p99:", target_p99_us);
    case BatchingKind::kQueueFormula:
      return target_p99_us > 0 ? StrCat("formula:", target_p99_us) : std::string("formula");
  }
  return "?";
}

absl::StatusOr<BatchingPolicy> ParseBatchingPolicy(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  const bool has_value = colon != std::string_view::npos;
  const std::string_view value = has_value ? text.substr(colon + 1) : std::string_view();
  BatchingPolicy policy;
  if (kind == "none" && !has_value) return policy;
  if (kind == "delay" && has_value) {
    policy.kind = BatchingKind::kFixedDelay;
    auto delay = ParseMicroseconds(value, text);
    if (!delay.ok()) return delay.status();
    policy.delay_us = *delay;
    return policy;
  }
  if (kind == "p99" && has_value) {
    policy.kind = BatchingKind::kP99Model;
    auto target = ParseMicroseconds(value, text);
    if (!target.ok()) return target.status();
    if (*target == 0) {
      return absl::InvalidArgumentError(
          StrCat("batching policy '", text, "': the p99 target must be > 0"));
    }
    policy.target_p99_us = *target;
    return policy;
  }
  if (kind == "formula") {
    policy.kind = BatchingKind::kQueueFormula;
    if (has_value) {
      auto target = ParseMicroseconds(value, text);
      if (!target.ok()) return target.status();
      policy.target_p99_us = *target;
    }
    return policy;
  }
  return absl::InvalidArgumentError(
      StrCat("batching policy '", text, "' is not none, delay:US, p99:US, formula or formula:US"));
}

std::string ServingConfig::Label() const {
  const std::string threads_text =
      threads == 0 ? StrCat("auto(", effective_threads, ")") : StrCat(threads);
  return StrCat("mb=", max_batch_size, " ", policy.Label(), " i=", instances, " t=", threads_text);
}

int EffectiveThreads(int threads, int instances, int cores) {
  if (threads > 0) return threads;
  return std::max(1, cores / std::max(1, instances));
}

absl::StatusOr<SweepPlan> PlanSweep(const SweepSpace& space) {
  if (space.variants.empty()) return absl::InvalidArgumentError("no variants to sweep");
  if (space.cores < 1) return absl::InvalidArgumentError("cores must be at least 1");
  if (auto status = CheckAxis(space.max_batch_sizes, "max batch size", 1); !status.ok()) {
    return status;
  }
  if (space.policies.empty()) return absl::InvalidArgumentError("no batching policy to sweep");
  if (auto status = CheckAxis(space.instance_counts, "instance count", 1); !status.ok()) {
    return status;
  }
  if (auto status = CheckAxis(space.threads, "thread count", 0); !status.ok()) return status;

  SweepPlan plan;
  for (int v = 0; v < static_cast<int>(space.variants.size()); ++v) {
    const Variant& variant = space.variants[static_cast<size_t>(v)];
    const bool batches = variant.base_max_batch_size > 0;
    std::vector<int> batch_sizes = batches ? space.max_batch_sizes : std::vector<int>{0};
    if (!batches) {
      plan.skipped.push_back({.config = {.variant = v},
                              .reason = StrCat("variant '", variant.name,
                                               "' does not batch (max_batch_size 0): max batch "
                                               "size and batching policy are not swept")});
    }
    for (int max_batch : batch_sizes) {
      if (batches && max_batch < space.rows_per_request) {
        plan.skipped.push_back(
            {.config = {.variant = v, .max_batch_size = max_batch},
             .reason = StrCat("max batch ", max_batch, " is below the ", space.rows_per_request,
                              " rows each request carries")});
        continue;
      }
      bool single_row_done = false;
      for (const BatchingPolicy& given : space.policies) {
        BatchingPolicy policy = given;
        if (max_batch <= 1) {
          // Nothing can join a batch of one row: every policy behaves as "none".
          if (single_row_done) {
            plan.skipped.push_back(
                {.config = {.variant = v, .max_batch_size = max_batch, .policy = given},
                 .reason = StrCat("max batch ", max_batch, " forms no batches: '", given.Label(),
                                  "' is the same as 'none'")});
            continue;
          }
          single_row_done = true;
          policy = BatchingPolicy{};
        }
        for (int instances : space.instance_counts) {
          for (int threads : space.threads) {
            ServingConfig config{
                .variant = v,
                .max_batch_size = max_batch,
                .policy = policy,
                .instances = instances,
                .threads = threads,
                .effective_threads = EffectiveThreads(threads, instances, space.cores)};
            const int compute_threads = instances * config.effective_threads;
            if (compute_threads > space.cores && !space.allow_oversubscription) {
              plan.skipped.push_back(
                  {.config = config,
                   .reason = StrCat(instances, " instances × ", config.effective_threads,
                                    " threads = ", compute_threads, " compute threads on ",
                                    space.cores, " cores (oversubscribed)")});
              continue;
            }
            plan.configs.push_back(config);
          }
        }
      }
    }
  }
  if (plan.configs.empty()) {
    return absl::InvalidArgumentError(
        StrCat("every configuration was skipped, e.g. ",
               plan.skipped.empty() ? std::string("?") : plan.skipped.front().reason));
  }
  return plan;
}

}  // namespace brigade::analyze
