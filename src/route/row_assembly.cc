#include "route/row_assembly.h"

#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"

namespace brigade::route {

absl::StatusOr<Tensor> AssembleRows(std::span<const Tensor> parts, std::span<const RowRef> rows) {
  if (rows.empty()) return absl::InvalidArgumentError("no row to assemble");
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].shape().empty()) {
      return absl::InvalidArgumentError(StrCat("part ", i, " is a scalar: it has no rows"));
    }
  }
  // Runs of consecutive rows of one part, each taken as one slice.
  std::vector<Tensor> slices;
  size_t begin = 0;
  while (begin < rows.size()) {
    const RowRef first = rows[begin];
    if (first.part < 0 || static_cast<size_t>(first.part) >= parts.size()) {
      return absl::InvalidArgumentError(
          StrCat("row ", begin, " names part ", first.part, " of ", parts.size()));
    }
    size_t end = begin + 1;
    while (end < rows.size() && rows[end].part == first.part &&
           rows[end].row == first.row + static_cast<int64_t>(end - begin)) {
      ++end;
    }
    BRIGADE_ASSIGN_OR_RETURN(
        Tensor slice, parts[first.part].SliceRows(first.row, static_cast<int64_t>(end - begin)));
    slices.push_back(std::move(slice));
    begin = end;
  }
  // One slice is returned as it is: a view of its part.
  return ConcatRows(slices);
}

}  // namespace brigade::route
