// FollowHub: hands each append's records to the Follow streams of its pool, in seq
// order and exactly once, and tells a new stream up to which seq the pool's records
// are all in the store, so that it can catch up from storage and then go on live
// without a gap or a duplicate (LogEngine::Follow).
//
// Appends reserve their seqs through the hub (Reserve) and report the outcome (Land:
// written, or not after a failed write). Concurrent appends to a pool land out of
// order; the hub releases a pool's seqs in order: once every seq up to S has landed,
// S is the pool's committed seq and the records up to it go into the buffers of the
// pool's followers (only those of their category, for a category follower). A
// follower receives every record with a seq above its start (Follower::start(): the
// last seq reserved when it subscribed); the records at or below it are in the store
// once committed() reaches it. A buffer that would pass its limits drops what comes
// and marks the follower kFellBehind: what it holds is still delivered, in order.
//
// Records are copied for followers only while a pool has some; one copy is shared by
// all of them.
//
// Cluster mode (ADR 0032): records applied from the log come with the log's seqs,
// increasing per pool with gaps, applied one message after the other. The applier
// reserves up to the message's last seq of the pool (ReserveApplied; the range covers
// the gaps) before it writes, and lands the range once written, as an append does: so a
// new follower's start is still a range's end, and applied records wake followers on
// every replica.
//
// Thread safety: all methods may be called concurrently. A Follower's methods are
// called from one thread (its stream); the hub must outlive its followers.
#ifndef DICTLOG_SERVER_ENGINE_FOLLOW_HUB_H_
#define DICTLOG_SERVER_ENGINE_FOLLOW_HUB_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/dictlog.pb.h"
#include "server/pool/pool.h"

namespace dictlog::engine {

struct FollowOptions {
  // Records a follower's buffer holds before it has fallen behind. Default 1000.
  size_t buffer_records = 1000;
  // Payload bytes a follower's buffer holds before it has fallen behind (one record
  // always fits). Default 4 MiB.
  size_t buffer_bytes = 4 << 20;
  // Most followers at once; Subscribe answers RESOURCE_EXHAUSTED beyond. Default 32.
  size_t max_followers = 32;
};

// What the followers have done since the server started (metrics).
struct FollowStats {
  uint64_t connected = 0;     // Followers now.
  uint64_t fell_behind = 0;   // Followers whose buffer overflowed.
  uint64_t records_sent = 0;  // Records handed to followers' streams (CountSent).
};

class FollowHub;

// One follow stream's subscription: its buffer and state. Unsubscribes when destroyed.
class Follower {
 public:
  enum class State { kLive, kFellBehind, kClosed };
  struct Batch {
    std::vector<std::shared_ptr<const v1::Record>> records;  // In seq order.
    State state = State::kLive;
  };

  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;
  ~Follower();

  // The last seq reserved when it subscribed: it receives every record after it.
  uint64_t start() const { return start_; }
  // Waits up to `timeout` until the buffer holds records or the state is not kLive;
  // then takes what the buffer holds.
  Batch Take(absl::Duration timeout);
  // Waits up to `timeout` until the pool's committed seq is at least `seq` or the hub
  // closed; true if it is.
  bool WaitCommitted(uint64_t seq, absl::Duration timeout);

 private:
  friend class FollowHub;
  struct Feed;
  Follower(FollowHub* hub, Feed* feed, std::optional<std::string> category, uint64_t start)
      : hub_(hub), feed_(feed), category_(std::move(category)), start_(start) {}
  // Called with the feed's mutex held.
  void Push(const std::shared_ptr<const v1::Record>& record, size_t max_records,
            size_t max_bytes);
  void End(State state);

  FollowHub* const hub_;
  Feed* const feed_;
  const std::optional<std::string> category_;
  const uint64_t start_;
  absl::Mutex mu_;
  std::deque<std::shared_ptr<const v1::Record>> buffer_ ABSL_GUARDED_BY(mu_);
  size_t buffered_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  State state_ ABSL_GUARDED_BY(mu_) = State::kLive;
};

class FollowHub {
 public:
  // Builds the records of a landed range, in seq order (called only while the pool
  // has followers, under the pool's feed lock).
  using RecordBuilder = std::function<std::vector<v1::Record>()>;

