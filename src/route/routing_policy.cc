#include "route/routing_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "core/strings.h"

namespace brigade::route {
namespace {

constexpr int kMaxVariants = kMaxRouteVariants;
constexpr int kMaxRules = 256;
constexpr uint64_t kMaxTotalWeight = 1'000'000;

using Op = config::ModelRouting::Rule::Op;

bool ParseNumber(std::string_view text, double* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, *out);
  return error == std::errc() && ptr == end && std::isfinite(*out);
}

bool Compare(Op op, double a, double b) {
  switch (op) {
    case config::ModelRouting::Rule::EQ:
      return a == b;
    case config::ModelRouting::Rule::NE:
      return a != b;
    case config::ModelRouting::Rule::LT:
      return a < b;
    case config::ModelRouting::Rule::LE:
      return a <= b;
    case config::ModelRouting::Rule::GT:
      return a > b;
    case config::ModelRouting::Rule::GE:
      return a >= b;
    default:
      return false;
  }
}

bool Ordering(Op op) {
  return op == config::ModelRouting::Rule::LT || op == config::ModelRouting::Rule::LE ||
         op == config::ModelRouting::Rule::GT || op == config::ModelRouting::Rule::GE;
}

// FNV-1a, 64 bits, then a final mix so nearby values (user ids 1, 2, 3) spread over the weights.
uint64_t Hash(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  return hash;
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

const char* RouteReasonName(RouteReason reason) {
  switch (reason) {
    case RouteReason::kRule:
      return "rule";
    case RouteReason::kSplit:
      return "split";
    case RouteReason::kDefault:
      return "default";
    case RouteReason::kFallback:
      return "fallback";
    case RouteReason::kCascadeAccepted:
      return "cascade_accepted";
    case RouteReason::kCascadeEscalated:
      return "cascade_escalated";
    case RouteReason::kSlo:
      return "slo";
    case RouteReason::kSloFastest:
      return "slo_fastest";
    case RouteReason::kCascadePartial:
      return "cascade_partial";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<RoutingPolicy>> RoutingPolicy::Create(
    std::string router_name, const config::ModelRouting& config) {
  auto fail = [&](std::string_view what) {
    return absl::InvalidArgumentError(StrCat("router '", router_name, "': ", what));
  };
  if (config.variant_size() == 0) return fail("routing names no variant");
  if (config.variant_size() > kMaxVariants) {
    return fail(
        StrCat("routing names ", config.variant_size(), " variants; at most ", kMaxVariants));
  }
  if (config.rule_size() > kMaxRules) {
    return fail(StrCat("routing has ", config.rule_size(), " rules; at most ", kMaxRules));
  }
  std::vector<RouteVariant> variants;
  std::map<std::string, int, std::less<>> index;
  for (const auto& variant : config.variant()) {
    if (variant.model_name().empty()) {
      return fail(StrCat("variant ", variants.size() + 1, " names no model"));
    }
    if (variant.model_name() == router_name) return fail("a variant cannot be the router itself");
    RouteVariant out{
        variant.name().empty() ? variant.model_name() : variant.name(), variant.model_name(),
        variant.model_version() > 0 ? variant.model_version() : -1, variant.accuracy()};
    if (!std::isfinite(out.accuracy)) {
      return fail(StrCat("variant '", out.name, "' has accuracy ", out.accuracy));
    }
    if (!index.emplace(out.name, static_cast<int>(variants.size())).second) {
      return fail(StrCat("two variants are called '", out.name, "'"));
    }
    variants.push_back(std::move(out));
  }
  auto find = [&](std::string_view what, const std::string& name) -> absl::StatusOr<int> {
    auto it = index.find(name);
    if (it == index.end()) {
      return fail(
          StrCat(what, " names variant '", name, "', which is not one of the router's variants"));
    }
    return it->second;
  };

  std::vector<Rule> rules;
  for (int i = 0; i < config.rule_size(); ++i) {
    const auto& rule = config.rule(i);
    const std::string label = StrCat("rule ", i + 1);
    if (rule.parameter().empty()) return fail(StrCat(label, " reads no parameter"));
    absl::StatusOr<int> variant = find(label, rule.variant());
    if (!variant.ok()) return variant.status();
    Rule out;
    out.parameter = rule.parameter();
    out.op = rule.op();
    out.text = rule.value();
    out.variant = *variant;
    out.has_number = ParseNumber(rule.value(), &out.number);
    if (rule.value() == "true" || rule.value() == "false") {
      out.has_bool = true;
      out.boolean = rule.value() == "true";
    }
    if (Ordering(rule.op()) && !out.has_number) {
      return fail(StrCat(label, " compares '", rule.parameter(), "' with '", rule.value(),
                         "', which is not a number"));
    }
    rules.push_back(std::move(out));
  }

  std::vector<std::pair<int, uint32_t>> splits;
  uint64_t total = 0;
  for (int i = 0; i < config.split_size(); ++i) {
    const auto& split = config.split(i);
    const std::string label = StrCat("split ", i + 1);
    absl::StatusOr<int> variant = find(label, split.variant());
    if (!variant.ok()) return variant.status();
    if (split.weight() == 0) return fail(StrCat(label, " has no weight"));
    total += split.weight();
    if (total > kMaxTotalWeight) {
      return fail(StrCat("split weights add up to over ", kMaxTotalWeight));
    }
    splits.emplace_back(*variant, static_cast<uint32_t>(total));
  }
  if (!config.sticky_parameter().empty() && splits.empty()) {
    return fail("sticky_parameter is set but there is no split");
  }
  int default_variant = 0;
  if (!config.default_variant().empty()) {
    absl::StatusOr<int> variant = find("default_variant", config.default_variant());
    if (!variant.ok()) return variant.status();
    default_variant = *variant;
  }
  std::optional<CascadeSpec> cascade;
  if (config.has_cascade()) {
    const auto& spec = config.cascade();
    if (!rules.empty() || !splits.empty()) {
      return fail("a cascade decides alone: remove its rules and splits");
    }
    absl::StatusOr<int> first = find("cascade.first", spec.first());
    if (!first.ok()) return first.status();
    absl::StatusOr<int> second = find("cascade.second", spec.second());
    if (!second.ok()) return second.status();
    if (*first == *second) return fail("cascade.first and cascade.second are the same variant");
    if (!(spec.threshold() >= 0 && spec.threshold() <= 1)) {
      return fail(StrCat("cascade.threshold ", spec.threshold(), " is not between 0 and 1"));
    }
    cascade =
        CascadeSpec{*first, *second, spec.output(), spec.score(), spec.softmax(), spec.threshold()};
  }
  std::optional<SloSpec> slo;
  if (config.has_slo()) {
    if (cascade.has_value() || !splits.empty()) {
      return fail(
          "slo selection replaces the split and the default: remove its splits and "
          "cascade");
    }
    if (config.slo().target_p99_microseconds() == 0 ||
        config.slo().target_p99_microseconds() > uint64_t{3600} * 1'000'000) {
      return fail(StrCat("slo.target_p99_microseconds ", config.slo().target_p99_microseconds(),
                         " is not between 1 and 3600000000"));
    }
    SloSpec spec;
    spec.target_p99_us = static_cast<int64_t>(config.slo().target_p99_microseconds());
    spec.reject_when_late = config.slo().reject_when_late();
    for (int v = 0; v < static_cast<int>(variants.size()); ++v) spec.by_accuracy.push_back(v);
    std::stable_sort(spec.by_accuracy.begin(), spec.by_accuracy.end(),
                     [&](int a, int b) { return variants[a].accuracy > variants[b].accuracy; });
    slo = std::move(spec);
  }
  return std::make_unique<RoutingPolicy>(
      std::move(router_name), std::move(variants), std::move(rules), std::move(splits),
      config.sticky_parameter(), default_variant, std::move(cascade), std::move(slo));
}

RouteDecision ChooseBySlo(const SloSpec& spec, std::span<const int64_t> predicted_ns,
                          int64_t deadline_ns) {
  int fastest = -1;
  for (const int v : spec.by_accuracy) {
    const int64_t predicted = predicted_ns[v];
    if (predicted == INT64_MAX) continue;  // not available
    if (predicted <= deadline_ns) return {v, RouteReason::kSlo};
    if (fastest < 0 || predicted < predicted_ns[fastest]) fastest = v;
  }
  if (fastest < 0 || spec.reject_when_late) return {-1, RouteReason::kSlo};
  return {fastest, RouteReason::kSloFastest};
}

RoutingPolicy::RoutingPolicy(std::string router_name, std::vector<RouteVariant> variants,
                             std::vector<Rule> rules, std::vector<std::pair<int, uint32_t>> splits,
                             std::string sticky_parameter, int default_variant,
                             std::optional<CascadeSpec> cascade, std::optional<SloSpec> slo)
    : router_name_(std::move(router_name)),
      variants_(std::move(variants)),
      rules_(std::move(rules)),
      splits_(std::move(splits)),
      sticky_parameter_(std::move(sticky_parameter)),
      default_variant_(default_variant),
      cascade_(std::move(cascade)),
      slo_(std::move(slo)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(variants_.size() * kNumRouteReasons)) {}

bool RoutingPolicy::Matches(const Rule& rule, const ParameterValue& value) const {
  if (rule.op == config::ModelRouting::Rule::PRESENT) return true;
  const bool equality =
      rule.op == config::ModelRouting::Rule::EQ || rule.op == config::ModelRouting::Rule::NE;
  if (const bool* flag = std::get_if<bool>(&value)) {
    if (!equality || !rule.has_bool) return false;
    return (*flag == rule.boolean) == (rule.op == config::ModelRouting::Rule::EQ);
  }
  if (const std::string* text = std::get_if<std::string>(&value)) {
    double number = 0;
    // "123" sent as a string still compares as a number against a numeric rule.
    if (rule.has_number && ParseNumber(*text, &number)) {
      return Compare(rule.op, number, rule.number);
    }
    if (!equality) return false;
    return (*text == rule.text) == (rule.op == config::ModelRouting::Rule::EQ);
  }
  if (!rule.has_number) return rule.op == config::ModelRouting::Rule::NE;
  double number = 0;
  if (const int64_t* i = std::get_if<int64_t>(&value)) number = static_cast<double>(*i);
  if (const uint64_t* u = std::get_if<uint64_t>(&value)) number = static_cast<double>(*u);
  if (const double* d = std::get_if<double>(&value)) number = *d;
  return Compare(rule.op, number, rule.number);
}

int RoutingPolicy::PickSplit(const Parameters& parameters) const {
  const uint32_t total = splits_.back().second;
  uint64_t draw = 0;
  const ParameterValue* sticky =
      sticky_parameter_.empty() ? nullptr : parameters.Find(sticky_parameter_);
  if (sticky != nullptr) {
    // Hash the value's text form so 42 and "42" land on the same variant.
    char buffer[32];
    std::string_view bytes;
    if (const std::string* text = std::get_if<std::string>(sticky)) {
      bytes = *text;
    } else if (const int64_t* i = std::get_if<int64_t>(sticky)) {
      bytes =
          std::string_view(buffer, std::to_chars(buffer, buffer + sizeof(buffer), *i).ptr - buffer);
    } else if (const uint64_t* u = std::get_if<uint64_t>(sticky)) {
      bytes =
          std::string_view(buffer, std::to_chars(buffer, buffer + sizeof(buffer), *u).ptr - buffer);
    } else if (const bool* b = std::get_if<bool>(sticky)) {
      bytes = *b ? "true" : "false";
    } else {
      const double d = std::get<double>(*sticky);
      bytes =
          std::string_view(buffer, std::to_chars(buffer, buffer + sizeof(buffer), d).ptr - buffer);
    }
    draw = Hash(bytes);
  } else {
    draw = Mix(split_sequence_.fetch_add(1, std::memory_order_relaxed));
  }
  const uint32_t point = static_cast<uint32_t>(draw % total);
  for (const auto& [variant, cumulative] : splits_) {
    if (point < cumulative) return variant;
  }
  return splits_.back().first;
}

RouteDecision RoutingPolicy::Decide(const Parameters& parameters) const {
  for (const Rule& rule : rules_) {
    const ParameterValue* value = parameters.Find(rule.parameter);
    if (value != nullptr && Matches(rule, *value)) return {rule.variant, RouteReason::kRule};
  }
  if (!splits_.empty()) return {PickSplit(parameters), RouteReason::kSplit};
  if (slo_.has_value()) return {default_variant_, RouteReason::kSlo};
  return {default_variant_, RouteReason::kDefault};
}

void RoutingPolicy::Count(int variant, RouteReason reason) const {
  counts_[static_cast<size_t>(variant) * kNumRouteReasons + static_cast<size_t>(reason)].fetch_add(
      1, std::memory_order_relaxed);
}

std::vector<std::array<uint64_t, kNumRouteReasons>> RoutingPolicy::Counts() const {
  std::vector<std::array<uint64_t, kNumRouteReasons>> counts(variants_.size());
  for (size_t v = 0; v < variants_.size(); ++v) {
    for (int r = 0; r < kNumRouteReasons; ++r) {
      counts[v][r] = counts_[v * kNumRouteReasons + r].load(std::memory_order_relaxed);
    }
  }
  return counts;
}

}  // namespace brigade::route
