#include "server/cluster/materializer.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/cluster/cluster.pb.h"
#include "server/cluster/dictionary_ids.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/topics.h"

namespace dictlog::cluster {
namespace {

constexpr size_t kMaxMessagesPerPoll = 256;
constexpr absl::Duration kPollWait = absl::Milliseconds(100);
constexpr absl::Duration kRetryWait = absl::Milliseconds(200);

// The batch a parsed message carries, as ApplyLogged takes it (views into `parsed`).
absl::StatusOr<engine::LoggedBatch> ToLogged(const LogMessage& message,
                                             const ClusterBatch* parsed) {
  if (static_cast<uint64_t>(parsed->records_size()) > kMaxBatchRecords ||
      message.offset > kMaxOffset) {
    return absl::InvalidArgumentError("the message holds too many records");
  }
  engine::LoggedBatch batch;
  for (int i = 0; i < parsed->records_size(); ++i) {
    const ClusterRecord& record = parsed->records(i);
    batch.records.push_back({record.category(), record.payload()});
    batch.pools.push_back(record.pool());
    batch.seqs.push_back(SeqOf(message.offset, static_cast<uint64_t>(i)));
    if (!parsed->writer_encoded()) continue;  // ADR 0017's payloads: encoded here.
    engine::EncodedRecord& encoded = batch.encoded.emplace_back();
    encoded.framed = !record.frame().empty();
    encoded.frame = record.frame();
    encoded.dictionary_id = record.dictionary_id();
    encoded.raw_size = encoded.framed ? record.raw_size() : record.payload().size();
  }
  batch.request_id = parsed->request_id();
  batch.principal = parsed->principal();
  batch.request_fingerprint = parsed->request_fingerprint();
  batch.append_unix_ms = parsed->append_unix_ms();
  batch.position = {static_cast<uint32_t>(message.partition), message.offset};
  return batch;
}

// What this node holds under `id`, for a logged dictionary `message` (dictionary_ids.h).
absl::StatusOr<IdHolder> HolderOf(const engine::LogEngine& engine, uint32_t id,
                                  const ClusterDictionary& message) {
  ASSIGN_OR_RETURN(const engine::LogEngine::HeldDictionary held, engine.DictionaryHeld(id));
  if (!held.used) return IdHolder::kFree;
  if (held.pool != message.pool() || held.content.empty()) return IdHolder::kDifferent;
  ASSIGN_OR_RETURN(const std::string ours, StampDictionaryId(held.content, 0));
  ASSIGN_OR_RETURN(const std::string theirs, StampDictionaryId(message.content(), 0));
  return ours == theirs ? IdHolder::kSame : IdHolder::kDifferent;
}

// The next offset of each of `held` to apply, now.
std::vector<int64_t> FirstNext(const ClusterLog& log, const std::vector<int32_t>& held) {
  std::vector<int64_t> next;
  for (int32_t p : held) next.push_back(log.Applied(p) + 1);
  return next;
}

// Errors after which the same message would fail again on this node.
bool Permanent(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status) ||
         absl::IsResourceExhausted(status) || absl::IsAlreadyExists(status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Materializer>> Materializer::Start(
    const std::string& bootstrap, engine::LogEngine* engine, ClusterLog* log,
    std::vector<int32_t> held, ShardDirectory* directory, MaterializerOptions options) {
  ASSIGN_OR_RETURN(const std::vector<store::LogPosition> stored, engine->LogPositions());
  std::vector<PartitionStart> all(log->partitions());
  for (int32_t p = 0; p < log->partitions(); ++p) all[p] = {p, kFromBeginning};
  for (const store::LogPosition& position : stored) {
    if (position.partition >= all.size()) continue;  // the topic shrank: not read
    all[position.partition].offset = position.offset + 1;
    log->MarkApplied(static_cast<int32_t>(position.partition), position.offset);
  }
  std::vector<PartitionStart> starts;
  for (int32_t p : held) {
    if (p >= 0 && p < log->partitions()) starts.push_back(all[p]);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Consumer> consumer,
                   Consumer::Open(bootstrap, kRecordsTopic, starts));
  return std::unique_ptr<Materializer>(
      new Materializer(std::move(consumer), engine, log, std::move(held), directory, options));
}

Materializer::Materializer(std::unique_ptr<Consumer> consumer, engine::LogEngine* engine,
                           ClusterLog* log, std::vector<int32_t> held,
                           ShardDirectory* directory, const MaterializerOptions& options)
    : consumer_(std::move(consumer)),
      engine_(engine),
      log_(log),
      held_(std::move(held)),
      directory_(directory),
      targets_(held_.size(), -1),
      serving_(held_.size(), false),
      gates_(held_.size(), ServingGate(options.serving)),
      apply_delay_(options.apply_delay_for_test),
      first_next_(FirstNext(*log, held_)),
      logged_(held_.size(), absl::Now()),
      throttle_(options.rebuild_bytes_per_second),
      thread_([this] { Run(); }) {}

void Materializer::Report() {
  const absl::Time now = absl::Now();
  reported_ = now;
  Resume(now);
  std::vector<NodePartition> progress;
  for (size_t i = 0; i < held_.size(); ++i) {
    const int32_t p = held_[i];
    if (targets_[i] < 0) {  // The end when this materializer started: catch up to it.
      absl::StatusOr<int64_t> end = consumer_->QueryEnd(p, kPollWait);
      if (end.ok()) targets_[i] = *end;
    }
    const int64_t next = log_->Applied(p) + 1;
    const int64_t watermark = consumer_->HighWatermark(p);
    const int64_t end = watermark >= 0 ? watermark : targets_[i];
    if (!serving_[i]) CheckBuilt(i, next, end, now);
    if (serving_[i]) UpdateGate(i, end >= 0 ? std::max<int64_t>(end - next, 0) : -1);
    NodePartition& out = progress.emplace_back();
    out.set_partition(p);
    out.set_applied_offset(next);
    out.set_end_offset(end);
    out.set_serving(serving_[i] && gates_[i].serving());
  }
  if (directory_ != nullptr) directory_->SetLocal(std::move(progress));
}

size_t Materializer::IndexOf(int32_t partition) const {
  return static_cast<size_t>(std::find(held_.begin(), held_.end(), partition) - held_.begin());
}

void Materializer::CheckBuilt(size_t index, int64_t next, int64_t end, absl::Time now) {
  const int32_t p = held_[index];
  if (targets_[index] >= 0 && next >= targets_[index]) {
    serving_[index] = true;
    std::printf("dictlogd: partition %d built (%lld messages in %.1f s), serving it\n", p,
                static_cast<long long>(next - first_next_[index]),
                absl::ToDoubleSeconds(now - started_));
  } else if (now - logged_[index] >= absl::Seconds(10)) {
    logged_[index] = now;
    std::printf("dictlogd: building partition %d: offset %lld of %lld\n", p,
                static_cast<long long>(next), static_cast<long long>(end));
  } else {
    return;
  }
  std::fflush(stdout);
}

void Materializer::Throttle(size_t bytes) {
  rebuild_bytes_.fetch_add(bytes);
  const absl::Time now = absl::Now();
  const absl::Time until = throttle_.Spend(static_cast<int64_t>(bytes), now);
  if (until <= now) return;
  paused_until_ = std::max(paused_until_, until);
  if (!paused_.empty()) return;
  for (size_t i = 0; i < held_.size(); ++i) {
    if (!serving_[i]) paused_.push_back(held_[i]);
  }
  const absl::Status status = consumer_->Pause(paused_, true);
  if (!status.ok()) {  // Then building goes on unthrottled: say so.
    std::fprintf(stderr, "dictlogd: materializer: %s\n", status.ToString().c_str());
    paused_.clear();
    return;
  }
  paused_since_ = now;
}

void Materializer::Resume(absl::Time now) {
  if (paused_.empty() || now < paused_until_) return;
  const absl::Status status = consumer_->Pause(paused_, false);
  if (!status.ok()) {
    std::fprintf(stderr, "dictlogd: materializer: %s\n", status.ToString().c_str());
    return;  // Tried again at the next report.
  }
  paused_ms_.fetch_add(absl::ToInt64Milliseconds(now - paused_since_));
  paused_.clear();
}

void Materializer::UpdateGate(size_t index, int64_t lag) {
  const GateChange change = gates_[index].Update(lag, absl::Now());
  if (change == GateChange::kNone) return;
  std::printf("dictlogd: partition %d is %lld messages behind its end: %s\n", held_[index],
              static_cast<long long>(lag),
              change == GateChange::kStopped ? "not serving it until it catches up"
                                             : "serving it again");
  std::fflush(stdout);
}

MaterializerStats Materializer::Stats() const {
  MaterializerStats stats{applied_.load(),
                          skipped_.load(),
                          dictionaries_.load(),
                          rebuild_bytes_.load(),
                          static_cast<double>(paused_ms_.load()) / 1000,
                          {}};
  for (int32_t p = 0; p < log_->partitions(); ++p) {
    stats.partitions.push_back({p, log_->Applied(p), consumer_->HighWatermark(p)});
  }
  return stats;
}

Materializer::~Materializer() {
  stop_.Notify();
  thread_.join();
}

void Materializer::Run() {
  while (!stop_.HasBeenNotified()) {
    Report();
    absl::StatusOr<std::vector<LogMessage>> messages =
        consumer_->Poll(kPollWait, kMaxMessagesPerPoll);
    if (!messages.ok()) {
      std::fprintf(stderr, "dictlogd: materializer: %s\n", messages.status().ToString().c_str());
      stop_.WaitForNotificationWithTimeout(kRetryWait);
      continue;
    }
    for (const LogMessage& message : *messages) {
      // Fetched again after a resume: already applied.
      if (message.offset <= log_->Applied(message.partition)) continue;
      if (!Apply(message)) return;
      const size_t index = IndexOf(message.partition);
      if (index < held_.size() && !serving_[index]) Throttle(message.value.size());
      if (apply_delay_ > absl::ZeroDuration() && stop_.WaitForNotificationWithTimeout(apply_delay_)) {
        return;
      }
      if (absl::Now() - reported_ >= kPollWait) Report();  // A long batch: keep announcing.
    }
  }
}

absl::Status Materializer::ApplyDictionary(const LogMessage& message,
                                           const ClusterDictionary& logged) {
  engine::LogDictionary dictionary;
  dictionary.pool = logged.pool();
  dictionary.id = logged.id();
  dictionary.activate = logged.activate();
  dictionary.base_id = logged.base_id();
  dictionary.source = logged.source();
  dictionary.created_unix_ms = logged.created_unix_ms();
  dictionary.evaluation = logged.evaluation();
  bool stored = false;
  if (!logged.content().empty()) {  // The id: log order decides a collision.
    ASSIGN_OR_RETURN(dictionary.id,
                     ResolveDictionaryId(
                         logged.id(), message.partition, log_->partitions(),
                         [&](uint32_t id) { return HolderOf(*engine_, id, logged); }, &stored));
    ASSIGN_OR_RETURN(dictionary.content, StampDictionaryId(logged.content(), dictionary.id));
  }
  const store::LogPosition position{static_cast<uint32_t>(message.partition), message.offset};
  ASSIGN_OR_RETURN(const engine::AppliedDictionary applied,
                   engine_->ApplyLoggedDictionary(dictionary, stored, position));
  log_->NoteDictionary(message.partition, message.offset, applied);
  dictionaries_.fetch_add(1);
  return absl::OkStatus();
}

absl::Status Materializer::ApplyOne(const LogMessage& message) {
  ClusterBatch parsed;
  if (!parsed.ParseFromString(message.value)) {
    return absl::InvalidArgumentError("the message does not parse as a ClusterBatch");
  }
  if (parsed.has_dictionary()) {
    if (parsed.records_size() != 0) {
      return absl::InvalidArgumentError("a dictionary message holds records");
    }
    return ApplyDictionary(message, parsed.dictionary());
  }
  ASSIGN_OR_RETURN(const engine::LoggedBatch batch, ToLogged(message, &parsed));
  return engine_->ApplyLogged(batch);
}

bool Materializer::Apply(const LogMessage& message) {
  const store::LogPosition position{static_cast<uint32_t>(message.partition), message.offset};
  while (true) {
    absl::Status status = ApplyOne(message);
    if (status.ok()) {
      applied_.fetch_add(1);
    } else if (Permanent(status)) {
      std::fprintf(stderr, "dictlogd: materializer: skipping %s/%d@%lld: %s\n", kRecordsTopic,
                   message.partition, static_cast<long long>(message.offset),
                   status.ToString().c_str());
      status = engine_->SkipLogged(position);
      if (status.ok()) skipped_.fetch_add(1);
    }
    if (status.ok()) {
      log_->MarkApplied(message.partition, message.offset);
      return true;
    }
    std::fprintf(stderr, "dictlogd: materializer: %s/%d@%lld: %s (retrying)\n", kRecordsTopic,
                 message.partition, static_cast<long long>(message.offset),
                 status.ToString().c_str());
    Report();  // Stuck here: the lag grows, and the gate may stop serving.
    if (stop_.WaitForNotificationWithTimeout(kRetryWait)) return false;
  }
}

}  // namespace dictlog::cluster
