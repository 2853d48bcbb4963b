#include "server/dictionary/recompressor.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "codec/block_format.h"
#include "codec/record_codec.h"
#include "common/status_macros.h"
#include "common/thread_name.h"
#include "server/store/catalog_convert.h"

namespace dictlog::dictionary {

absl::StatusOr<std::unique_ptr<Recompressor>> Recompressor::Load(
    store::Store* store, pool::PoolRegistry* pools, const codec::DictionaryLookup* dictionaries,
    DictionaryManager* manager, RecompressorOptions options) {
  std::unique_ptr<Recompressor> recompressor(
      new Recompressor(store, pools, dictionaries, manager, options));
  ASSIGN_OR_RETURN(std::vector<storage::RecompressState> states,
                   store->LoadRecompressStates());
  absl::MutexLock lock(&recompressor->mu_);
  for (storage::RecompressState& state : states) {
    const uint32_t pool_id = state.pool_id();
    const bool running = state.status().state() == storage::RecompressStatus::RUNNING;
    recompressor->jobs_[pool_id] = state;
    if (running) recompressor->Launch(std::move(state));  // Resume after a restart.
  }
  return recompressor;
}

Recompressor::~Recompressor() {
  std::map<uint32_t, std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    threads.swap(threads_);  // Their jobs stop at the next batch.
  }
  for (auto& [id, thread] : threads) thread.join();
  reaper_.join();
}

void Recompressor::FinishJobLocked(uint32_t pool_id) {
  auto it = threads_.find(pool_id);
  if (it == threads_.end()) return;  // The destructor joins it.
  ended_.push_back(std::move(it->second));
  threads_.erase(it);
}

void Recompressor::Reap() {
  NameThisThread("dl-reaper");
  while (true) {
    std::vector<std::thread> ended;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stop_ || !ended_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      ended.swap(ended_);
      if (ended.empty()) return;  // Stopping, nothing left to join.
    }
    // Each has handed itself over as its last step under mu_: the joins are short.
    for (std::thread& thread : ended) thread.join();
    absl::MutexLock lock(&mu_);
    unjoined_ -= ended.size();
  }
}

absl::StatusOr<v1::RecompressStatus> Recompressor::Start(absl::string_view pool_name,
                                                         DoneCallback on_done) {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return absl::NotFoundError(absl::StrCat("no pool '", pool_name, "'"));
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(pool->id());
  if (it != jobs_.end() && it->second.status().state() == storage::RecompressStatus::RUNNING) {
    // The caller's `on_done` joins the running job's (e.g. a Recompress request's
    // compaction after a job the server started itself).
    if (on_done) {
      DoneCallback first = std::move(on_done_[pool->id()]);
      on_done_[pool->id()] =
          first ? [first, then = std::move(on_done)](const std::string& name) {
            first(name);
            then(name);
          } : std::move(on_done);
    }
    return store::FromCatalog(it->second.status());
  }
  if (on_done) on_done_[pool->id()] = std::move(on_done);
  return StartLocked(*pool);
}

absl::StatusOr<v1::RecompressStatus> Recompressor::StartOrFollow(absl::string_view pool_name) {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return absl::NotFoundError(absl::StrCat("no pool '", pool_name, "'"));
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(pool->id());
  if (it != jobs_.end() && it->second.status().state() == storage::RecompressStatus::RUNNING) {
    follow_up_.insert(pool->id());
    return store::FromCatalog(it->second.status());
  }
  return StartLocked(*pool);
}

absl::StatusOr<v1::RecompressStatus> Recompressor::StartLocked(pool::Pool& pool) {
  storage::RecompressState state;
  state.set_pool_id(pool.id());
  state.set_next_seq(1);
  state.set_end_seq(pool.AllocateSeqs(0) - 1);  // The last seq handed out so far.
  storage::RecompressStatus* status = state.mutable_status();
  status->set_pool(pool.name());
  status->set_state(storage::RecompressStatus::RUNNING);
  status->set_target_dictionary_id(pool.active_dictionary_id());
  status->set_records_total(pool.counters().records);
  RETURN_IF_ERROR(store_->PutRecompressState(state));
  Launch(state);
  return store::FromCatalog(state.status());
}

