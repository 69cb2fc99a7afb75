#include "tools/doctor/repository_plan.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/strings.h"
#include "protocol/model_config_parser.h"

namespace brigade::doctor {
namespace fs = std::filesystem;

absl::StatusOr<std::vector<ModelPlan>> ReadRepositoryPlan(const std::string& repository) {
  std::error_code error;
  if (!fs::is_directory(repository, error)) {
    return absl::NotFoundError(StrCat("model repository ", repository, " is not a folder"));
  }
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(repository, error)) {
    if (entry.is_directory(error) && !entry.path().filename().string().starts_with(".")) {
      names.push_back(entry.path().filename().string());
    }
  }
  if (error) {
    return absl::UnavailableError(StrCat("model repository ", repository, ": ", error.message()));
  }
  std::sort(names.begin(), names.end());
  std::vector<ModelPlan> plans;
  for (const std::string& name : names) {
    absl::StatusOr<protocol::ParsedConfig> parsed =
        protocol::ReadModelConfigFile((fs::path(repository) / name).string(), name);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(StrCat("model '", name, "': ", parsed.status().message()));
    }
    const config::ModelConfig& config = parsed->config;
    ModelPlan plan;
    plan.name = name;
    plan.backend = !config.backend().empty() ? config.backend() : config.platform();
    // The backends with a compute pool per instance (engine/backend.h's names).
    plan.compute_threads = plan.backend.empty() || plan.backend == "onnxruntime" ||
                           plan.backend == "onnxruntime_onnx" || plan.backend == "pytorch" ||
                           plan.backend == "pytorch_libtorch";
    if (config.platform() == "ensemble" || config.platform() == "brigade_router") {
      plans.push_back(std::move(plan));
      continue;
    }
    int64_t instances = 0;
    for (int g = 0; g < config.instance_group_size(); ++g) {
      const config::ModelInstanceGroup& group = config.instance_group(g);
      const std::string field = StrCat("model '", name, "' instance_group[", g, "]");
      if (group.count() < 0 || group.count() > kMaxPlannedInstances) {
        return absl::InvalidArgumentError(
            StrCat(field, ".count ", group.count(), " is not in [0, ", kMaxPlannedInstances, "]"));
      }
      if (group.intra_op_threads() < 0 || group.intra_op_threads() > kMaxPlannedInstances) {
        return absl::InvalidArgumentError(StrCat(field, ".intra_op_threads ",
                                                 group.intra_op_threads(), " is not in [0, ",
                                                 kMaxPlannedInstances, "]"));
      }
      for (int c = 0; c < group.cpus_size(); ++c) {
        if (group.cpus(c) < 0 || group.cpus(c) > kMaxCpuId) {
          return absl::InvalidArgumentError(
              StrCat(field, ".cpus[", c, "] ", group.cpus(c), " is not a CPU id"));
        }
      }
      // The server's rule (repository/model_version.cc): a count of 0 is one instance, and the
      // first group that sets cpus or intra_op_threads sets them for the whole model.
      instances += group.count() > 0 ? group.count() : 1;
      if (plan.cpus.empty() && group.cpus_size() > 0) {
        plan.cpus.assign(group.cpus().begin(), group.cpus().end());
      }
      if (plan.intra_op_threads == 0) plan.intra_op_threads = group.intra_op_threads();
    }
    if (instances > kMaxPlannedInstances) {
      return absl::InvalidArgumentError(StrCat("model '", name, "' has ", instances,
                                               " instances, more than ", kMaxPlannedInstances));
    }
    plan.instances = std::max<int>(1, static_cast<int>(instances));
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace brigade::doctor
