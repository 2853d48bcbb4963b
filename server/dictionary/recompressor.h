// Recompressor: background jobs that re-encode a pool's records with its active
// dictionary and level, so old dictionaries lose their references and `dict gc` can
// retire them. A record the active dictionary would store far larger than the earlier
// dictionary (of the same form) it names keeps its frame (ADR 0051). Record ids never
// change. In block mode, blocks are re-encoded whole (their entry values stay) and the
// open tail's single records one by one. Each batch of rewrites, their counter deltas
// and the job's progress are one atomic write: a crash loses nothing and the job
// resumes where it stopped when the server restarts. Readers see either the old or the
// new frame of a record, and both decode to the same payload. Jobs are throttled to
// max_records_per_second. A record or block that cannot be read (DATA_LOSS) is left as
// it is stored and counted in the job's status (`unreadable`, the first seqs in
// `unreadable_seqs`); the job goes on past it.
//
// Thread safety: all methods may be called concurrently; one thread runs each job, and
// one more joins each job's thread as soon as it ends. The destructor stops jobs
// between batches (their progress is already stored).
#ifndef DICTLOG_SERVER_DICTIONARY_RECOMPRESSOR_H_
#define DICTLOG_SERVER_DICTIONARY_RECOMPRESSOR_H_

#include <functional>
#include <map>
#include <string>
#include <optional>
#include <set>
#include <memory>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/dictlog.pb.h"
#include "server/dictionary/dictionary_manager.h"
#include "server/dictionary/keep_judge.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"
#include "server/pool/pool_registry.h"
#include "server/store/store.h"

namespace dictlog::dictionary {

struct RecompressorOptions {
  // Records read and re-encoded per atomic batch. Default 256.
  size_t batch_records = 256;
  // Throttle. Default 50,000 records/s.
  double max_records_per_second = 50000;
  // Runs task(0..n-1), each index once, on the calling thread and possibly others,
  // and returns when all have run: a batch's records are re-encoded with it (the
  // engine passes its EncodeWorkers, whose idle helpers join: both cores when the
  // appends leave them idle, the job's thread alone when they do not). Empty: the
  // job's thread alone.
  std::function<void(size_t n, absl::FunctionRef<void(size_t)> task)> parallel_for;
};

class Recompressor {
 public:
  // Resumes the jobs a previous run left RUNNING. Pointers are borrowed and must
  // outlive the recompressor.
  static absl::StatusOr<std::unique_ptr<Recompressor>> Load(
      store::Store* store, pool::PoolRegistry* pools, const codec::DictionaryLookup* dictionaries,
      DictionaryManager* manager, RecompressorOptions options);

  Recompressor(const Recompressor&) = delete;
  Recompressor& operator=(const Recompressor&) = delete;
  ~Recompressor();

  // Called on a job's thread when it has re-encoded everything it covers, before its
  // status shows it ended (so a caller waiting for the job also waits for this).
  using DoneCallback = std::function<void(const std::string& pool)>;

