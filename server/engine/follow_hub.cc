#include "server/engine/follow_hub.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dictlog::engine {

Follower::~Follower() { hub_->Unsubscribe(this); }

Follower::Batch Follower::Take(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !buffer_.empty() || state_ != State::kLive;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  Batch batch;
  batch.records.assign(std::make_move_iterator(buffer_.begin()),
                       std::make_move_iterator(buffer_.end()));
  buffer_.clear();
  buffered_bytes_ = 0;
  batch.state = state_;
  return batch;
}

bool Follower::WaitCommitted(uint64_t seq, absl::Duration timeout) {
  absl::MutexLock lock(&feed_->mu);
  auto reached = [this, seq]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(feed_->mu) {
    return feed_->committed >= seq || feed_->closed;
  };
  feed_->mu.AwaitWithTimeout(absl::Condition(&reached), timeout);
  return feed_->committed >= seq;
}

void Follower::Push(const std::shared_ptr<const v1::Record>& record, size_t max_records,
                    size_t max_bytes) {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kLive) return;
  const size_t bytes = record->payload().size();
  if (buffer_.size() >= max_records ||
      (!buffer_.empty() && buffered_bytes_ + bytes > max_bytes)) {
    state_ = State::kFellBehind;  // What it holds is still delivered; nothing after.
    hub_->fell_behind_.fetch_add(1);
    return;
  }
  buffer_.push_back(record);
  buffered_bytes_ += bytes;
}

void Follower::End(State state) {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kLive) state_ = state;
}

Follower::Feed* FollowHub::FeedOf(const pool::Pool& pool) {
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = feeds_.find(pool.id());
    if (it != feeds_.end()) return it->second.get();
  }
  absl::MutexLock lock(&mu_);
  std::unique_ptr<Feed>& feed = feeds_[pool.id()];
  if (feed == nullptr) {
    feed = std::make_unique<Feed>();
    // Every reservation goes through the hub: none is in flight before the first.
    const uint64_t last = const_cast<pool::Pool&>(pool).AllocateSeqs(0) - 1;
    absl::MutexLock feed_lock(&feed->mu);
    feed->committed = last;
    feed->reserved = last;
    feed->closed = closed_;
    ++generation_;
  }
  return feed.get();
}

uint64_t FollowHub::Reserve(pool::Pool& pool, uint64_t count) {
  Feed* feed = FeedOf(pool);
  absl::MutexLock lock(&feed->mu);
  const uint64_t first = pool.ReserveSeqs(count);
  feed->reserved = std::max(feed->reserved, first + count - 1);
  feed->pending[first].count = count;
  return first;
}

uint64_t FollowHub::ReserveApplied(const pool::Pool& pool, uint64_t last) {
  Feed* feed = FeedOf(pool);
  absl::MutexLock lock(&feed->mu);
  bool abandoned = false;
  for (auto& [first, range] : feed->pending) {
    if (range.landed) continue;
    if (first + range.count - 1 == last) return first;  // The same message, retried.
    range.landed = true;  // Applies are sequential: no other write of it comes.
    abandoned = true;
  }
  if (abandoned) Release(feed);
  if (last <= feed->reserved) return 0;
  const uint64_t first = feed->reserved + 1;
  feed->pending[first].count = last - feed->reserved;
  feed->reserved = last;
  return first;
}

void FollowHub::Land(const pool::Pool& pool, uint64_t first, uint64_t count,
                     const RecordBuilder& build) {
  Feed* feed = FeedOf(pool);
  absl::MutexLock lock(&feed->mu);
  auto it = feed->pending.find(first);
  if (it == feed->pending.end() || it->second.count != count) return;  // Not reserved.
  it->second.landed = true;
  if (build && !feed->followers.empty()) {
    for (v1::Record& record : build()) {
      it->second.records.push_back(std::make_shared<const v1::Record>(std::move(record)));
    }
  }
  Release(feed);
}

void FollowHub::Release(Feed* feed) {
  while (!feed->pending.empty()) {
    auto it = feed->pending.begin();
    if (!it->second.landed || it->first > feed->committed + 1) break;
    const uint64_t first = it->first;
    const std::vector<std::shared_ptr<const v1::Record>>& records = it->second.records;
    for (Follower* follower : feed->followers) {
      for (size_t k = 0; k < records.size(); ++k) {
        if (first + k <= follower->start_) continue;
        if (follower->category_.has_value() && records[k]->category() != *follower->category_) {
          continue;
        }
        follower->Push(records[k], options_.buffer_records, options_.buffer_bytes);
      }
    }
    feed->committed = first + it->second.count - 1;
    feed->pending.erase(it);
  }
}

absl::StatusOr<std::unique_ptr<Follower>> FollowHub::Subscribe(
    const pool::Pool& pool, std::optional<std::string> category) {
  Feed* feed = FeedOf(pool);
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::UnavailableError("the server is shutting down");
  if (followers_ >= options_.max_followers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("too many follow streams (--max_follow_streams=",
                     options_.max_followers, "); try again later"));
  }
  absl::MutexLock feed_lock(&feed->mu);
  std::unique_ptr<Follower> follower(
      new Follower(this, feed, std::move(category), feed->reserved));
  feed->followers.push_back(follower.get());
  ++followers_;
  return follower;
}

// Subscribe's admission without a feed.
absl::StatusOr<std::unique_ptr<FollowHub::Slot>> FollowHub::HoldSlot(
    std::function<void()> on_close) {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::UnavailableError("the server is shutting down");
  if (followers_ >= options_.max_followers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("too many follow streams (--max_follow_streams=",
                     options_.max_followers, "); try again later"));
  }
  ++followers_;
  auto slot = std::make_unique<Slot>(this, std::move(on_close));
  slots_.push_back(slot.get());
  return slot;
}

FollowHub::Slot::~Slot() {
  absl::MutexLock lock(&hub_->mu_);
  --hub_->followers_;
  std::vector<Slot*>& all = hub_->slots_;
  all.erase(std::remove(all.begin(), all.end(), this), all.end());
}

void FollowHub::Unsubscribe(Follower* follower) {
  {
    absl::MutexLock lock(&follower->feed_->mu);
    std::vector<Follower*>& all = follower->feed_->followers;
    all.erase(std::remove(all.begin(), all.end(), follower), all.end());
  }
  absl::MutexLock lock(&mu_);
  --followers_;
}

bool FollowHub::WaitForNewFeed(uint64_t generation, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto changed = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return generation_ != generation || closed_;
  };
  mu_.AwaitWithTimeout(absl::Condition(&changed), timeout);
  return generation_ != generation;
}

uint64_t FollowHub::generation() const {
  absl::ReaderMutexLock lock(&mu_);
  return generation_;
}

void FollowHub::Close() {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  closed_ = true;
  for (Slot* slot : slots_) {
    if (slot->on_close_) slot->on_close_();
  }
  for (auto& [id, feed] : feeds_) {
    absl::MutexLock feed_lock(&feed->mu);
    feed->closed = true;
    for (Follower* follower : feed->followers) follower->End(Follower::State::kClosed);
  }
}

bool FollowHub::closed() const {
  absl::ReaderMutexLock lock(&mu_);
  return closed_;
}

void FollowHub::CountSent(uint64_t records) { records_sent_.fetch_add(records); }

FollowStats FollowHub::Stats() const {
  FollowStats stats;
  {
    absl::ReaderMutexLock lock(&mu_);
    stats.connected = followers_;
  }
  stats.fell_behind = fell_behind_.load();
  stats.records_sent = records_sent_.load();
  return stats;
}

}  // namespace dictlog::engine
