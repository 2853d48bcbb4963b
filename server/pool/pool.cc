#include "server/pool/pool.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/pool/pool_options.h"
#include "server/store/catalog_convert.h"

namespace dictlog::pool {

namespace {

// `ranges` (inclusive [first, last] pairs) sorted, those that overlap merged: a salvage
// stores one per damaged block and family, and two families' blocks may overlap.
std::vector<std::pair<uint64_t, uint64_t>> DisjointRanges(
    std::vector<std::pair<uint64_t, uint64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& range : ranges) {
    if (!merged.empty() && range.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, range.second);
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

}  // namespace

Pool::Pool(const store::StoredPool& stored)
    : id_(stored.record.id()),
      name_(stored.record.name()),
      next_seq_(NextSeq(stored)),
      indexed_from_(store::FromCatalog(stored.record.options()).storage_mode() ==
                            v1::STORAGE_MODE_BLOCK
                        ? stored.record.indexed_blocks_from_seq()
                        : 0),
      retained_from_(stored.record.retained_from_seq()),
      first_seq_(stored.record.first_seq()),
      lost_seqs_(DisjointRanges(stored.lost_seqs)),
      newest_unreadable_(stored.newest_unreadable),
      record_(stored.record),
      counters_(stored.counters) {
  for (const auto& [index, category] : stored.categories) {
    if (categories_.size() < index) categories_.resize(index);
    categories_[index - 1] = category;
    category_index_[category] = index;
  }
}

std::optional<std::pair<uint64_t, uint64_t>> Pool::LostRangeHolding(uint64_t seq) const {
  return FirstLostIn(seq, seq + 1);
}

std::optional<std::pair<uint64_t, uint64_t>> Pool::FirstLostIn(uint64_t from,
                                                               uint64_t to) const {
  // Disjoint and sorted, so their ends ascend too: the first that ends at or past
  // `from` is the only candidate. A scan asks for every record it reads.
  const auto it = std::partition_point(lost_seqs_.begin(), lost_seqs_.end(),
                                       [from](const auto& range) { return range.second < from; });
  if (it == lost_seqs_.end() || it->first >= to) return std::nullopt;
  return *it;
}

uint64_t Pool::NextSeq(const store::StoredPool& stored) {
  // Retention may have deleted every record: seqs below its mark are never reused. A
  // lease left by a crash (or a power loss) covers seqs that may have been handed out
  // and lost: they are skipped.
  return std::max({stored.last_seq + 1, stored.record.retained_from_seq(),
                   stored.record.first_seq(), stored.seq_ceiling});
}

absl::Status Pool::CoverSeqs(uint64_t end, store::Store& store) {
  if (end <= leased_.load()) return absl::OkStatus();
  absl::MutexLock lock(&lease_mu_);
  if (end <= leased_.load()) return absl::OkStatus();  // Another caller's lease.
  const uint64_t lease = end + kSeqLease;
  RETURN_IF_ERROR(store.PutSeqCeilings({{id_, lease}}));
  leased_.store(lease);
  return absl::OkStatus();
}

absl::Status Pool::LeaseAll(absl::Span<const std::shared_ptr<Pool>> pools,
                            store::Store& store, uint64_t lease) {
  std::vector<Pool*> sorted;  // Locked in id order: two callers never deadlock.
  for (const std::shared_ptr<Pool>& pool : pools) sorted.push_back(pool.get());
  std::sort(sorted.begin(), sorted.end(), [](Pool* a, Pool* b) { return a->id_ < b->id_; });
  std::vector<std::unique_ptr<absl::MutexLock>> locks;
  // Held across the write: a CoverSeqs of a smaller lease, written after this one,
  // would replace it in the store while the pool went on giving seqs below this one.
  for (Pool* pool : sorted) locks.push_back(std::make_unique<absl::MutexLock>(&pool->lease_mu_));
  std::vector<store::SeqCeiling> leases;
  for (Pool* pool : sorted) {
    leases.push_back({pool->id_, std::max(pool->leased_.load(), pool->next_seq() + lease)});
  }
  if (leases.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(store.PutSeqCeilings(leases));
  for (size_t i = 0; i < sorted.size(); ++i) sorted[i]->leased_.store(leases[i].next_seq);
  return absl::OkStatus();
}

std::optional<store::SeqCeiling> Pool::ExactLease() const {
  if (leased_.load() == 0) return std::nullopt;
  return store::SeqCeiling{id_, next_seq()};
}

storage::PoolRecord Pool::record() const {
  absl::MutexLock lock(&mu_);
  return record_;
}

v1::PoolOptions Pool::options() const {
  absl::MutexLock lock(&mu_);
  return store::FromCatalog(record_.options());
}

void Pool::set_record(const storage::PoolRecord& record) {
  absl::MutexLock lock(&mu_);
  record_ = record;
  retained_from_.store(record.retained_from_seq());
}

absl::StatusOr<uint32_t> Pool::CategoryIndex(absl::string_view category,
                                             store::Store& store) {
  if (category == name_) return 0;
  absl::MutexLock lock(&mu_);
  if (auto it = category_index_.find(category); it != category_index_.end()) {
    return it->second;
  }
  const uint32_t index = static_cast<uint32_t>(categories_.size()) + 1;
  RETURN_IF_ERROR(store.PutCategory(id_, index, category));
  categories_.emplace_back(category);
  category_index_.emplace(std::string(category), index);
  return index;
}

std::optional<uint32_t> Pool::FindCategoryIndex(absl::string_view category) const {
  if (category == name_) return 0;
  absl::MutexLock lock(&mu_);
  auto it = category_index_.find(category);
  if (it == category_index_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Pool::Categories() const {
  absl::MutexLock lock(&mu_);
  return categories_;
}

size_t Pool::CategoryCount() const {
  absl::MutexLock lock(&mu_);
  return categories_.size();
}

absl::StatusOr<std::string> Pool::CategoryName(uint32_t index) const {
  if (index == 0) return name_;
  absl::MutexLock lock(&mu_);
  if (index > categories_.size() || categories_[index - 1].empty()) {
    return absl::DataLossError(
        absl::StrCat("pool '", name_, "' has no category with index ", index));
  }
  return categories_[index - 1];
}

void Pool::AddCounters(const store::PoolCounters& delta) {
  absl::MutexLock lock(&mu_);
  counters_ += delta;
}

store::PoolCounters Pool::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

uint32_t Pool::active_dictionary_id() const {
  absl::MutexLock lock(&mu_);
  return record_.active_dictionary_id();
}

void Pool::SetActiveDictionary(
    std::shared_ptr<const codec::DecoderDictionary> dictionary) {
  absl::MutexLock lock(&mu_);
  active_ = std::move(dictionary);
  encoder_.reset();
}

bool Pool::has_active_dictionary() const {
  absl::MutexLock lock(&mu_);
  return active_ != nullptr;
}

void Pool::SetActiveUnreadable(absl::Status why) {
  absl::MutexLock lock(&mu_);
  active_unreadable_ = std::move(why);
}

absl::StatusOr<std::shared_ptr<const codec::EncoderDictionary>> Pool::Encoder() {
  absl::MutexLock lock(&mu_);
  if (active_ == nullptr) return nullptr;
  const int level =
      FrameCompressionLevel(store::FromCatalog(record_.options()), active_->compact());
  if (encoder_ == nullptr || encoder_->id() != active_->id() ||
      encoder_->compression_level() != level) {
    ASSIGN_OR_RETURN(encoder_, codec::EncoderDictionary::Create(active_->content(), level));
  }
  return encoder_;
}

v1::PoolInfo Pool::Info() const {
  absl::MutexLock lock(&mu_);
  v1::PoolInfo info;
  info.set_name(name_);
  *info.mutable_options() = store::FromCatalog(record_.options());
  info.mutable_options()->set_compact_compression_level(
      FrameCompressionLevel(info.options(), /*compact_dictionary=*/true));
  // Pools stored before retention have neither set: 0, no limit.
  info.mutable_options()->set_max_age_seconds(info.options().max_age_seconds());
  info.mutable_options()->set_max_bytes(info.options().max_bytes());
  info.set_active_dictionary_id(record_.active_dictionary_id());
  info.mutable_stats()->set_records(counters_.records);
  info.mutable_stats()->set_raw_bytes(counters_.raw_bytes);
  info.mutable_stats()->set_stored_bytes(counters_.stored_bytes);
  for (const std::string& category : categories_) info.add_categories(category);
  if (active_ != nullptr) {
    info.set_active_dictionary_mode(active_->compact() ? v1::DICTIONARY_MODE_COMPACT
                                                       : v1::DICTIONARY_MODE_FULL);
  }
  info.set_reads(reads());
  std::vector<std::string> damage;
  if (!newest_unreadable_.ok()) damage.push_back(newest_unreadable_.ToString());
  if (!active_unreadable_.ok()) damage.push_back(active_unreadable_.ToString());
  info.set_damaged_at_open(absl::StrJoin(damage, "; "));
  return info;
}

}  // namespace dictlog::pool
