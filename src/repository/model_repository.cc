#include "repository/model_repository.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>

#include "cache/cache_config.h"
#include "cache/response_cache.h"
#include "core/plain_file.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "repository/version_policy.h"
#include "spdlog/spdlog.h"

namespace brigade::repository {
namespace {

namespace fs = std::filesystem;

// Identifies the contents of a version directory: every file's path, size and mtime. A change
// in any of them (or in the config) reloads the version.
std::string VersionFingerprint(const fs::path& dir) {
  std::vector<std::string> entries;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    const auto size = it->file_size(error);
    const auto mtime = it->last_write_time(error).time_since_epoch().count();
    entries.push_back(StrCat(fs::relative(it->path(), dir, error).string(), ":", size, ":", mtime));
  }
  std::sort(entries.begin(), entries.end());
  return fmt::format("{}", fmt::join(entries, "|"));
}

// FNV-1a, 64 bits, as 16 hex digits: a stable, process-independent short form of a fingerprint.
std::string ShortHash(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

std::string ConfigFingerprint(const config::ModelConfig& config) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  config.SerializeToCodedStream(&coded);
  return bytes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Create(
    Options options, std::vector<absl::Status>* startup_errors) {
  std::error_code error;
  if (!fs::is_directory(options.root, error)) {
    return absl::NotFoundError(
        StrCat("model repository '", options.root, "' is not a readable directory"));
  }
  if (options.backends == nullptr) return absl::InvalidArgumentError("no backend registry");
  auto repository = std::make_unique<ModelRepository>(ConstructionTag(), std::move(options));
  ModelRepository& repo = *repository;
  {
    absl::MutexLock control(&repo.control_mu_);
    std::vector<std::string> names;
    if (repo.options_.mode == ControlMode::kExplicit) {
      for (const std::string& name : repo.options_.startup_models) {
        if (name == "*") {
          names = repo.ScanModelDirs();
          break;
        }
        names.push_back(name);
      }
    } else {
      names = repo.ScanModelDirs();
    }
    for (const std::string& name : repo.LoadOrder(names)) {
      absl::Status status = repo.SyncModel(name, nullptr);
      if (!status.ok() && startup_errors != nullptr) startup_errors->push_back(status);
    }
  }
  if (repo.options_.mode == ControlMode::kPoll) {
    repo.poll_thread_ = std::thread(&ModelRepository::PollLoop, &repo);
  }
  return repository;
}

ModelRepository::ModelRepository(ConstructionTag, Options options) : options_(std::move(options)) {}

ModelRepository::~ModelRepository() {
  {
    absl::MutexLock lock(&poll_mu_);
    stop_polling_ = true;
    poll_cv_.SignalAll();
  }
  if (poll_thread_.joinable()) poll_thread_.join();
  // Drain every version before the table (and the versions) go away.
  std::vector<std::shared_ptr<ModelVersion>> loaded;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, served] : models_) {
      for (const auto& [version, slot] : served->versions()) {
        if (slot.model != nullptr) loaded.push_back(slot.model);
      }
    }
    models_.clear();
  }
  for (auto& model : loaded) model->Drain();
}

void ModelRepository::PollLoop() {
  while (true) {
    {
      absl::MutexLock lock(&poll_mu_);
      const absl::Time until = absl::Now() + std::max(absl::Seconds(1), options_.poll_interval);
      while (!stop_polling_ && !poll_cv_.WaitWithDeadline(&poll_mu_, until)) {
      }
      if (stop_polling_) return;
    }
    absl::Status status = Poll();
    if (!status.ok()) spdlog::warn("repository poll: {}", status.message());
  }
}

std::vector<std::string> ModelRepository::ScanModelDirs() const {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(options_.root, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(error) || name.empty() || name[0] == '.') continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status ModelRepository::Poll() {
  absl::MutexLock control(&control_mu_);
  const std::vector<std::string> on_disk = ScanModelDirs();
  absl::Status first_error;
  for (const std::string& name : LoadOrder(on_disk)) {
    absl::Status status = SyncModel(name, nullptr);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  std::vector<std::string> gone;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, served] : models_) {
      if (!std::binary_search(on_disk.begin(), on_disk.end(), name)) gone.push_back(name);
    }
  }
  for (const std::string& name : gone) {
    BRIGADE_RETURN_IF_ERROR(UnloadAll(name, "removed from the repository"));
    absl::MutexLock lock(&mu_);
    models_.erase(name);
  }
  return first_error;
}