  explicit FollowHub(FollowOptions options) : options_(options) {}
  FollowHub(const FollowHub&) = delete;
  FollowHub& operator=(const FollowHub&) = delete;

  // Pool::ReserveSeqs(count) for an append, remembered until Land.
  uint64_t Reserve(pool::Pool& pool, uint64_t count);
  // Cluster mode: an applied message's records of `pool` have seqs up to `last`, above
  // every seq applied before; reserves through `last` and returns the first seq of the
  // range to Land. A range still pending whose write failed is the same message again
  // (its first is returned) or was given up (it lands as a gap). 0 if `last` is not
  // above the pool's reserved seq (nothing to land).
  uint64_t ReserveApplied(const pool::Pool& pool, uint64_t last);
  // The append of [first, first + count) is over: written (`build` gives its
  // records), or failed (`build` null). Every Reserve is landed exactly once.
  void Land(const pool::Pool& pool, uint64_t first, uint64_t count,
            const RecordBuilder& build);

  // A follower of `pool` (only records of `category` if set). RESOURCE_EXHAUSTED past
  // max_followers, UNAVAILABLE once closed.
  absl::StatusOr<std::unique_ptr<Follower>> Subscribe(const pool::Pool& pool,
                                                      std::optional<std::string> category);
  // One of max_followers held by a stream served elsewhere (cluster mode: a follow this
  // node proxies to a replica, ADR 0032), given back when the slot is destroyed.
  // `on_close` runs once if Close comes first (under the hub's lock: it must not call
  // the hub). RESOURCE_EXHAUSTED and UNAVAILABLE as Subscribe.
  class Slot {
   public:
    Slot(FollowHub* hub, std::function<void()> on_close)
        : hub_(hub), on_close_(std::move(on_close)) {}
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();

   private:
    friend class FollowHub;
    FollowHub* const hub_;
    const std::function<void()> on_close_;
  };
  absl::StatusOr<std::unique_ptr<Slot>> HoldSlot(std::function<void()> on_close);
  // Waits up to `timeout` for a pool's first Reserve since `generation` (see
  // generation()), or for Close; true if one came.
  bool WaitForNewFeed(uint64_t generation, absl::Duration timeout);
  uint64_t generation() const;

  // Ends every follower (kClosed) and refuses new ones: server shutdown.
  void Close();
  bool closed() const;

  void CountSent(uint64_t records);
  FollowStats Stats() const;

 private:
  friend class Follower;
  using Feed = Follower::Feed;
  Feed* FeedOf(const pool::Pool& pool);
  // Moves the records of the landed ranges at the front of `feed` to its followers.
  void Release(Feed* feed);
  void Unsubscribe(Follower* follower);

  const FollowOptions options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, std::unique_ptr<Feed>> feeds_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  size_t followers_ ABSL_GUARDED_BY(mu_) = 0;  // Slots included.
  std::vector<Slot*> slots_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // Atomic: counted under feed locks, which nest inside mu_.
  std::atomic<uint64_t> fell_behind_{0};
  std::atomic<uint64_t> records_sent_{0};
};

// The state of one pool's seqs in the hub.
struct Follower::Feed {
  struct Range {
    uint64_t count = 0;
    bool landed = false;
    std::vector<std::shared_ptr<const v1::Record>> records;
  };
  absl::Mutex mu;
  uint64_t committed ABSL_GUARDED_BY(mu) = 0;  // Every seq up to it has landed.
  uint64_t reserved ABSL_GUARDED_BY(mu) = 0;   // The last seq reserved.
  std::map<uint64_t, Range> pending ABSL_GUARDED_BY(mu);  // By first seq.
  std::vector<Follower*> followers ABSL_GUARDED_BY(mu);
  bool closed ABSL_GUARDED_BY(mu) = false;
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_FOLLOW_HUB_H_
