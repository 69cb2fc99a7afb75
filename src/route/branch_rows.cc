#include "route/branch_rows.h"

#include <algorithm>

#include "core/strings.h"
#include "route/row_assembly.h"

namespace brigade::route {

// `value` (tensor `name`, holding the request's rows `have`, of `batch_rows`) cut to the rows
// `want`, which it must hold. The same rows are the same tensor (no copy); otherwise the rows
// are gathered (a run of consecutive rows is a view).
absl::StatusOr<Tensor> AlignRows(const Tensor& value, const Rows& have, const Rows& want,
                                 int64_t batch_rows, std::string_view name) {
  if (have == want) return value;
  const int64_t held = have == nullptr ? batch_rows : static_cast<int64_t>(have->size());
  if (want == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("tensor '", name, "' holds ", held, " of the request's ", batch_rows, " rows"));
  }
  if (value.shape().empty() || value.shape()[0] != held) {
    return absl::InvalidArgumentError(
        StrCat("tensor '", name, "' has shape ", ShapeToString(value.shape()),
               ", not one row for each of its ", held,
               " rows of the batch, so its rows cannot go down different branches"));
  }
  std::vector<RowRef> refs;
  refs.reserve(want->size());  // at most the batch's rows
  size_t at = 0;
  for (const int64_t row : *want) {
    if (have == nullptr) {
      refs.push_back(RowRef{0, row});
      continue;
    }
    while (at < have->size() && (*have)[at] < row) ++at;
    if (at == have->size() || (*have)[at] != row) {
      return absl::InvalidArgumentError(
          StrCat("tensor '", name, "' does not hold row ", row, " of the request"));
    }
    refs.push_back(RowRef{0, static_cast<int64_t>(at)});
  }
  return AssembleRows({&value, 1}, refs);
}

// SELECT over inputs holding different rows: each row of `step_rows` from the one input that
// holds it, in the request's order.
absl::StatusOr<Tensor> SelectRows(const std::vector<Tensor>& present,
                                  const std::vector<Rows>& present_rows,
                                  const std::vector<std::string_view>& names, const Rows& step_rows,
                                  int64_t batch_rows) {
  const size_t wanted = step_rows == nullptr ? static_cast<size_t>(batch_rows) : step_rows->size();
  std::vector<RowRef> refs(wanted, RowRef{-1, 0});
  for (size_t i = 0; i < present.size(); ++i) {
    const Rows& have = present_rows[i];
    const int64_t held = have == nullptr ? batch_rows : static_cast<int64_t>(have->size());
    if (present[i].shape().empty() || present[i].shape()[0] != held) {
      return absl::InvalidArgumentError(
          StrCat("tensor '", names[i], "' has shape ", ShapeToString(present[i].shape()),
                 ", not one row for each of its ", held, " rows of the batch"));
    }
    for (int64_t at = 0; at < held; ++at) {
      const int64_t row = have == nullptr ? at : (*have)[at];
      size_t index = static_cast<size_t>(row);
      if (step_rows != nullptr) {
        auto it = std::lower_bound(step_rows->begin(), step_rows->end(), row);
        if (it == step_rows->end() || *it != row) continue;  // not a row this fusion joins
        index = static_cast<size_t>(it - step_rows->begin());
      }
      if (index >= wanted) continue;
      if (refs[index].part >= 0) {
        return absl::InvalidArgumentError(StrCat("SELECT found row ", row, " in tensor '",
                                                 names[refs[index].part], "' and in tensor '",
                                                 names[i], "', where one branch writes it"));
      }
      refs[index] = RowRef{static_cast<int>(i), at};
    }
  }
  for (size_t index = 0; index < wanted; ++index) {
    if (refs[index].part < 0) {
      const int64_t row = step_rows == nullptr ? static_cast<int64_t>(index) : (*step_rows)[index];
      return absl::InvalidArgumentError(
          StrCat("SELECT found row ", row, " of the request in none of its inputs"));
    }
  }
  return AssembleRows(present, refs);
}

}  // namespace brigade::route