void ModelRepository::Update(const std::string& name, absl::FunctionRef<void(Draft&)> change) {
  absl::MutexLock lock(&mu_);
  Draft draft;
  if (auto it = models_.find(name); it != models_.end()) {
    draft = {it->second->versions(), it->second->reason(), it->second->cache()};
  }
  change(draft);
  models_[name] = std::make_shared<const ServedModel>(
      name, std::move(draft.versions), std::move(draft.reason), std::move(draft.cache));
}

void ModelRepository::SyncCache(const std::string& name) {
  absl::StatusOr<std::shared_ptr<const ServedModel>> served = Find(name);
  if (!served.ok()) return;
  // The served config (the highest ready version's) decides; SyncModel validated it.
  std::optional<cache::ResponseCacheOptions> wanted;
  if (absl::StatusOr<std::shared_ptr<ModelVersion>> latest = (*served)->Resolve(-1); latest.ok()) {
    absl::StatusOr<std::optional<cache::ResponseCacheOptions>> options =
        cache::ResponseCacheOptionsFromConfig(name, (*latest)->config().response_cache());
    if (options.ok()) wanted = *std::move(options);
  }
  std::shared_ptr<cache::ResponseCache> cache = (*served)->cache();
  if (!wanted.has_value() || options_.caches == nullptr) {
    cache = nullptr;
  } else if (cache == nullptr || !(cache->options() == *wanted)) {
    absl::StatusOr<std::shared_ptr<cache::ResponseCache>> created =
        options_.caches->CreateCache(name, *wanted);
    if (created.ok()) {
      cache = *std::move(created);
    } else {
      spdlog::error("model '{}': response cache disabled: {}", name, created.status().message());
      cache = nullptr;
    }
  }
  if (cache != nullptr) cache->RetainVersions((*served)->ReadyVersions());
  Update(name, [&](Draft& draft) { draft.cache = cache; });
}