void Recompressor::Launch(storage::RecompressState state) {
  const uint32_t pool_id = state.pool_id();
  jobs_[pool_id] = std::move(state);
  // A pool's previous job has handed its thread to the reaper before its state left
  // RUNNING, so threads_ has no entry for the pool.
  ++unjoined_;
  threads_.emplace(pool_id, std::thread([this, pool_id] { RunJob(pool_id); }));
}

absl::StatusOr<v1::RecompressStatus> Recompressor::Status(absl::string_view pool_name) const {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return absl::NotFoundError(absl::StrCat("no pool '", pool_name, "'"));
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(pool->id());
  if (it != jobs_.end()) return store::FromCatalog(it->second.status());
  v1::RecompressStatus none;
  none.set_pool(pool->name());
  none.set_state(v1::RecompressStatus::NONE);
  return none;
}

bool Recompressor::WaitForTest(absl::string_view pool_name, absl::Duration timeout) {
  std::shared_ptr<pool::Pool> pool = pools_->Find(pool_name);
  if (pool == nullptr) return false;
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    auto it = jobs_.find(pool->id());
    return it == jobs_.end() || it->second.status().state() != storage::RecompressStatus::RUNNING;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
}

bool Recompressor::WaitForThreadsJoinedForTest(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto joined = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return unjoined_ == 0; };
  return mu_.AwaitWithTimeout(absl::Condition(&joined), timeout);
}

void Recompressor::RunJob(uint32_t pool_id) {
  NameThisThread("dl-recompress");
  std::shared_ptr<pool::Pool> pool = pools_->FindById(pool_id);
  storage::RecompressState state;
  {
    absl::MutexLock lock(&mu_);
    state = jobs_[pool_id];
    if (pool == nullptr) {  // Deleted before the job started.
      FinishJobLocked(pool_id);
      return;
    }
  }
  const absl::Duration per_batch = absl::Seconds(
      static_cast<double>(options_.batch_records) / options_.max_records_per_second);
  KeepJudge judge;
  while (true) {
    const absl::Time start = absl::Now();
    absl::StatusOr<bool> more = Step(*pool, &state, &judge);
    if (!more.ok()) {
      state.mutable_status()->set_state(storage::RecompressStatus::FAILED);
      state.mutable_status()->set_error(std::string(more.status().message()));
      absl::ReaderMutexLock gate(&manager_->write_gate());
      if (!pool->deleted()) (void)store_->PutRecompressState(state);
      std::fprintf(stderr, "dictlogd: re-compression of pool '%s' failed: %s\n",
                   pool->name().c_str(), more.status().ToString().c_str());
    }
    if (more.ok() && !*more) {  // Completed: its callback, before the status shows it.
      if (state.status().records_kept() > 0) {
        std::fprintf(stderr,
                     "dictlogd: pool '%s': re-compression kept %llu records as stored "
                     "(an earlier dictionary stores them far smaller), re-encoded %llu\n",
                     pool->name().c_str(),
                     static_cast<unsigned long long>(state.status().records_kept()),
                     static_cast<unsigned long long>(state.status().records_rewritten()));
      }
      DoneCallback done;
      {
        absl::MutexLock lock(&mu_);
        if (auto it = on_done_.find(pool_id); it != on_done_.end()) {
          done = std::move(it->second);
          on_done_.erase(it);
        }
      }
      if (done) done(pool->name());
    }
    {
      absl::MutexLock lock(&mu_);
      jobs_[pool_id] = state;
      if (stop_ || !more.ok() || !*more) {
        on_done_.erase(pool_id);
        FinishJobLocked(pool_id);
        const bool follow = follow_up_.erase(pool_id) > 0;
        if (follow && !stop_ && more.ok() && !pool->deleted()) {
          absl::Status started = StartLocked(*pool).status();
          if (!started.ok()) {
            std::fprintf(stderr, "dictlogd: pool '%s': the re-compression to follow could "
                         "not start: %s\n", pool->name().c_str(), started.ToString().c_str());
          }
        }
        return;
      }
    }
    absl::SleepFor(per_batch - (absl::Now() - start));
  }
}

