// AskAgain: the client side of the server's per-call response budget (docs/api.md
// MultiGet): the ids a call answered RESOURCE_EXHAUSTED are asked for again, in order,
// until every id is answered or a call answers none of them. Shared by MultiGet and
// MultiGetFrames.
//
// Thread Safety: a function over its arguments; `once` is called on the caller's thread.
#ifndef DICTLOG_CLIENT_ASK_AGAIN_H_
#define DICTLOG_CLIENT_ASK_AGAIN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace dictlog::client {

// `once(ids)` makes one call: one result per id, in order. A failed call fails it all.
template <typename Result, typename Once>
absl::StatusOr<std::vector<absl::StatusOr<Result>>> AskAgain(
    absl::Span<const std::string> ids, const Once& once) {
  absl::StatusOr<std::vector<absl::StatusOr<Result>>> results = once(ids);
  if (!results.ok()) return results.status();
  std::vector<size_t> pending;  // Positions (into ids) not answered yet, in order.
  for (size_t i = 0; i < results->size(); ++i) {
    if (absl::IsResourceExhausted((*results)[i].status())) pending.push_back(i);
  }
  while (!pending.empty()) {
    std::vector<std::string> again;
    again.reserve(pending.size());
    for (size_t i : pending) again.push_back(ids[i]);
    absl::StatusOr<std::vector<absl::StatusOr<Result>>> answers = once(again);
    if (!answers.ok()) return answers.status();
    if (answers->size() != pending.size()) {
      return absl::InternalError(absl::StrCat("MultiGet of ", pending.size(),
                                              " ids returned ", answers->size(), " results"));
    }
    std::vector<size_t> still;
    for (size_t k = 0; k < pending.size(); ++k) {
      if (absl::IsResourceExhausted((*answers)[k].status())) still.push_back(pending[k]);
      (*results)[pending[k]] = std::move((*answers)[k]);
    }
    if (still.size() == pending.size()) break;  // No progress: leave them exhausted.
    pending = std::move(still);
  }
  return results;
}

}  // namespace dictlog::client

#endif  // DICTLOG_CLIENT_ASK_AGAIN_H_
