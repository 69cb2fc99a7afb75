#ifndef BRIGADE_REPOSITORY_MODEL_FILE_H_
#define BRIGADE_REPOSITORY_MODEL_FILE_H_

// ReadModelFile: core's ReadPlainFile (core/plain_file.h: a plain name, a regular file, a bound)
// with the repository's wording, for the files a model config names (an output's
// label_filename, a warm-up's input_data_file).
//
// Pure apart from the file system read; thread-safe.
// Failure: INVALID_ARGUMENT naming `what` for a name with a path in it or a file over the
// bound; NOT_FOUND naming the path for a missing file or something not a regular file.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/plain_file.h"

namespace brigade::repository {

inline constexpr uintmax_t kMaxModelFileBytes = uintmax_t{64} << 20;

absl::StatusOr<std::string> ReadModelFile(const std::filesystem::path& dir, std::string_view name,
                                          std::string_view what,
                                          uintmax_t max_bytes = kMaxModelFileBytes);

}  // namespace brigade::repository

#endif  // BRIGADE_REPOSITORY_MODEL_FILE_H_
