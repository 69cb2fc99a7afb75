#ifndef BRIGADE_REPOSITORY_MODEL_FILE_H_
#define BRIGADE_REPOSITORY_MODEL_FILE_H_

// ReadModelFile: the one way the repository reads a file a config names (an output's
// label_filename, a warm-up's input_data_file), so no config can name a file outside the model's
// directory: the name must be a plain file name (no '/', not "." or "..", no NUL), the file a
// regular file at most `max_bytes` long (checked before reading). Links are followed: whoever
// can put a link in the repository can put the file there too (brigade analyze's trial
// repositories and Kubernetes ConfigMap volumes are made of links).
//
// Pure apart from the file system read; thread-safe.
// Failure: INVALID_ARGUMENT naming `what` for a name with a path in it or a file over the
// bound; NOT_FOUND naming the path for a missing file or something not a regular file.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade::repository {

inline constexpr uintmax_t kMaxModelFileBytes = uintmax_t{64} << 20;

absl::StatusOr<std::string> ReadModelFile(const std::filesystem::path& dir, std::string_view name,
                                          std::string_view what,
                                          uintmax_t max_bytes = kMaxModelFileBytes);

// A labels file's lines: one label per class index; "\r\n" endings and a final newline are
// not part of a label.
std::vector<std::string> SplitLabels(std::string_view text);

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_MODEL_FILE_H_
