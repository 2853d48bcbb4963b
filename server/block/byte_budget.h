// ByteBudget: the payload bytes one read call may still return (a MultiGet, one Scan
// message). Records are admitted in order, by the size their stored form declares
// (a frame's content size, a block entry's length), before anything is decoded. The
// first record is always admitted, even alone past the budget, so every call makes
// progress; once a record does not fit, no later record is admitted.
//
// Not thread-safe: one per call, used by one thread. Copyable: a caller may keep a copy
// to undo what a pass took.
#ifndef DICTLOG_SERVER_BLOCK_BYTE_BUDGET_H_
#define DICTLOG_SERVER_BLOCK_BYTE_BUDGET_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dictlog::block {

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t bytes) : limit_(bytes), remaining_(bytes) {}

  // Whether a record of `bytes` payload bytes may be returned; takes them if so.
  bool Take(uint64_t bytes) {
    if (exhausted_) return false;
    if (bytes > remaining_ && admitted_any_) {
      exhausted_ = true;
      return false;
    }
    remaining_ -= bytes > remaining_ ? remaining_ : bytes;
    admitted_any_ = true;
    return true;
  }

  // True once a record was refused: every later one is refused too.
  bool exhausted() const { return exhausted_; }
  // Refuses every later record (a caller that refused one without asking Take).
  void Exhaust() { exhausted_ = true; }
  // Bytes left; whether a record was admitted (if not, the next one is, whatever its size).
  uint64_t remaining() const { return remaining_; }
  bool admitted_any() const { return admitted_any_; }

  // The result of a record the budget refused: RESOURCE_EXHAUSTED, ask again.
  absl::Status ExhaustedError() const {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the call's response budget of ", limit_,
        " payload bytes was reached before this record; ask again for it"));
  }

 private:
  uint64_t limit_;
  uint64_t remaining_;
  bool admitted_any_ = false;
  bool exhausted_ = false;
};

}  // namespace dictlog::block

#endif  // DICTLOG_SERVER_BLOCK_BYTE_BUDGET_H_
