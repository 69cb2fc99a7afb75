#ifndef BRIGADE_ROUTE_ROW_ASSEMBLY_H_
#define BRIGADE_ROUTE_ROW_ASSEMBLY_H_

// AssembleRows: builds a tensor row by row (dimension 0) from the rows of other tensors. It is
// how a cascade gathers the uncertain rows of a batch for its second variant and merges that
// variant's answers back, and how an ensemble switch sends each branch its rows and a SELECT
// fusion puts the branches' rows back in the request's order.
//
// Consecutive rows of one part are taken as one slice, so a result that is one contiguous run
// of one part is a view of it (no copy); otherwise one allocation of the rows' total size, which
// the parts already hold, so nothing here allocates more than its inputs' size. BYTES rows are
// located through their length prefixes.
//
// Thread safety: a pure function. Failure: INVALID_ARGUMENT for a row out of range, a part
// index out of range, a scalar part, or parts whose datatypes or per-row shapes differ.

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace brigade::route {

// Row `row` of parts[part].
struct RowRef {
  int part = 0;
  int64_t row = 0;
};

// A tensor of rows.size() rows: its row i is rows[i]. At least one row.
absl::StatusOr<Tensor> AssembleRows(std::span<const Tensor> parts, std::span<const RowRef> rows);

}  // namespace brigade::route

#endif  // BRIGADE_ROUTE_ROW_ASSEMBLY_H_
