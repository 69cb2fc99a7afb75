#ifndef BRIGADE_ROUTE_BRANCH_ROWS_H_
#define BRIGADE_ROUTE_BRANCH_ROWS_H_

// The row-level glue of an ensemble whose switch sent the rows of one request down different
// branches: each tensor holds some of the request's rows (Rows), so a step reading it takes the
// rows its branch runs on (AlignRows), and a SELECT fusion puts each row back in the request's
// order from the one branch that wrote it (SelectRows). Both build on AssembleRows: the same
// rows are the same tensor, a consecutive run is a view, anything else one gather.
//
// Thread safety: pure functions. Failure: INVALID_ARGUMENT naming the tensor whose rows do not
// fit (a row it does not hold, a shape without one row per held row, a row found twice or not
// at all).

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::route {

// The rows of the request a tensor holds, or a branch runs on, ascending; null: every row.
using Rows = std::shared_ptr<const std::vector<int64_t>>;

// `value` (tensor `name`, holding the request's rows `have`, of `batch_rows`) cut to the rows
// `want`, which it must hold.
absl::StatusOr<Tensor> AlignRows(const Tensor& value, const Rows& have, const Rows& want,
                                 int64_t batch_rows, std::string_view name);

// SELECT over inputs holding different rows: each row of `step_rows` (of the request's
// `batch_rows`) from the one input of `present` that holds it (`present_rows`, named `names`),
// in the request's order.
absl::StatusOr<Tensor> SelectRows(const std::vector<Tensor>& present,
                                  const std::vector<Rows>& present_rows,
                                  const std::vector<std::string_view>& names, const Rows& step_rows,
                                  int64_t batch_rows);

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_BRANCH_ROWS_H_
