// LogEngine::Follow: the records of a pool (or of one category) as they are appended.
// The stream subscribes first (FollowHub), so every record after its start comes
// through its buffer; the records between spec.after_id and that start are read from
// the store by Scan once they have all landed; then the buffer's records follow. Each
// record is passed once, in id order.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/engine/log_engine.h"
#include "server/pool/names.h"

namespace dictlog::engine {
namespace {

using Sink = std::function<absl::Status(std::vector<v1::Record>)>;

// Where a stream that ends now resumes: after the last id it was sent (0: none; it
// names no id the caller has not seen).
std::string ResumeHint(const pool::Pool& pool, uint64_t last_sent) {
  if (last_sent == 0) return "no record was sent: resume from where this stream started";
  return absl::StrCat("resume after ", pool::FormatRecordId(pool.name(), last_sent));
}

}  // namespace

absl::StatusOr<uint64_t> LogEngine::SeqInTarget(absl::string_view field, absl::string_view id,
                                                absl::string_view verb,
                                                absl::string_view category,
                                                absl::string_view pool_name) {
  ASSIGN_OR_RETURN(pool::RecordId from, pool::ParseRecordId(id));
  if (from.pool == pool_name) return from.seq;
  // A category call names the category: its pool's name is not the caller's to learn.
  return absl::InvalidArgumentError(
      category.empty()
          ? absl::StrCat(field, " ", id, " is not in the ", verb, " pool '", pool_name, "'")
          : absl::StrCat(field, " ", id, " is not in the pool of the ", verb, " category '",
                         category, "'"));
}

absl::Status LogEngine::Follow(const FollowSpec& spec, const Sink& sink,
                               const Interrupt& interrupt) {
  if (spec.category.empty() == spec.pool.empty()) {
    return absl::InvalidArgumentError("Follow needs exactly one of category and pool");
  }
  if (!spec.category.empty()) RETURN_IF_ERROR(pool::ValidateName(spec.category, "category"));
  const std::string pool_name =
      spec.category.empty() ? spec.pool : router_.Route(spec.category);
  std::optional<uint64_t> after;
  if (spec.from_start) {
    if (!spec.after_id.empty()) {
      return absl::InvalidArgumentError("Follow takes after_id or from_start, not both");
    }
    after = 0;
  } else if (!spec.after_id.empty()) {
    ASSIGN_OR_RETURN(after, SeqInTarget("after_id", spec.after_id, "followed", spec.category,
                                        pool_name));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, AwaitFollowedPool(pool_name, interrupt));
  std::optional<std::string> category;
  if (!spec.category.empty()) category = spec.category;
  ASSIGN_OR_RETURN(std::unique_ptr<Follower> follower,
                   follows_.Subscribe(*pool, std::move(category)));
  const uint64_t start = follower->start();
  uint64_t position = after.value_or(start);  // Records after it are still to come.
  uint64_t last_sent = 0;
  auto counted = [&](std::vector<v1::Record> records) {
    const size_t n = records.size();
    RETURN_IF_ERROR(sink(std::move(records)));
    follows_.CountSent(n);
    return absl::OkStatus();
  };
  if (position < start) {
    RETURN_IF_ERROR(
        FollowStored(spec, *pool, position, *follower, counted, interrupt, &last_sent));
    position = start;  // Gaps and other categories' records up to it included.
  }
  return FollowLive(*pool, position, *follower, counted, interrupt, &last_sent);
}

absl::StatusOr<std::shared_ptr<pool::Pool>> LogEngine::AwaitFollowedPool(
    const std::string& name, const Interrupt& interrupt) {
  while (true) {
    const uint64_t generation = follows_.generation();
    if (std::shared_ptr<pool::Pool> pool = registry_->Find(name)) return pool;
    if (follows_.closed()) return absl::UnavailableError("the server is shutting down");
    if (interrupt) RETURN_IF_ERROR(interrupt());
    // A pool's first append since start-up reserves through the hub: a new feed.
    follows_.WaitForNewFeed(generation, kFollowWait);
  }
}

absl::Status LogEngine::FollowStored(const FollowSpec& spec, const pool::Pool& pool,
                                     uint64_t after, Follower& follower, const Sink& sink,
                                     const Interrupt& interrupt, uint64_t* last_sent) {
  const uint64_t through = follower.start();
  // Appends that reserved seqs up to the start may still be writing them.
  while (!follower.WaitCommitted(through, kFollowWait)) {
    if (follows_.closed()) return absl::UnavailableError("the server is shutting down");
    if (pool.deleted()) {
      return absl::NotFoundError(absl::StrCat("pool '", pool.name(), "' was deleted"));
    }
    if (interrupt) RETURN_IF_ERROR(interrupt());
  }
  ScanSpec scan;
  scan.category = spec.category;
  scan.pool = spec.pool;
  scan.from_id = pool::FormatRecordId(pool.name(), after + 1);
  bool caught_up = false;
  auto until_start = [&](std::vector<v1::Record> records) -> absl::Status {
    std::vector<v1::Record> out;
    for (v1::Record& record : records) {
      ASSIGN_OR_RETURN(pool::RecordId id, pool::ParseRecordId(record.id()));
      if (id.seq > through) {
        caught_up = true;
        break;
      }
      out.push_back(std::move(record));
      *last_sent = id.seq;
    }
    if (!out.empty()) RETURN_IF_ERROR(sink(std::move(out)));
    return caught_up ? absl::CancelledError("caught up") : absl::OkStatus();
  };
  absl::Status status = Scan(scan, until_start, interrupt);
  if (caught_up && absl::IsCancelled(status)) return absl::OkStatus();
  return status;
}

absl::Status LogEngine::FollowLive(const pool::Pool& pool, uint64_t after,
                                   Follower& follower, const Sink& sink,
                                   const Interrupt& interrupt, uint64_t* last_sent) {
  while (true) {
    if (interrupt) RETURN_IF_ERROR(interrupt());
    Follower::Batch batch = follower.Take(kFollowWait);
    std::vector<v1::Record> out;
    uint64_t last = 0;
    for (const std::shared_ptr<const v1::Record>& record : batch.records) {
      ASSIGN_OR_RETURN(pool::RecordId id, pool::ParseRecordId(record->id()));
      if (id.seq <= after) continue;  // Before a start id given past the stream's start.
      out.push_back(*record);
      last = id.seq;
    }
    if (!out.empty()) {
      RETURN_IF_ERROR(sink(std::move(out)));
      *last_sent = last;
    }
    if (batch.state == Follower::State::kFellBehind) {
      return absl::AbortedError(absl::StrCat(
          "fell behind: the stream's buffer overflowed (--follow_buffer_records, "
          "--follow_buffer_bytes); ",
          ResumeHint(pool, *last_sent)));
    }
    if (batch.state == Follower::State::kClosed) {
      return absl::UnavailableError(
          absl::StrCat("the server is shutting down; ", ResumeHint(pool, *last_sent)));
    }
    // Checked after delivering what the buffer held: nothing is appended to a deleted
    // pool (appends check Pool::deleted() under the write gate), so nothing is lost.
    if (batch.records.empty() && pool.deleted()) {
      return absl::NotFoundError(absl::StrCat("pool '", pool.name(), "' was deleted"));
    }
  }
}

}  // namespace dictlog::engine
