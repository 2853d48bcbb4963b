// Status propagation macros for absl::Status / absl::StatusOr (abseil 20220623 ships
// none). Header-only; safe to use from any thread.
//
//   RETURN_IF_ERROR(DoThing());
//   ASSIGN_OR_RETURN(auto value, ComputeValue());
#ifndef DICTLOG_COMMON_STATUS_MACROS_H_
#define DICTLOG_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define DICTLOG_CONCAT_INNER_(a, b) a##b
#define DICTLOG_CONCAT_(a, b) DICTLOG_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                                  \
  do {                                                         \
    const ::absl::Status dictlog_status_ = (expr);             \
    if (!dictlog_status_.ok()) return dictlog_status_;         \
  } while (false)

#define ASSIGN_OR_RETURN(lhs, expr) \
  DICTLOG_ASSIGN_OR_RETURN_IMPL_(DICTLOG_CONCAT_(dictlog_or_, __LINE__), lhs, expr)

#define DICTLOG_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#endif  // DICTLOG_COMMON_STATUS_MACROS_H_