absl::Status ModelRepository::SyncModel(const std::string& name,
                                        const protocol::ParsedConfig* override) {
  const fs::path model_dir = fs::path(options_.root) / name;
  std::error_code error;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == ".." ||
      !fs::is_directory(model_dir, error)) {
    return absl::NotFoundError(StrCat("model '", name, "' is not in the repository"));
  }
  if (!options_.allow_symlinked_models) {
    // The canonical-prefix check: a link to another model of the repository passes, a link to
    // anywhere else on the host does not.
    if (absl::StatusOr<fs::path> inside = ResolveInsideDir(options_.root, name);
        absl::IsPermissionDenied(inside.status())) {
      const fs::path target = fs::weakly_canonical(model_dir, error);
      absl::Status refused = absl::PermissionDeniedError(
          StrCat("model '", name, "': its directory is a symbolic link to ", target.string(),
                 ", outside the repository; serving it needs --allow-symlinked-models"));
      Update(name, [&](Draft& draft) { draft.reason = std::string(refused.message()); });
      spdlog::error("{}", refused.message());
      return refused;
    }
  }

  absl::StatusOr<protocol::ParsedConfig> parsed =
      override != nullptr ? absl::StatusOr<protocol::ParsedConfig>(*override)
                          : protocol::ReadModelConfigFile(model_dir.string(), name);
  absl::Status valid =
      parsed.ok() ? protocol::ValidateModelConfig(name, &parsed->config) : parsed.status();
  if (valid.ok()) {
    absl::StatusOr<std::optional<cache::ResponseCacheOptions>> cache_options =
        cache::ResponseCacheOptionsFromConfig(name, parsed->config.response_cache());
    valid = cache_options.status();
    if (valid.ok() && cache_options->has_value() && options_.caches == nullptr) {
      valid = absl::FailedPreconditionError(StrCat(
          "model '", name, "': the config enables a response cache, and this server has none"));
    }
    // A tier this binary cannot have fails the load: serving uncached would hide it.
    if (valid.ok() && cache_options->has_value()) {
      valid = cache::CheckTierInBuild(name, (*cache_options)->tier);
    }
  }
  if (!valid.ok()) {
    Update(name, [&](Draft& draft) { draft.reason = std::string(valid.message()); });
    // The parser's and the cache's errors name the model themselves; name it once.
    const std::string_view message(valid.message().data(), valid.message().size());
    if (message.starts_with(StrCat("model '", name, "'"))) {
      spdlog::error("{}", valid.message());
    } else {
      spdlog::error("model '{}': {}", name, valid.message());
    }
    return valid;
  }
  const config::ModelConfig& config = parsed->config;

  const VersionSelection selection =
      SelectVersions(config.version_policy(), ListVersionDirs(model_dir.string()));
  absl::Status result;
  if (!selection.missing.empty()) {
    result = absl::NotFoundError(StrCat("model '", name, "': versions [",
                                        fmt::format("{}", fmt::join(selection.missing, ",")),
                                        "] of the version policy are not in ", model_dir.string()));
  } else if (selection.versions.empty()) {
    result = absl::NotFoundError(
        StrCat("model '", name, "' has no version directories in ", model_dir.string()));
  }
  Update(name,
         [&](Draft& draft) { draft.reason = result.ok() ? "" : std::string(result.message()); });

  const std::string config_fingerprint = ConfigFingerprint(config);
  bool logged_notes = false;
  for (int64_t version : selection.versions) {
    const std::string fingerprint =
        config_fingerprint + VersionFingerprint(model_dir / std::to_string(version));
    std::shared_ptr<ModelVersion> serving;
    bool current = false;
    Update(name, [&](Draft& draft) {
      VersionSlot& slot = draft.versions[version];
      current = slot.state == VersionState::kReady && slot.fingerprint == fingerprint;
      if (current) return;
      serving = slot.model;
      // A version that is serving keeps serving while its replacement loads.
      if (serving == nullptr) slot.state = VersionState::kLoading;
    });
    if (current) continue;
    if (!logged_notes) {
      logged_notes = true;
      for (const std::string& note : parsed->skipped) {
        spdlog::warn("model '{}': skipped config field: {}", name, note);
      }
      for (const std::string& field : protocol::IgnoredFields(config)) {
        spdlog::warn("model '{}': config field not implemented, ignored: {}", name, field);
      }
    }
    spdlog::info("model '{}' version {}: loading", name, version);
    telemetry::ModelRequestMetrics* metrics =
        options_.metrics != nullptr ? options_.metrics->ForModel(name, std::to_string(version))
                                    : nullptr;
    absl::StatusOr<std::shared_ptr<ModelVersion>> loaded =
        ModelVersion::Load({model_dir.string(), version, config, options_.backends, options_.clock,
                            options_.pin_threads, options_.cpus, ShortHash(fingerprint), metrics,
                            [this](std::string_view step_model, int64_t step_version) {
                              return StepSignature(step_model, step_version);
                            },
                            options_.run_inline_max});
    Update(name, [&](Draft& draft) {
      VersionSlot& slot = draft.versions[version];
      if (loaded.ok()) {
        slot = {VersionState::kReady, "", *loaded, fingerprint};
      } else if (serving != nullptr) {
        slot.reason =
            StrCat("reload failed, previous load still serving: ", loaded.status().message());
      } else {
        slot = {VersionState::kUnavailable, std::string(loaded.status().message()), nullptr, ""};
      }
    });
    if (loaded.ok()) {
      spdlog::info("model '{}' version {}: ready", name, version);
      if (serving != nullptr) serving->Drain();  // in-flight requests on the old load finish
    } else {
      spdlog::error("model '{}' version {}: {}", name, version, loaded.status().message());
      if (result.ok()) result = loaded.status();
    }
  }

  // Versions no longer selected: stop routing to them, then let their queues drain; but only
  // once every selected version serves. A version that failed to load (its directory still
  // being copied, a bad file) would otherwise leave the model with nothing ready: the versions
  // it replaces keep serving until a later scan or load brings it up.
  std::vector<std::shared_ptr<ModelVersion>> retired;
  Update(name, [&](Draft& draft) {
    const bool selection_serves =
        std::all_of(selection.versions.begin(), selection.versions.end(), [&](int64_t version) {
          auto it = draft.versions.find(version);
          return it != draft.versions.end() && it->second.model != nullptr;
        });
    for (auto it = draft.versions.begin(); it != draft.versions.end();) {
      if (std::binary_search(selection.versions.begin(), selection.versions.end(), it->first)) {
        ++it;
        continue;
      }
      if (!selection_serves && it->second.model != nullptr) {
        it->second.reason =
            "no longer in the version policy; serving until the versions it selects load";
        ++it;
        continue;
      }
      if (it->second.model != nullptr) retired.push_back(std::move(it->second.model));
      it = draft.versions.erase(it);
    }
  });
  SyncCache(name);
  for (auto& version : retired) {
    spdlog::info("model '{}' version {}: unloading", name, version->version());
    version->Drain();
  }
  return result;
}