  // Starts a job for the pool (or returns the running one's status). NOT_FOUND for an
  // unknown pool. `on_done` (may be empty) runs when the job started here, or the
  // running one it joins (after that job's own), completes (not if it fails or the
  // server stops first); what it uses must outlive the recompressor.
  absl::StatusOr<v1::RecompressStatus> Start(absl::string_view pool,
                                             DoneCallback on_done = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  // As Start, but when a job is running already, another one follows it once it ends,
  // over every record up to then (not persisted: a restart in between forgets it).
  // For a new dictionary activated while a job runs: the running job covers the records
  // up to its own start only, and those of its batches before the activation were
  // re-encoded with the older dictionary.
  absl::StatusOr<v1::RecompressStatus> StartOrFollow(absl::string_view pool)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The pool's current or last job; state NONE if it never had one.
  absl::StatusOr<v1::RecompressStatus> Status(absl::string_view pool) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until the pool's job is not RUNNING or `timeout` passes; true if finished.
  bool WaitForTest(absl::string_view pool, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until every job's thread has been joined or `timeout` passes; true if so.
  bool WaitForThreadsJoinedForTest(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Recompressor(store::Store* store, pool::PoolRegistry* pools, const codec::DictionaryLookup* dictionaries,
               DictionaryManager* manager, RecompressorOptions options)
      : store_(store), pools_(pools), dictionaries_(dictionaries), manager_(manager),
        options_(options), reaper_([this] { Reap(); }) {}

  void Launch(storage::RecompressState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A new job over every record of `pool` handed out so far, stored and launched.
  absl::StatusOr<v1::RecompressStatus> StartLocked(pool::Pool& pool)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunJob(uint32_t pool_id);
  // Hands the ending job's own thread to the reaper.
  void FinishJobLocked(uint32_t pool_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The reaper: joins the threads of ended jobs until the destructor stops it.
  void Reap() ABSL_LOCKS_EXCLUDED(mu_);
  // What records are re-encoded to.
  struct Target {
    const codec::EncoderDictionary* encoder;  // nullptr: no dictionary.
    int level;
    uint32_t dictionary_id() const { return encoder ? encoder->id() : 0; }
  };
  // The rewrite of one scanned record (for the first entry of a block: of its block),
  // or nothing if it is encoded as `to` would already.
  absl::StatusOr<std::optional<store::RecordRewrite>> Reencode(
      uint32_t pool_id, const store::ScannedRecord& record, const Target& to) const;
  // Whether `rewrite` is dropped and its record (or block) kept as stored: `judge`
  // keeps the values of the earlier dictionary it names (ADR 0051, keep_judge.h), both
  // dictionaries of the same form. Records stored raw, a switch between full and
  // compact, and a target of no dictionary are re-encoded.
  bool KeepsItsValue(const store::RecordRewrite& rewrite, const Target& to,
                     KeepJudge* judge) const;
  // A whole frame (encoding 1) already of the target dictionary stored again as a
  // short frame (ADR 0049), its bytes not decoded; nothing if it stays whole.
  absl::StatusOr<std::optional<store::RecordRewrite>> Reframe(
      const codec::RecordView& view, absl::string_view old_value,
      store::RecordRewrite rewrite) const;
  // The rewrite of an indexed block (block mode, ADR 0016), or nothing; sets
  // `*records` to the number of records it holds.
  absl::StatusOr<std::optional<store::RecordRewrite>> ReencodeIndexed(
      uint32_t pool_id, const store::IndexedBlock& block, const Target& to,
      uint64_t* records) const;
  // Re-encodes the next batch (`judge`: the job run's, KeepsItsValue); false when the
  // job has nothing left or must stop.
  absl::StatusOr<bool> Step(pool::Pool& pool, storage::RecompressState* state,
                            KeepJudge* judge);
  // The rewrites of `count` items (item i by `one(i)`, its first seq `seq_of(i)`), on
  // options_.parallel_for. An item that cannot be read (DATA_LOSS) gets nothing: it is
  // left as stored and noted in `status` (NoteUnreadable). Any other error fails.
  absl::StatusOr<std::vector<std::optional<store::RecordRewrite>>> ReencodeAll(
      size_t count,
      absl::FunctionRef<absl::StatusOr<std::optional<store::RecordRewrite>>(size_t)> one,
      absl::FunctionRef<uint64_t(size_t)> seq_of, const std::string& pool_name,
      storage::RecompressStatus* status) const;
  // Counts a stored value the job leaves unreadable in `status`, keeps its seq among the
  // first kUnreadableSeqsKept and logs the first of them.
  static void NoteUnreadable(const std::string& pool_name, uint64_t seq,
                             const absl::Status& error, storage::RecompressStatus* status);
  static constexpr int kUnreadableSeqsKept = 16;
  // Step's indexed blocks: those keyed in [state->next_seq(), state->end_seq()], at
  // most a batch's worth; `*limit` becomes the last seq they cover if there may be
  // more. Sets nothing for a pool without indexed blocks.
  absl::StatusOr<std::vector<store::IndexedBlock>> NextIndexedBlocks(
      const pool::Pool& pool, const storage::RecompressState& state, uint64_t* limit) const;

  store::Store* const store_;
  pool::PoolRegistry* const pools_;
  const codec::DictionaryLookup* const dictionaries_;
  DictionaryManager* const manager_;
  const RecompressorOptions options_;

  mutable absl::Mutex mu_;
  std::map<uint32_t, storage::RecompressState> jobs_ ABSL_GUARDED_BY(mu_);
  std::map<uint32_t, DoneCallback> on_done_ ABSL_GUARDED_BY(mu_);  // Of running jobs.
  std::map<uint32_t, std::thread> threads_ ABSL_GUARDED_BY(mu_);  // Of running jobs.
  std::set<uint32_t> follow_up_ ABSL_GUARDED_BY(mu_);  // Pools of StartOrFollow.
  std::vector<std::thread> ended_ ABSL_GUARDED_BY(mu_);  // For the reaper to join.
  size_t unjoined_ ABSL_GUARDED_BY(mu_) = 0;  // Job threads started, not yet joined.
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reaper_;  // Declared last: starts when the rest is ready.
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_RECOMPRESSOR_H_