absl::StatusOr<std::optional<store::RecordRewrite>> Recompressor::Reencode(
    uint32_t pool_id, const store::ScannedRecord& record, const Target& to) const {
  ASSIGN_OR_RETURN(codec::RecordView view, codec::ParseRecord(record.value));
  store::RecordRewrite rewrite;
  rewrite.pool_id = pool_id;
  rewrite.seq = record.seq;
  absl::string_view old_value = record.value;
  std::string block_value;
  if (view.encoding == codec::Encoding::kBlockEntry) {
    // A block is re-encoded once, when the scan passes its first entry; its entry
    // values stay as they are.
    if (view.block_back != 0) return std::nullopt;
    std::vector<absl::StatusOr<std::string>> blocks =
        store_->MultiGetBlocks({store::RecordRef{pool_id, record.seq}});
    if (!blocks[0].ok()) return blocks[0].status();
    block_value = *std::move(blocks[0]);
    old_value = block_value;
    ASSIGN_OR_RETURN(view, codec::ParseRecord(old_value));
    rewrite.block = true;
  }
  if (view.dictionary_id == to.dictionary_id() && to.dictionary_id() != 0) {
    if (rewrite.block || view.encoding != codec::Encoding::kZstdFrame) return std::nullopt;
    return Reframe(view, old_value, std::move(rewrite));
  }
  ASSIGN_OR_RETURN(codec::DecodedRecord decoded,
                   codec::DecodeRecord(old_value, *dictionaries_));
  if (rewrite.block) {
    ASSIGN_OR_RETURN(std::vector<absl::string_view> payloads,
                     codec::ParseBlockContent(decoded.payload));
    rewrite.records = payloads.size();
    for (absl::string_view payload : payloads) rewrite.raw_bytes += payload.size();
  } else {
    rewrite.raw_bytes = decoded.payload.size();
  }
  codec::EncodeOptions encode;
  encode.dictionary = to.encoder;
  encode.compression_level = to.level;
  encode.category_index = decoded.category_index;
  encode.checksum = rewrite.block;  // As the block sealer writes blocks.
  RETURN_IF_ERROR(codec::EncodeRecord(decoded.payload, encode, &rewrite.value));
  if (rewrite.value == old_value) return std::nullopt;
  ASSIGN_OR_RETURN(codec::RecordView new_view, codec::ParseRecord(rewrite.value));
  rewrite.old_stored_bytes = old_value.size();
  rewrite.old_dictionary_id = view.dictionary_id;
  rewrite.dictionary_id = new_view.dictionary_id;
  return rewrite;
}

bool Recompressor::KeepsItsValue(const store::RecordRewrite& rewrite, const Target& to,
                                 KeepJudge* judge) const {
  if (rewrite.old_dictionary_id == 0 || to.encoder == nullptr ||
      rewrite.old_dictionary_id == to.dictionary_id()) {
    return false;  // Off raw storage, onto no dictionary, or reframed: as asked.
  }
  // A switch of form (full to compact or back) is what the job is for: its frames are
  // larger on purpose (compact keeps literals raw). Looked up once per dictionary.
  return judge->Keep(rewrite.old_dictionary_id, rewrite.old_stored_bytes,
                     rewrite.value.size(), [&] {
                       const std::shared_ptr<const codec::DecoderDictionary> old =
                           dictionaries_->Find(rewrite.old_dictionary_id);
                       return old != nullptr && old->compact() == to.encoder->compact();
                     });
}

absl::StatusOr<std::optional<store::RecordRewrite>> Recompressor::Reframe(
    const codec::RecordView& view, absl::string_view old_value,
    store::RecordRewrite rewrite) const {
  RETURN_IF_ERROR(codec::AppendFrameValue(view.body, view.category_index, &rewrite.value));
  if (rewrite.value.size() >= old_value.size()) return std::nullopt;  // Stays whole.
  rewrite.raw_bytes = view.content_size;
  rewrite.old_stored_bytes = old_value.size();
  rewrite.old_dictionary_id = view.dictionary_id;
  rewrite.dictionary_id = view.dictionary_id;
  return rewrite;
}

