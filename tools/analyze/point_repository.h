#ifndef BRIGADE_TOOLS_ANALYZE_POINT_REPOSITORY_H_
#define BRIGADE_TOOLS_ANALYZE_POINT_REPOSITORY_H_

// The model repository a sweep point is served from: a folder holding one model,
//   <root>/<config.name>/config.pbtxt     the point's generated configuration
//   <root>/<config.name>/<entry>          a symbolic link to each other entry of the variant's
//                                         directory (version folders, label files), by absolute
//                                         path, so no model file is copied
// and the file writing the sweep needs (the recommended configuration, the reports).
//
// Failure: INTERNAL naming the path for any filesystem error; nothing throws. Thread-safe for
// distinct roots.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "protocol/model_config.pb.h"

namespace brigade::analyze {

// Creates `root` (which must not exist yet, or be empty) and lays out the repository above.
// `header` goes atop the config as comment lines.
absl::Status WritePointRepository(const std::string& variant_dir, const config::ModelConfig& config,
                                  std::string_view header, const std::string& root);

// Writes `contents` to `path`, creating its parent folders.
absl::Status WriteTextFile(const std::string& path, std::string_view contents);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_POINT_REPOSITORY_H_
