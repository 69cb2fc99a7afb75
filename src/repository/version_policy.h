#ifndef BRIGADE_REPOSITORY_VERSION_POLICY_H_
#define BRIGADE_REPOSITORY_VERSION_POLICY_H_

// Which versions of a model to serve, from the versions present on disk and the config's
// version_policy (Triton semantics):
//   latest { num_versions: n }  the n highest versions (default policy, n = 1)
//   all {}                      every version present
//   specific { versions: [...] } exactly those listed that are present; listed versions missing
//                               from disk are reported so the load can fail loudly
// Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/model_config.pb.h"

namespace brigade::repository {

struct VersionSelection {
  std::vector<int64_t> versions;  // ascending
  std::vector<int64_t> missing;   // `specific` versions not on disk
};

VersionSelection SelectVersions(const config::ModelVersionPolicy& policy,
                                std::vector<int64_t> available);

// Numeric subdirectories of `model_dir`, ascending; other entries are ignored, as in Triton.
std::vector<int64_t> ListVersionDirs(const std::string& model_dir);

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_VERSION_POLICY_H_