absl::StatusOr<std::optional<store::RecordRewrite>> Recompressor::ReencodeIndexed(
    uint32_t pool_id, const store::IndexedBlock& block, const Target& to,
    uint64_t* records) const {
  ASSIGN_OR_RETURN(const codec::RecordView view, codec::ParseRecord(block.value));
  ASSIGN_OR_RETURN(const codec::DecodedRecord decoded,
                   codec::DecodeRecord(block.value, *dictionaries_));
  ASSIGN_OR_RETURN(const std::vector<codec::IndexedEntry> entries,
                   codec::ParseIndexedBlockContent(decoded.payload, block.first_seq));
  *records = entries.size();
  if (view.dictionary_id == to.dictionary_id() && to.dictionary_id() != 0) {
    return std::nullopt;
  }
  store::RecordRewrite rewrite;
  rewrite.pool_id = pool_id;
  rewrite.seq = block.first_seq;
  rewrite.last_seq = block.last_seq;
  rewrite.block = true;
  rewrite.records = entries.size();
  for (const codec::IndexedEntry& entry : entries) rewrite.raw_bytes += entry.payload.size();
  codec::EncodeOptions encode;
  encode.dictionary = to.encoder;
  encode.compression_level = to.level;
  encode.checksum = true;  // As the block sealer writes blocks.
  RETURN_IF_ERROR(codec::EncodeRecord(decoded.payload, encode, &rewrite.value));
  if (rewrite.value == block.value) return std::nullopt;
  ASSIGN_OR_RETURN(const codec::RecordView new_view, codec::ParseRecord(rewrite.value));
  rewrite.old_stored_bytes = block.value.size();
  rewrite.old_dictionary_id = view.dictionary_id;
  rewrite.dictionary_id = new_view.dictionary_id;
  return rewrite;
}

absl::StatusOr<std::vector<std::optional<store::RecordRewrite>>> Recompressor::ReencodeAll(
    size_t count,
    absl::FunctionRef<absl::StatusOr<std::optional<store::RecordRewrite>>(size_t)> one,
    absl::FunctionRef<uint64_t(size_t)> seq_of, const std::string& pool_name,
    storage::RecompressStatus* status) const {
  std::vector<absl::StatusOr<std::optional<store::RecordRewrite>>> results(count);
  auto task = [&](size_t i) { results[i] = one(i); };
  if (options_.parallel_for && count > 1) {
    options_.parallel_for(count, task);
  } else {
    for (size_t i = 0; i < count; ++i) task(i);
  }
  std::vector<std::optional<store::RecordRewrite>> rewrites;
  rewrites.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (results[i].ok()) {
      rewrites.push_back(*std::move(results[i]));
    } else if (absl::IsDataLoss(results[i].status())) {
      NoteUnreadable(pool_name, seq_of(i), results[i].status(), status);
      rewrites.push_back(std::nullopt);
    } else {
      return results[i].status();
    }
  }
  return rewrites;
}

void Recompressor::NoteUnreadable(const std::string& pool_name, uint64_t seq,
                                  const absl::Status& error,
                                  storage::RecompressStatus* status) {
  status->set_unreadable(status->unreadable() + 1);
  if (status->unreadable_seqs_size() < kUnreadableSeqsKept) {
    status->add_unreadable_seqs(seq);
    std::fprintf(stderr,
                 "dictlogd: re-compression of pool '%s' leaves %s/%llu as it is stored: %s\n",
                 pool_name.c_str(), pool_name.c_str(), static_cast<unsigned long long>(seq),
                 error.ToString().c_str());
  } else if (status->unreadable() == kUnreadableSeqsKept + 1) {
    std::fprintf(stderr,
                 "dictlogd: re-compression of pool '%s' found more unreadable records: "
                 "counted in its status, not logged\n",
                 pool_name.c_str());
  }
}

absl::StatusOr<std::vector<store::IndexedBlock>> Recompressor::NextIndexedBlocks(
    const pool::Pool& pool, const storage::RecompressState& state, uint64_t* limit) const {
  std::vector<store::IndexedBlock> blocks;
  if (pool.indexed_from_seq() == 0) return blocks;
  // About a batch of records: blocks hold tens of records each.
  const size_t max_blocks = std::max<size_t>(1, options_.batch_records / 16);
  ASSIGN_OR_RETURN(blocks, store_->ScanIndexedBlocks(pool.id(), pool.indexed_from_seq(),
                                                     state.next_seq(), max_blocks));
  if (blocks.size() == max_blocks) *limit = std::min(*limit, blocks.back().last_seq);
  // A block is rewritten once, by the step whose range holds its first seq.
  blocks.erase(std::remove_if(blocks.begin(), blocks.end(),
                              [&](const store::IndexedBlock& b) {
                                return b.first_seq < state.next_seq() ||
                                       b.first_seq > state.end_seq();
                              }),
               blocks.end());
  return blocks;
}

