#ifndef BRIGADE_ROUTE_ROUTING_POLICY_H_
#define BRIGADE_ROUTE_ROUTING_POLICY_H_

// RoutingPolicy: the decision a router model (`platform: "brigade_router"`, config section
// `routing`) makes for each request: which of its variants serves it, and why.
//
//   1. rules, in config order: the first whose condition on a request parameter holds
//      (`urgent == true`, `user_tier == "gold"`, `user_id < 1000`, `experiment` present);
//   2. otherwise the weighted split, sticky when `sticky_parameter` is set (the parameter's value
//      is hashed, so one user always lands on one variant while the weights hold);
//   3. otherwise the default variant; or, with an `slo` section instead of 2 and 3, the most
//      accurate variant predicted to meet the request's deadline (ChooseBySlo, given the
//      variants' predictions by the caller, which owns their schedulers).
// Or, instead of all three, a confidence cascade (CascadeSpec; route/cascade.h runs it): the
// first variant answers unless its scores fall below a threshold, then the second does.
// A request lacking the parameter a rule reads does not match that rule, so it takes the split
// or the default route. The caller resolves the variant; when it is not ready it falls back to
// the default and then to the others in config order (reason kFallback).
//
// Decide() allocates nothing and reads only the request's parameters: a few comparisons per rule
// (bench/route_decision_benchmark measures it).
//
// Thread safety: immutable after Create() except the decision counters, which are atomic;
// Decide() and Count() are safe from any thread.
// Failure: Create() answers INVALID_ARGUMENT naming the router and the variant, rule or split at
// fault (unknown variant, a non-numeric value for an ordering comparison, no weight, ...).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/parameters.h"
#include "protocol/model_config.pb.h"

namespace brigade::route {

enum class RouteReason : uint8_t {
  kRule = 0,
  kSplit,
  kDefault,
  kFallback,
  // A cascade's first variant was confident enough and answered / its second had to.
  kCascadeAccepted,
  kCascadeEscalated,
  // SLO selection: the most accurate variant predicted to meet the deadline / none was, and
  // this one is predicted to finish first.
  kSlo,
  kSloFastest,
  // A cascade's second variant answered some rows of the request, its first the others.
  kCascadePartial,
};
inline constexpr int kNumRouteReasons = 9;
// Most variants a router may name.
inline constexpr int kMaxRouteVariants = 64;
// "rule", "split", "default", "fallback", "cascade_accepted", "cascade_escalated", "slo",
// "slo_fastest", "cascade_partial": the metrics label.
const char* RouteReasonName(RouteReason reason);

struct RouteDecision {
  int variant = 0;
  RouteReason reason = RouteReason::kDefault;
};

struct RouteVariant {
  std::string name;
  std::string model_name;
  int64_t model_version = -1;
  double accuracy = 0;
};

// SLO selection (config `routing.slo`), checked; `by_accuracy` lists the variants, most
// accurate first (config order among equals).
struct SloSpec {
  int64_t target_p99_us = 0;
  bool reject_when_late = false;
  std::vector<int> by_accuracy;
};

// Picks by SLO: `predicted_ns[v]` is variant v's predicted p99 completion (absolute ns; -1:
// unknown, taken as meeting the deadline; INT64_MAX: not available). Returns the most accurate
// variant meeting `deadline_ns` (kSlo), else the earliest predicted (kSloFastest), or -1 when
// none meets it and the spec rejects late requests (or none is available).
RouteDecision ChooseBySlo(const SloSpec& spec, std::span<const int64_t> predicted_ns,
                          int64_t deadline_ns);

// A confidence cascade (config `routing.cascade`), checked: variant indexes into variants().
struct CascadeSpec {
  int first = 0;
  int second = 1;
  std::string output;  // empty: the first variant's first output
  config::ModelRouting::Cascade::Score score = config::ModelRouting::Cascade::MAX_PROBABILITY;
  bool softmax = false;
  double threshold = 0;
};

class RoutingPolicy {
 public:
  static absl::StatusOr<std::unique_ptr<RoutingPolicy>> Create(std::string router_name,
                                                               const config::ModelRouting& config);

  const std::string& router_name() const { return router_name_; }
  const std::vector<RouteVariant>& variants() const { return variants_; }
  int default_variant() const { return default_variant_; }
  // Set when the router is a cascade; Decide() is then not used (route/cascade.h runs it).
  const std::optional<CascadeSpec>& cascade() const { return cascade_; }
  // Set when the router selects by SLO: Decide() then answers kSlo for a request no rule
  // routes, and the caller chooses with ChooseBySlo() from its variants' predictions.
  const std::optional<SloSpec>& slo() const { return slo_; }

  RouteDecision Decide(const Parameters& parameters) const;

  // Counts one request served by `variant` for `reason` (the decision actually taken).
  void Count(int variant, RouteReason reason) const;
  // Requests per variant and reason, [variant][reason].
  std::vector<std::array<uint64_t, kNumRouteReasons>> Counts() const;

  struct Rule {
    std::string parameter;
    config::ModelRouting::Rule::Op op = config::ModelRouting::Rule::EQ;
    std::string text;
    bool has_number = false;
    double number = 0;
    bool has_bool = false;
    bool boolean = false;
    int variant = 0;
  };
  RoutingPolicy(std::string router_name, std::vector<RouteVariant> variants,
                std::vector<Rule> rules, std::vector<std::pair<int, uint32_t>> splits,
                std::string sticky_parameter, int default_variant,
                std::optional<CascadeSpec> cascade, std::optional<SloSpec> slo);

 private:
  bool Matches(const Rule& rule, const ParameterValue& value) const;
  int PickSplit(const Parameters& parameters) const;

  const std::string router_name_;
  const std::vector<RouteVariant> variants_;
  const std::vector<Rule> rules_;
  // Variant and cumulative weight, ascending.
  const std::vector<std::pair<int, uint32_t>> splits_;
  const std::string sticky_parameter_;
  const int default_variant_;
  const std::optional<CascadeSpec> cascade_;
  const std::optional<SloSpec> slo_;
  // Spreads non-sticky split decisions by their weights.
  mutable std::atomic<uint64_t> split_sequence_{0};
  const std::unique_ptr<std::atomic<uint64_t>[]> counts_;
};

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_ROUTING_POLICY_H_
