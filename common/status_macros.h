// Status propagation helpers shared by every layer (kernels, model, train, server).
// RETURN_IF_ERROR(expr)        returns the absl::Status of expr when it is not OK.
// ASSIGN_OR_RETURN(lhs, expr)  unwraps an absl::StatusOr or returns its error.
// Errors cross our APIs as absl::Status; they become grpc::Status exactly once,
// in server/status_convert.cc.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define FT_STATUS_CONCAT_INNER(a, b) a##b
#define FT_STATUS_CONCAT(a, b) FT_STATUS_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status _ft_status = (expr);            \
    if (!_ft_status.ok()) return _ft_status;       \
  } while (0)

#define FT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  FT_ASSIGN_OR_RETURN_IMPL(FT_STATUS_CONCAT(_ft_statusor_, __LINE__), lhs, expr)