absl::StatusOr<bool> Recompressor::Step(pool::Pool& pool, storage::RecompressState* state,
                                        KeepJudge* judge) {
  storage::RecompressStatus* status = state->mutable_status();
  absl::ReaderMutexLock gate(&manager_->write_gate());
  if (pool.deleted()) {  // Nothing of a deleted pool may be written again.
    return absl::FailedPreconditionError(absl::StrCat("pool '", pool.name(), "' was deleted"));
  }
  if (state->next_seq() > state->end_seq()) {
    status->set_state(storage::RecompressStatus::DONE);
    RETURN_IF_ERROR(store_->PutRecompressState(*state));
    return false;
  }
  absl::MutexLock seal(&pool.tail().seal_mutex());  // No block seal under our feet.
  ASSIGN_OR_RETURN(std::shared_ptr<const codec::EncoderDictionary> encoder, pool.Encoder());
  const uint32_t target = encoder ? encoder->id() : 0;
  status->set_target_dictionary_id(target);
  // A job's first step: if every record already names the target, no scan can find
  // one to re-encode (the counters say what a scan would; gc trusts them the same way).
  if (status->records_done() == 0 && status->records_rewritten() == 0) {
    ASSIGN_OR_RETURN(const bool all_use_target, store_->AllRecordsUse(pool.id(), target));
    if (all_use_target) {
      status->set_records_done(status->records_total());
      state->set_next_seq(state->end_seq() + 1);
      RETURN_IF_ERROR(store_->PutRecompressState(*state));
      return true;  // The next step ends the job.
    }
  }
  uint64_t limit = state->end_seq();  // The last seq this step covers.
  ASSIGN_OR_RETURN(std::vector<store::IndexedBlock> blocks,
                   NextIndexedBlocks(pool, *state, &limit));
  // Bounded: past `limit` the records family may hold many deletions of sealed records.
  ASSIGN_OR_RETURN(std::vector<store::ScannedRecord> batch,
                   store_->ScanRecords(pool.id(), state->next_seq(), options_.batch_records,
                                       SIZE_MAX, limit == UINT64_MAX ? limit : limit + 1));
  std::vector<store::RecordRewrite> rewrites;
  store::PoolCounters delta;
  const bool records_left = batch.size() == options_.batch_records &&
                            batch.back().seq < limit;
  if (records_left) limit = batch.back().seq;
  uint64_t next = limit + 1;
  const Target to{encoder.get(), pool.options().compression_level()};
  auto count = [&](std::optional<store::RecordRewrite>& rewrite) {
    if (!rewrite.has_value()) return;
    if (KeepsItsValue(*rewrite, to, judge)) {
      status->set_records_kept(status->records_kept() + rewrite->records);
      return;
    }
    status->set_records_rewritten(status->records_rewritten() + rewrite->records);
    status->set_bytes_before(status->bytes_before() + rewrite->old_stored_bytes);
    status->set_bytes_after(status->bytes_after() + rewrite->value.size());
    delta.stored_bytes += rewrite->value.size() - rewrite->old_stored_bytes;
    rewrites.push_back(*std::move(rewrite));
  };
  size_t block_count = 0;  // Blocks and records this step covers: up to `limit`.
  while (block_count < blocks.size() && blocks[block_count].first_seq <= limit) ++block_count;
  size_t record_count = 0;
  while (record_count < batch.size() && batch[record_count].seq <= limit) ++record_count;
  std::vector<uint64_t> block_records(block_count);
  ASSIGN_OR_RETURN(std::vector<std::optional<store::RecordRewrite>> block_rewrites,
                   ReencodeAll(
                       block_count,
                       [&](size_t i) {
                         return ReencodeIndexed(pool.id(), blocks[i], to, &block_records[i]);
                       },
                       [&](size_t i) { return blocks[i].first_seq; }, pool.name(), status));
  for (size_t i = 0; i < block_count; ++i) {
    status->set_records_done(status->records_done() + block_records[i]);
    count(block_rewrites[i]);
  }
  ASSIGN_OR_RETURN(std::vector<std::optional<store::RecordRewrite>> record_rewrites,
                   ReencodeAll(
                       record_count, [&](size_t i) { return Reencode(pool.id(), batch[i], to); },
                       [&](size_t i) { return batch[i].seq; }, pool.name(), status));
  status->set_records_done(status->records_done() + record_count);
  for (std::optional<store::RecordRewrite>& rewrite : record_rewrites) count(rewrite);
  state->set_next_seq(next);
  RETURN_IF_ERROR(store_->RewriteRecords(rewrites, *state));
  pool.AddCounters(delta);
  return true;
}

}  // namespace dictlog::dictionary