absl::StatusOr<route::StepModelSignature> ModelRepository::StepSignature(std::string_view name,
                                                                         int64_t version) const {
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<ModelVersion> model, Get(name, version));
  route::StepModelSignature signature;
  signature.max_batch_size = model->max_batch_size();
  for (const IoSpec& input : model->inputs()) {
    signature.inputs.push_back({input.name, input.dtype, input.shape, input.optional});
  }
  for (const IoSpec& output : model->outputs()) {
    signature.outputs.push_back({output.name, output.dtype, output.shape, false});
  }
  return signature;
}

std::vector<std::string> ModelRepository::LoadOrder(const std::vector<std::string>& names) const {
  // An ensemble (a router) is checked against the models its steps (variants) name, so those
  // load first: plain models in the order given, then ensembles and routers after the ensembles
  // and routers they use (depth first).
  std::map<std::string, std::vector<std::string>> ensembles;
  std::vector<std::string> order;
  for (const std::string& name : names) {
    absl::StatusOr<protocol::ParsedConfig> parsed =
        protocol::ReadModelConfigFile((fs::path(options_.root) / name).string(), name);
    const bool composite = parsed.ok() && (parsed->config.platform() == "ensemble" ||
                                           parsed->config.platform() == "brigade_router");
    if (!composite) {
      order.push_back(name);
      continue;
    }
    std::vector<std::string>& steps = ensembles[name];
    for (const auto& step : parsed->config.ensemble_scheduling().step()) {
      steps.push_back(step.model_name());
      if (!step.fallback_model_name().empty()) steps.push_back(step.fallback_model_name());
    }
    for (const auto& variant : parsed->config.routing().variant()) {
      steps.push_back(variant.model_name());
    }
  }
  std::set<std::string> placed;
  std::set<std::string> visiting;
  std::function<void(const std::string&)> place = [&](const std::string& name) {
    if (placed.count(name) > 0 || visiting.count(name) > 0) return;  // a cycle fails its load
    visiting.insert(name);
    for (const std::string& step : ensembles[name]) {
      if (ensembles.count(step) > 0) place(step);
    }
    visiting.erase(name);
    placed.insert(name);
    order.push_back(name);
  };
  for (const std::string& name : names) {
    if (ensembles.count(name) > 0) place(name);
  }
  return order;
}

absl::Status ModelRepository::UnloadAll(const std::string& name, const std::string& reason) {
  if (!Find(name).ok()) return absl::NotFoundError(StrCat("model '", name, "' is not loaded"));
  // Requests stop routing here first (the cache goes with the model), then the queues drain.
  std::vector<std::shared_ptr<ModelVersion>> retired;
  Update(name, [&](Draft& draft) {
    for (auto& [version, slot] : draft.versions) {
      if (slot.model != nullptr) retired.push_back(std::move(slot.model));
      slot.state = VersionState::kUnloading;
    }
    draft.cache = nullptr;
  });
  for (auto& version : retired) version->Drain();
  Update(name, [&](Draft& draft) {
    for (auto& [version, slot] : draft.versions) {
      slot = {VersionState::kUnavailable, reason, nullptr, ""};
    }
    draft.reason = reason;
  });
  spdlog::info("model '{}': unloaded ({})", name, reason);
  return absl::OkStatus();
}

