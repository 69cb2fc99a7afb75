#ifndef BRIGADE_CORE_PLAIN_FILE_H_
#define BRIGADE_CORE_PLAIN_FILE_H_

// ReadPlainFile: the one way Brigade reads a file a config names (an output's label_filename,
// a warm-up's input_data_file, a brigade_process step's labels, vocab or model), so no config can
// name a file outside the directory it belongs in: the name must be a plain file name (no '/',
// not "." or "..", no NUL), the file a regular file at most `max_bytes` long (checked before
// reading). Links are followed: whoever can put a link in the repository can put the file there
// too (brigade analyze's trial repositories and Kubernetes ConfigMap volumes are made of links).
// Callers word the errors for their config; the codes tell the cases apart.
//
// Pure apart from the file system read; thread-safe.
// Failure: INVALID_ARGUMENT for a name with a path in it, NOT_FOUND for a missing file or
// something not a regular file, OUT_OF_RANGE for a file over the bound, DATA_LOSS for a failed
// read; each message names the path (or the name).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace brigade {

absl::StatusOr<std::string> ReadPlainFile(const std::filesystem::path& dir, std::string_view name,
                                          uintmax_t max_bytes);

// Resolves `relative` (a relative path, possibly of several components) under `dir` and checks
// that the result, with every symbolic link resolved, still lies inside `dir` (itself resolved):
// the canonical-prefix check, so neither "../" nor a link inside `dir` pointing elsewhere
// reaches outside it. The path need not exist. INVALID_ARGUMENT for an empty or absolute path,
// one with a NUL, or one naming `dir` itself; PERMISSION_DENIED for a path that escapes;
// NOT_FOUND when `dir` cannot be resolved. Messages name `relative` (callers add what it is).
absl::StatusOr<std::filesystem::path> ResolveInsideDir(const std::filesystem::path& dir,
                                                       std::string_view relative);

// A labels file's lines: one label per class index; "\r\n" endings and a final newline are
// not part of a label.
std::vector<std::string> SplitLabels(std::string_view text);

}  // namespace brigade

#endif  // BRIGADE_CORE_PLAIN_FILE_H_
