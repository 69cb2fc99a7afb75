#ifndef BRIGADE_TOOLS_DOCTOR_REPOSITORY_PLAN_H_
#define BRIGADE_TOOLS_DOCTOR_REPOSITORY_PLAN_H_

// What a model repository asks of the CPUs: for each model folder, its instances, its threads
// per instance and the cores it names (ModelPlan), read from its config.pbtxt with the server's
// own parser. Every model is counted as loaded (in explicit control mode only some are).
// Ensembles and routers run no instances of their own.
//
// Thread safety: pure apart from reading the files. Failure: NOT_FOUND when the repository is
// not a folder; INVALID_ARGUMENT naming the model (and the field) for a config that does not
// parse or whose instance_group asks for more than kMaxPlannedInstances instances or threads.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/doctor/checks.h"

namespace brigade::doctor {

// Beyond these a count is a mistake, not a plan (and would make the placement loop long).
inline constexpr int kMaxPlannedInstances = 4096;

absl::StatusOr<std::vector<ModelPlan>> ReadRepositoryPlan(const std::string& repository);

}  // namespace brigade::doctor

#endif  // BRIGADE_TOOLS_DOCTOR_REPOSITORY_PLAN_H_