absl::Status ModelRepository::Load(std::string_view name, std::string_view config_json) {
  if (options_.mode != ControlMode::kExplicit) {
    return absl::FailedPreconditionError(
        "explicit model load/unload is only allowed with --model-control-mode=explicit");
  }
  // Only a name the repository lists: never a path, a URL or "..", whatever the file system
  // would make of it.
  const std::vector<std::string> names = ScanModelDirs();
  if (!std::binary_search(names.begin(), names.end(), name)) {
    return absl::NotFoundError(StrCat("model '", name,
                                      "' is not in the repository (a load names one of its model "
                                      "directories)"));
  }
  absl::MutexLock control(&control_mu_);
  if (config_json.empty()) return SyncModel(std::string(name), nullptr);
  BRIGADE_ASSIGN_OR_RETURN(
      protocol::ParsedConfig parsed,
      protocol::ParseModelConfigJson(config_json, StrCat("config of '", name, "'")));
  BRIGADE_RETURN_IF_ERROR(protocol::CheckOverrideNamesNoFiles(name, parsed.config));
  return SyncModel(std::string(name), &parsed);
}

absl::Status ModelRepository::Unload(std::string_view name) {
  if (options_.mode != ControlMode::kExplicit) {
    return absl::FailedPreconditionError(
        "explicit model load/unload is only allowed with --model-control-mode=explicit");
  }
  absl::MutexLock control(&control_mu_);
  return UnloadAll(std::string(name), "unloaded");
}

absl::StatusOr<std::shared_ptr<const ServedModel>> ModelRepository::Find(
    std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return absl::NotFoundError(StrCat("unknown model '", name, "'"));
  return it->second;
}

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelRepository::Get(std::string_view name,
                                                                   int64_t version) const {
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const ServedModel> served, Find(name));
  return served->Resolve(version);
}

absl::StatusOr<std::vector<int64_t>> ModelRepository::ReadyVersions(std::string_view name) const {
  BRIGADE_ASSIGN_OR_RETURN(std::shared_ptr<const ServedModel> served, Find(name));
  return served->ReadyVersions();
}

std::vector<std::shared_ptr<const ServedModel>> ModelRepository::ServedModels() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::shared_ptr<const ServedModel>> all;
  all.reserve(models_.size());
  for (const auto& [name, served] : models_) all.push_back(served);
  return all;
}

std::vector<std::shared_ptr<ModelVersion>> ModelRepository::ReadyModels() const {
  std::vector<std::shared_ptr<ModelVersion>> ready;
  for (const std::shared_ptr<const ServedModel>& served : ServedModels()) {
    for (std::shared_ptr<ModelVersion>& model : served->ReadyModels()) {
      ready.push_back(std::move(model));
    }
  }
  return ready;
}

std::vector<protocol::RepositoryIndexEntry> ModelRepository::Index(bool ready_only) const {
  std::set<std::string> names;
  for (const std::string& name : ScanModelDirs()) names.insert(name);
  std::map<std::string, std::shared_ptr<const ServedModel>, std::less<>> models;
  {
    absl::ReaderMutexLock lock(&mu_);
    models = models_;
  }
  for (const auto& [name, served] : models) names.insert(name);
  std::vector<protocol::RepositoryIndexEntry> entries;
  for (const std::string& name : names) {
    auto it = models.find(name);
    if (it == models.end() || it->second->versions().empty()) {
      if (ready_only) continue;
      entries.push_back({name, "", it == models.end() ? "" : "UNAVAILABLE",
                         it == models.end() ? "" : it->second->reason()});
      continue;
    }
    for (const auto& [version, slot] : it->second->versions()) {
      if (ready_only && slot.state != VersionState::kReady) continue;
      entries.push_back({name, std::to_string(version), VersionStateName(slot.state),
                         slot.reason.empty() ? it->second->reason() : slot.reason});
    }
  }
  return entries;
}

}  // namespace brigade::repository
