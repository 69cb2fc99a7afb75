#ifndef BRIGADE_TOOLS_ANALYZE_CASCADE_CONFIG_FILE_H_
#define BRIGADE_TOOLS_ANALYZE_CASCADE_CONFIG_FILE_H_

// Writing a learned threshold into a cascade router's config.pbtxt: only the value of
// `threshold:` inside `routing { cascade { } }` changes, every other byte (comments, layout,
// field order) stays as the user wrote it; a cascade without a threshold gets one written before
// its closing brace. The text is checked before (it parses as a model configuration, it is a
// brigade_router named `router`, or unnamed in a folder of that name, and it has a cascade) and
// after (it parses and carries the new threshold), so a file this cannot edit safely is
// refused, never half-edited.
//
// Thread safety: pure. Failure: INVALID_ARGUMENT naming `source` and what is wrong.

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace brigade::analyze {

// `threshold` is the decimal text to write (ThresholdPoint::text); `directory_name` is the
// folder holding the file (a config may leave its name to it).
absl::StatusOr<std::string> RewriteCascadeThreshold(std::string_view text, std::string_view source,
                                                    std::string_view router,
                                                    std::string_view directory_name,
                                                    std::string_view threshold);

}  // namespace brigade::analyze

#endif  // BRIGADE_TOOLS_ANALYZE_CASCADE_CONFIG_FILE_H_
