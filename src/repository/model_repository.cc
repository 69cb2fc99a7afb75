#include "repository/model_repository.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/cleanup/cleanup.h"
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
    for (const std::string& name : names) {
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
    for (auto& [name, slot] : models_) {
      for (auto& [version, version_slot] : slot.versions) {
        if (version_slot.model != nullptr) loaded.push_back(std::move(version_slot.model));
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
      const absl::Time until =
          absl::Now() + absl::Seconds(std::max(1, options_.poll_interval_secs));
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
  for (const std::string& name : on_disk) {
    absl::Status status = SyncModel(name, nullptr);
    if (!status.ok() && first_error.ok()) first_error = status;
  }
  std::vector<std::string> gone;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [name, slot] : models_) {
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

void ModelRepository::NotifyChanged(const std::string& name) const {
  if (options_.on_model_changed) options_.on_model_changed(name);
}

void ModelRepository::SetModelReason(const std::string& name, const std::string& reason) {
  absl::MutexLock lock(&mu_);
  models_[name].reason = reason;
}

absl::Status ModelRepository::SyncModel(const std::string& name, const ParsedConfig* override) {
  absl::Cleanup notify = [this, &name] { NotifyChanged(name); };
  const fs::path model_dir = fs::path(options_.root) / name;
  std::error_code error;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == ".." ||
      !fs::is_directory(model_dir, error)) {
    return absl::NotFoundError(StrCat("model '", name, "' is not in the repository"));
  }

  absl::StatusOr<ParsedConfig> parsed = override != nullptr
                                            ? absl::StatusOr<ParsedConfig>(*override)
                                            : ReadModelConfigFile(model_dir.string(), name);
  absl::Status valid = parsed.ok() ? ValidateModelConfig(name, &parsed->config) : parsed.status();
  if (valid.ok() && options_.validate_config) valid = options_.validate_config(parsed->config);
  if (!valid.ok()) {
    SetModelReason(name, std::string(valid.message()));
    spdlog::error("model '{}': {}", name, valid.message());
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
  SetModelReason(name, result.ok() ? "" : std::string(result.message()));

  const std::string config_fingerprint = ConfigFingerprint(config);
  bool logged_notes = false;
  for (int64_t version : selection.versions) {
    const std::string fingerprint =
        config_fingerprint + VersionFingerprint(model_dir / std::to_string(version));
    std::shared_ptr<ModelVersion> serving;
    {
      absl::MutexLock lock(&mu_);
      VersionSlot& slot = models_[name].versions[version];
      if (slot.state == State::kReady && slot.fingerprint == fingerprint) continue;
      serving = slot.model;
      // A version that is serving keeps serving while its replacement loads.
      if (serving == nullptr) slot.state = State::kLoading;
    }
    if (!logged_notes) {
      logged_notes = true;
      for (const std::string& note : parsed->skipped) {
        spdlog::warn("model '{}': skipped config field: {}", name, note);
      }
      for (const std::string& field : IgnoredFields(config)) {
        spdlog::warn("model '{}': config field not implemented, ignored: {}", name, field);
      }
    }
    spdlog::info("model '{}' version {}: loading", name, version);
    absl::StatusOr<std::shared_ptr<ModelVersion>> loaded =
        ModelVersion::Load({model_dir.string(), version, config, options_.backends, options_.clock,
                            options_.pin_threads, options_.cpus, ShortHash(fingerprint),
                            options_.metrics_for ? options_.metrics_for(name, version) : nullptr});
    {
      absl::MutexLock lock(&mu_);
      VersionSlot& slot = models_[name].versions[version];
      if (loaded.ok()) {
        slot = {State::kReady, "", *loaded, fingerprint};
      } else if (serving != nullptr) {
        slot.reason =
            StrCat("reload failed, previous load still serving: ", loaded.status().message());
      } else {
        slot = {State::kUnavailable, std::string(loaded.status().message()), nullptr, ""};
      }
    }
    if (loaded.ok()) {
      spdlog::info("model '{}' version {}: ready", name, version);
      if (serving != nullptr) serving->Drain();  // in-flight requests on the old load finish
    } else {
      spdlog::error("model '{}' version {}: {}", name, version, loaded.status().message());
      if (result.ok()) result = loaded.status();
    }
  }

  // Versions no longer selected: stop routing to them, then let their queues drain.
  std::vector<std::shared_ptr<ModelVersion>> retired;
  {
    absl::MutexLock lock(&mu_);
    auto& versions = models_[name].versions;
    for (auto it = versions.begin(); it != versions.end();) {
      if (std::binary_search(selection.versions.begin(), selection.versions.end(), it->first)) {
        ++it;
        continue;
      }
      if (it->second.model != nullptr) retired.push_back(std::move(it->second.model));
      it = versions.erase(it);
    }
  }
  for (auto& version : retired) {
    spdlog::info("model '{}' version {}: unloading", name, version->version());
    version->Drain();
  }
  return result;
}

absl::Status ModelRepository::UnloadAll(const std::string& name, const std::string& reason) {
  absl::Cleanup notify = [this, &name] { NotifyChanged(name); };
  std::vector<std::shared_ptr<ModelVersion>> retired;
  {
    absl::MutexLock lock(&mu_);
    auto it = models_.find(name);
    if (it == models_.end()) {
      return absl::NotFoundError(StrCat("model '", name, "' is not loaded"));
    }
    for (auto& [version, slot] : it->second.versions) {
      if (slot.model != nullptr) retired.push_back(std::move(slot.model));
      slot.state = State::kUnloading;
    }
  }
  for (auto& version : retired) version->Drain();
  absl::MutexLock lock(&mu_);
  ModelSlot& slot = models_[name];
  for (auto& [version, version_slot] : slot.versions) {
    version_slot = {State::kUnavailable, reason, nullptr, ""};
  }
  slot.reason = reason;
  spdlog::info("model '{}': unloaded ({})", name, reason);
  return absl::OkStatus();
}

absl::Status ModelRepository::Load(std::string_view name, std::string_view config_json) {
  if (options_.mode != ControlMode::kExplicit) {
    return absl::FailedPreconditionError(
        "explicit model load/unload is only allowed with --model-control-mode=explicit");
  }
  absl::MutexLock control(&control_mu_);
  if (config_json.empty()) return SyncModel(std::string(name), nullptr);
  BRIGADE_ASSIGN_OR_RETURN(ParsedConfig parsed,
                           ParseModelConfigJson(config_json, StrCat("config of '", name, "'")));
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

absl::StatusOr<std::shared_ptr<ModelVersion>> ModelRepository::Get(std::string_view name,
                                                                   int64_t version) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return absl::NotFoundError(StrCat("unknown model '", name, "'"));
  const auto& versions = it->second.versions;
  if (version < 0) {
    for (auto v = versions.rbegin(); v != versions.rend(); ++v) {
      if (v->second.state == State::kReady && v->second.model != nullptr) return v->second.model;
    }
    return absl::UnavailableError(StrCat("model '", name, "' has no ready version"));
  }
  auto v = versions.find(version);
  if (v == versions.end()) {
    return absl::NotFoundError(StrCat("model '", name, "' has no version ", version));
  }
  if (v->second.state != State::kReady || v->second.model == nullptr) {
    return absl::UnavailableError(StrCat("model '", name, "' version ", version, " is not ready"));
  }
  return v->second.model;
}

absl::StatusOr<std::vector<int64_t>> ModelRepository::ReadyVersions(std::string_view name) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return absl::NotFoundError(StrCat("unknown model '", name, "'"));
  std::vector<int64_t> ready;
  for (const auto& [version, slot] : it->second.versions) {
    if (slot.state == State::kReady) ready.push_back(version);
  }
  return ready;
}

std::vector<std::shared_ptr<ModelVersion>> ModelRepository::ReadyModels() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::shared_ptr<ModelVersion>> ready;
  for (const auto& [name, slot] : models_) {
    for (const auto& [version, version_slot] : slot.versions) {
      if (version_slot.state == State::kReady && version_slot.model != nullptr) {
        ready.push_back(version_slot.model);
      }
    }
  }
  return ready;
}

const char* ModelRepository::StateName(State state) {
  switch (state) {
    case State::kLoading:
      return "LOADING";
    case State::kReady:
      return "READY";
    case State::kUnloading:
      return "UNLOADING";
    case State::kUnavailable:
      return "UNAVAILABLE";
  }
  return "UNAVAILABLE";
}

std::vector<IndexEntry> ModelRepository::Index(bool ready_only) const {
  std::set<std::string> names;
  for (const std::string& name : ScanModelDirs()) names.insert(name);
  std::vector<IndexEntry> entries;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, slot] : models_) names.insert(name);
  for (const std::string& name : names) {
    auto it = models_.find(name);
    if (it == models_.end() || it->second.versions.empty()) {
      if (ready_only) continue;
      entries.push_back({name, "", it == models_.end() ? "" : "UNAVAILABLE",
                         it == models_.end() ? "" : it->second.reason});
      continue;
    }
    for (const auto& [version, slot] : it->second.versions) {
      if (ready_only && slot.state != State::kReady) continue;
      entries.push_back({name, std::to_string(version), StateName(slot.state),
                         slot.reason.empty() ? it->second.reason : slot.reason});
    }
  }
  return entries;
}

}  // namespace brigade::repository
