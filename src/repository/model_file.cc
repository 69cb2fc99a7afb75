#include "repository/model_file.h"

#include "core/strings.h"

namespace brigade::repository {

absl::StatusOr<std::string> ReadModelFile(const std::filesystem::path& dir, std::string_view name,
                                          std::string_view what, uintmax_t max_bytes) {
  absl::StatusOr<std::string> text = ReadPlainFile(dir, name, max_bytes);
  if (text.ok()) return text;
  if (absl::IsInvalidArgument(text.status())) {
    return absl::InvalidArgumentError(
        StrCat(what, " '", name, "' must be a file name in ", dir.string(), ", without a path"));
  }
  if (absl::IsOutOfRange(text.status())) {
    return absl::InvalidArgumentError(StrCat(what, ": ", text.status().message()));
  }
  return absl::NotFoundError(StrCat(what, ": ", text.status().message()));
}

}  // namespace brigade::repository
