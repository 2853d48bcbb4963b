// Router: maps a category to the name of its pool. Rules match a category exactly or
// by prefix; an exact rule beats any prefix rule and a longer prefix beats a shorter
// one. A category that matches no rule is its own pool.
//
// Immutable after Create; safe to share between threads.
#ifndef DICTLOG_SERVER_POOL_ROUTER_H_
#define DICTLOG_SERVER_POOL_ROUTER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dictlog::pool {

struct RouteRule {
  // Exactly one of the two is set.
  std::string category;
  std::string prefix;
  std::string pool;
};

class Router {
 public:
  // INVALID_ARGUMENT for a rule with a bad name or prefix, with both or neither of
  // category and prefix, or a second rule for the same category or prefix.
  static absl::StatusOr<Router> Create(const std::vector<RouteRule>& rules);

  Router() = default;

  // The pool for `category` (which the caller has validated).
  std::string Route(absl::string_view category) const;

 private:
  std::map<std::string, std::string, std::less<>> exact_;
  // Longest prefixes first.
  std::vector<std::pair<std::string, std::string>> prefixes_;
};

}  // namespace dictlog::pool

#endif  // DICTLOG_SERVER_POOL_ROUTER_H_
