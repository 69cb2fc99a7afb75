#ifndef BRIGADE_CORE_STATUS_MACROS_H_
#define BRIGADE_CORE_STATUS_MACROS_H_

// The one propagation idiom for absl::Status / absl::StatusOr inside Brigade.
//
//   BRIGADE_RETURN_IF_ERROR(DoThing());
//   BRIGADE_ASSIGN_OR_RETURN(auto tensor, Tensor::Allocate(type, shape));
//
// Both expand to an early `return` of the failing status and nothing else: no logging, no
// replies, no hidden control flow beyond the return.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define BRIGADE_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status brigade_status_ = (expr);           \
    if (!brigade_status_.ok()) return brigade_status_; \
  } while (false)

#define BRIGADE_STATUS_CONCAT_INNER_(a, b) a##b
#define BRIGADE_STATUS_CONCAT_(a, b) BRIGADE_STATUS_CONCAT_INNER_(a, b)

#define BRIGADE_ASSIGN_OR_RETURN(lhs, expr) \
  BRIGADE_ASSIGN_OR_RETURN_IMPL_(BRIGADE_STATUS_CONCAT_(brigade_statusor_, __LINE__), lhs, expr)

// `statusor` names the variable it declares and `lhs` may be a declaration (`auto tensor`):
// neither can be parenthesized.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define BRIGADE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()
// NOLINTEND(bugprone-macro-parentheses)

#endif  // BRIGADE_CORE_STATUS_MACROS_H_
