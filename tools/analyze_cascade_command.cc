// `brigade analyze cascade`: learns a confidence cascade's threshold on a labelled set. Reads the
// router's cascade from a running server (GET /v2/models/{m}/config), sends every example to
// both variants through the server, sweeps the thresholds (analyze/cascade_threshold.h), prints
// the trade around the choice and, with --write, puts the chosen threshold into the router's
// config.pbtxt (analyze/cascade_config_file.h).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/json_text.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "fmt/format.h"
#include "tools/analyze/accuracy.h"
#include "tools/analyze/cascade_config_file.h"
#include "tools/analyze/cascade_threshold.h"
#include "tools/analyze/eval_set.h"
#include "tools/client/bearer_token.h"
#include "tools/client/client.h"
#include "tools/command.h"

namespace brigade::tools {
namespace {

// Exit status when no threshold reaches the target (as `brigade analyze` when no point meets the
// SLO).
constexpr int kTargetNotMet = 3;

struct CascadeFlags {
  std::string url = "localhost:8000";
  std::string model;
  std::string eval_inputs;
  std::string eval_labels;
  int64_t eval_limit = 0;
  double eval_scale = std::nan("");
  int64_t eval_batch = 32;
  double target_accuracy = std::nan("");
  double max_accuracy_drop = std::nan("");
  std::string write;
  std::string format = "text";
  int64_t timeout_ms = 60'000;
  // The bearer token's file; empty: BRIGADE_TOKEN, if set.
  std::string auth_token_file;
};

// One variant of the cascade as served.
struct Variant {
  std::string name;
  std::string model;
  std::string version;  // empty: the server's choice
  protocol::ModelMetadata metadata;
  int64_t max_batch_size = 0;
  double accuracy = 0;
};

struct CascadeRun {
  std::string router;
  Variant first;
  Variant second;
  std::string output;
  bool margin = false;
  bool softmax = false;
  double served_threshold = 0;
  std::string eval_description;
  analyze::ThresholdSweep sweep;
  std::string written;  // the config file rewritten, when --write
};

absl::StatusOr<Variant> ResolveVariant(client::Client& client, const config::ModelRouting& routing,
                                       const std::string& name) {
  for (const config::ModelRouting::Variant& v : routing.variant()) {
    const std::string& variant_name = v.name().empty() ? v.model_name() : v.name();
    if (variant_name != name) continue;
    Variant out;
    out.name = name;
    out.model = v.model_name().empty() ? v.name() : v.model_name();
    out.version = v.model_version() > 0 ? std::to_string(v.model_version()) : "";
    BRIGADE_ASSIGN_OR_RETURN(out.metadata, client.GetModelMetadata(out.model, out.version));
    BRIGADE_ASSIGN_OR_RETURN(config::ModelConfig config,
                             client.GetModelConfig(out.model, out.version));
    out.max_batch_size = config.max_batch_size();
    return out;
  }
  return absl::InvalidArgumentError(
      StrCat("the cascade names variant '", name, "', which the router does not list"));
}

analyze::PredictOptions PredictOptionsFor(const CascadeFlags& flags, const Variant& variant,
                                          const std::string& output, const analyze::EvalSet& set) {
  analyze::PredictOptions options;
  options.model = variant.model;
  options.output = output;
  options.batch_rows =
      variant.max_batch_size > 0 ? std::min<int64_t>(flags.eval_batch, variant.max_batch_size) : 1;
  const DataType input_type =
      variant.metadata.inputs.empty() ? DataType::kFp32 : variant.metadata.inputs[0].dtype;
  options.scale = std::isnan(flags.eval_scale)
                      ? analyze::DefaultScale(set.inputs.dtype(), input_type)
                      : flags.eval_scale;
  return options;
}

absl::Status WriteThreshold(const std::string& path, const std::string& router,
                            const std::string& threshold) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat("cannot read ", path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::filesystem::path file(path);
  const std::string folder = std::filesystem::absolute(file).parent_path().filename().string();
  BRIGADE_ASSIGN_OR_RETURN(std::string out,
                           analyze::RewriteCascadeThreshold(text, path, router, folder, threshold));
  // Written beside it and renamed over it, so a failure never leaves half a config.
  const std::string temporary = path + ".brigade-tmp";
  {
    std::ofstream file_out(temporary, std::ios::binary | std::ios::trunc);
    file_out << out;
    file_out.close();
    if (!file_out) return absl::InternalError(StrCat("cannot write ", temporary));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return absl::InternalError(StrCat("cannot replace ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<CascadeRun> Run(const CascadeFlags& flags) {
  const bool by_accuracy = !std::isnan(flags.target_accuracy);
  if (by_accuracy == !std::isnan(flags.max_accuracy_drop)) {
    return absl::InvalidArgumentError(
        "give exactly one of --target-accuracy and "
        "--max-accuracy-drop");
  }
  BRIGADE_ASSIGN_OR_RETURN(std::string token, client::ResolveBearerToken(
                                                  flags.auth_token_file,
                                                  std::getenv(client::kTokenEnvironmentVariable)));
  BRIGADE_ASSIGN_OR_RETURN(std::unique_ptr<client::Client> client,
                           client::Client::Create({.protocol = client::ClientProtocol::kHttp,
                                                   .address = flags.url,
                                                   .timeout_ms = flags.timeout_ms,
                                                   .bearer_token = std::move(token)}));
  BRIGADE_ASSIGN_OR_RETURN(config::ModelConfig router, client->GetModelConfig(flags.model, ""));
  if (router.platform() != "brigade_router" || !router.routing().has_cascade()) {
    return absl::InvalidArgumentError(
        StrCat("model '", flags.model, "' is not a brigade_router with a cascade section"));
  }
  const config::ModelRouting::Cascade& cascade = router.routing().cascade();
  CascadeRun run;
  run.router = flags.model;
  BRIGADE_ASSIGN_OR_RETURN(run.first, ResolveVariant(*client, router.routing(), cascade.first()));
  BRIGADE_ASSIGN_OR_RETURN(run.second, ResolveVariant(*client, router.routing(), cascade.second()));
  run.output = cascade.output();
  run.margin = cascade.score() == config::ModelRouting::Cascade::MARGIN;
  run.softmax = cascade.softmax();
  run.served_threshold = cascade.threshold();

  BRIGADE_ASSIGN_OR_RETURN(analyze::EvalSet set,
                           analyze::LoadEvalSet({.inputs_path = flags.eval_inputs,
                                                 .labels_path = flags.eval_labels,
                                                 .limit = flags.eval_limit}));
  if (!set.labelled()) return absl::InvalidArgumentError("--eval-labels is required");
  run.eval_description = set.description;

  BRIGADE_ASSIGN_OR_RETURN(std::vector<analyze::Confidence> first,
                           analyze::PredictConfidence(
                               *client, run.first.metadata, set,
                               PredictOptionsFor(flags, run.first, run.output, set), run.softmax));
  BRIGADE_ASSIGN_OR_RETURN(
      std::vector<int32_t> second,
      analyze::PredictClasses(*client, run.second.metadata, set,
                              PredictOptionsFor(flags, run.second, run.output, set)));
  std::vector<int32_t> first_classes;
  std::vector<double> first_scores;
  for (const analyze::Confidence& c : first) {
    first_classes.push_back(c.top_class);
    first_scores.push_back(run.margin ? c.margin : c.max_probability);
  }
  const analyze::CascadeTarget target =
      by_accuracy
          ? analyze::CascadeTarget{analyze::CascadeTarget::Kind::kAccuracy, flags.target_accuracy}
          : analyze::CascadeTarget{analyze::CascadeTarget::Kind::kMaxDropFromSecond,
                                   flags.max_accuracy_drop};
  BRIGADE_ASSIGN_OR_RETURN(
      run.sweep, analyze::SweepThresholds(first_classes, first_scores, second, set.labels, target));
  run.first.accuracy = run.sweep.first_accuracy;
  run.second.accuracy = run.sweep.second_accuracy;
  if (!flags.write.empty() && run.sweep.target_met) {
    BRIGADE_RETURN_IF_ERROR(
        WriteThreshold(flags.write, run.router, run.sweep.points[run.sweep.chosen].text));
    run.written = flags.write;
  }
  return run;
}

std::string Percent(double fraction) { return fmt::format("{:.2f}%", 100 * fraction); }

std::string Text(const CascadeRun& run, const CascadeFlags& flags) {
  const analyze::ThresholdSweep& sweep = run.sweep;
  std::string out = fmt::format(
      "router {}: {} ({}) answers unless its {} of {}{} is below the threshold, then {} ({}); "
      "served threshold {}\n",
      run.router, run.first.name, run.first.model,
      run.margin ? "top-1 minus top-2 margin" : "top probability",
      run.output.empty() ? "its first output" : StrCat("'", run.output, "'"),
      run.softmax ? " (softmax of logits)" : "", run.second.name, run.second.model,
      run.served_threshold);
  out += fmt::format("examples: {} ({})\n", sweep.examples, run.eval_description);
  out += fmt::format("{} alone: {}   {} alone: {}   target: {}\n\n", run.first.name,
                     Percent(sweep.first_accuracy), run.second.name, Percent(sweep.second_accuracy),
                     Percent(sweep.target_accuracy));
  out += fmt::format("  {:>17}  {:>9}  {:>9}\n", "threshold", "accuracy", "escalated");
  for (int64_t i : analyze::PointsAroundChoice(sweep)) {
    const analyze::ThresholdPoint& point = sweep.points[i];
    out += fmt::format("{} {:>17}  {:>9}  {:>9}\n", i == sweep.chosen ? ">" : " ", point.text,
                       Percent(point.accuracy), Percent(point.escalated_share));
  }
  const analyze::ThresholdPoint& chosen = sweep.points[sweep.chosen];
  out += fmt::format(
      "\nchosen: threshold {}: accuracy {} ({} of {}), {} escalated ({}){}\n", chosen.text,
      Percent(chosen.accuracy), chosen.correct, sweep.examples, Percent(chosen.escalated_share),
      chosen.escalated,
      sweep.target_met ? "" : "; no threshold reaches the target, this is the most accurate");
  if (!run.written.empty()) {
    out += fmt::format("wrote threshold: {} into {}\n", chosen.text, run.written);
  } else if (!flags.write.empty()) {
    out += fmt::format("{} left unchanged: the target is not met\n", flags.write);
  }
  return out;
}

void PointJson(const analyze::ThresholdPoint& point, std::string* out) {
  *out += "{\"threshold\":";
  *out += point.text;
  *out += ",\"accuracy\":";
  AppendJsonDouble(point.accuracy, out);
  *out += ",\"correct\":";
  AppendJsonInt(point.correct, out);
  *out += ",\"escalated\":";
  AppendJsonInt(point.escalated, out);
  *out += ",\"escalated_share\":";
  AppendJsonDouble(point.escalated_share, out);
  *out += "}";
}

void VariantJson(const Variant& variant, std::string* out) {
  *out += "{\"variant\":";
  AppendJsonString(variant.name, out);
  *out += ",\"model\":";
  AppendJsonString(variant.model, out);
  *out += ",\"accuracy\":";
  AppendJsonDouble(variant.accuracy, out);
  *out += "}";
}

std::string Json(const CascadeRun& run) {
  const analyze::ThresholdSweep& sweep = run.sweep;
  std::string out = "{\"router\":";
  AppendJsonString(run.router, &out);
  out += ",\"first\":";
  VariantJson(run.first, &out);
  out += ",\"second\":";
  VariantJson(run.second, &out);
  out += ",\"score\":";
  AppendJsonString(run.margin ? "margin" : "max_probability", &out);
  out += run.softmax ? ",\"softmax\":true" : ",\"softmax\":false";
  out += ",\"served_threshold\":";
  AppendJsonDouble(run.served_threshold, &out);
  out += ",\"examples\":";
  AppendJsonInt(sweep.examples, &out);
  out += ",\"target_accuracy\":";
  AppendJsonDouble(sweep.target_accuracy, &out);
  out += sweep.target_met ? ",\"target_met\":true" : ",\"target_met\":false";
  out += ",\"chosen\":";
  PointJson(sweep.points[sweep.chosen], &out);
  out += ",\"points\":[";
  bool first = true;
  for (int64_t i : analyze::PointsAroundChoice(sweep)) {
    if (!first) out += ",";
    first = false;
    PointJson(sweep.points[i], &out);
  }
  out += "],\"written\":";
  if (run.written.empty()) {
    out += "null";
  } else {
    AppendJsonString(run.written, &out);
  }
  out += "}\n";
  return out;
}

int RunCascadeCommand(const CascadeFlags& flags) {
  absl::StatusOr<CascadeRun> run = Run(flags);
  if (!run.ok()) {
    fmt::print(stderr, "brigade analyze cascade: {}\n", run.status().message());
    return run.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  fmt::print("{}", flags.format == "json" ? Json(*run) : Text(*run, flags));
  return run->sweep.target_met ? 0 : kTargetNotMet;
}

}  // namespace

void RegisterAnalyzeCascadeCommand(CLI::App& analyze, int* exit_code) {
  auto flags = std::make_shared<CascadeFlags>();
  CLI::App* cascade = analyze.add_subcommand(
      "cascade",
      "Learn a confidence cascade's threshold: send a labelled set through a running server to "
      "the router's two variants, print accuracy and escalated share per threshold, choose the "
      "one escalating least that reaches the target (exit 0: reached, 3: not reached)");
  cascade->add_option("-u,--url", flags->url, "The server (HTTP host:port)")->capture_default_str();
  cascade
      ->add_option("--model", flags->model,
                   "The router (platform brigade_router with a routing.cascade section)")
      ->required();
  cascade
      ->add_option("--eval-inputs", flags->eval_inputs,
                   "Evaluation examples: IDX (gzip or not) or .npy, examples along the first "
                   "dimension")
      ->required();
  cascade->add_option("--eval-labels", flags->eval_labels, "Labels (IDX or .npy of integers)")
      ->required();
  cascade->add_option("--eval-limit", flags->eval_limit, "Use the first N examples (0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cascade->add_option("--eval-scale", flags->eval_scale,
                      "Multiply examples by this (default: 1/255 for UINT8 into a float input, "
                      "else 1)");
  cascade
      ->add_option("--eval-batch", flags->eval_batch,
                   "Examples per request (capped at each variant's max_batch_size)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cascade
      ->add_option("--target-accuracy", flags->target_accuracy,
                   "Reach this accuracy (a fraction: 0.915)")
      ->check(CLI::Range(0.0, 1.0));
  cascade
      ->add_option("--max-accuracy-drop", flags->max_accuracy_drop,
                   "Or: lose at most this much accuracy from the second variant alone (0.002 = "
                   "0.2 points)")
      ->check(CLI::Range(0.0, 1.0));
  cascade->add_option("--write", flags->write,
                      "The router's config.pbtxt: replace the threshold inside cascade { } with "
                      "the chosen one, every other byte unchanged (only when the target is met)");
  cascade->add_option("--format", flags->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cascade->add_option("--timeout-ms", flags->timeout_ms, "Per-request timeout")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cascade->add_option("--auth-token-file", flags->auth_token_file,
                      "File holding the bearer token to send (mode 600); default: the "
                      "BRIGADE_TOKEN environment variable, if set");
  cascade->callback([flags, exit_code] { *exit_code = RunCascadeCommand(*flags); });
}

}  // namespace brigade::tools
