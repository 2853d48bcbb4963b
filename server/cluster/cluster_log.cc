#include "server/cluster/cluster_log.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/cluster/cluster.pb.h"
#include "server/cluster/dictionary_ids.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/topics.h"

namespace dictlog::cluster {

ClusterLog::ClusterLog(ClusterLogOptions options, ProduceFn produce)
    : options_(std::move(options)), produce_(std::move(produce)) {}

absl::StatusOr<std::vector<uint64_t>> ClusterLog::Append(const engine::LogAppend& append) {
  const size_t n = append.records.size();
  if (n == 0 || n > kMaxBatchRecords || append.pools.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster mode takes 1..", kMaxBatchRecords, " records per call, not ", n));
  }
  const int32_t partition = PartitionOf(append.pools[0], options_.partitions);
  ClusterBatch batch;
  for (size_t i = 0; i < n; ++i) {
    if (PartitionOf(append.pools[i], options_.partitions) != partition) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pools '", append.pools[0], "' and '", append.pools[i],
          "' lie on different partitions: in cluster mode one AppendBatch goes to one "
          "partition; send their records in separate calls"));
    }
    ClusterRecord* record = batch.add_records();
    record->set_pool(append.pools[i]);
    record->set_category(std::string(append.records[i].category));
    if (i < append.encoded.size() && append.encoded[i].framed) {
      const engine::EncodedRecord& encoded = append.encoded[i];
      record->set_frame(encoded.frame);
      record->set_dictionary_id(encoded.dictionary_id);
      record->set_raw_size(encoded.raw_size);
    } else {
      record->set_payload(std::string(append.records[i].payload));
    }
  }
  batch.set_writer_encoded(append.encoded.size() == n);
  batch.set_request_id(std::string(append.request_id));
  batch.set_principal(std::string(append.principal));
  batch.set_request_fingerprint(append.request_fingerprint);
  batch.set_append_unix_ms(append.append_unix_ms);
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || append.pools[i] != append.pools[i - 1]) {
      RETURN_IF_ERROR(AnnouncePool(append.pools[i], partition));
    }
  }
  ASSIGN_OR_RETURN(const int64_t offset,
                   produce_(kRecordsTopic, partition, append.pools[0],
                            batch.SerializeAsString()));
  if (offset < 0 || offset > kMaxOffset) {
    return absl::InternalError(absl::StrCat("Kafka gave offset ", offset));
  }
  std::vector<uint64_t> seqs(n);
  for (size_t i = 0; i < n; ++i) seqs[i] = SeqOf(offset, i);
  return seqs;
}

absl::Status ClusterLog::AnnouncePool(const std::string& pool, int32_t partition) {
  {
    absl::MutexLock lock(&mu_);
    if (announced_.contains(pool)) return absl::OkStatus();
  }
  ClusterPool entry;
  entry.set_name(pool);
  entry.set_partition(partition);
  entry.set_partitions(options_.partitions);
  RETURN_IF_ERROR(
      produce_(kMetaTopic, 0, absl::StrCat("pool/", pool), entry.SerializeAsString())
          .status());
  absl::MutexLock lock(&mu_);
  announced_.insert(pool);
  return absl::OkStatus();
}

absl::StatusOr<engine::AppliedDictionary> ClusterLog::AppendDictionary(
    const engine::LogDictionary& dictionary) {
  const int32_t partition = PartitionOf(dictionary.pool, options_.partitions);
  ClusterBatch batch;
  ClusterDictionary* message = batch.mutable_dictionary();
  message->set_pool(dictionary.pool);
  message->set_id(dictionary.id);
  if (!dictionary.content.empty()) {  // Its id comes from its content.
    message->set_id(ContentDictionaryId(dictionary.content, partition, options_.partitions));
    ASSIGN_OR_RETURN(*message->mutable_content(),
                     StampDictionaryId(dictionary.content, message->id()));
  }
  message->set_activate(dictionary.activate);
  message->set_base_id(dictionary.base_id);
  message->set_source(dictionary.source);
  message->set_created_unix_ms(dictionary.created_unix_ms);
  message->set_evaluation(dictionary.evaluation);
  RETURN_IF_ERROR(AnnouncePool(dictionary.pool, partition));
  const std::string value = batch.SerializeAsString();
  if (!dictionary.content.empty()) {  // The registry (the partition decides the id).
    RETURN_IF_ERROR(produce_(kMetaTopic, 0,
                             absl::StrCat("dict/", dictionary.pool, "/", message->id()), value)
                        .status());
  }
  ASSIGN_OR_RETURN(const int64_t offset,
                   produce_(kRecordsTopic, partition, dictionary.pool, value));
  const bool applied = AwaitOffset(partition, offset, options_.dictionary_wait);
  absl::MutexLock lock(&mu_);
  if (!applied && stopped_) {
    return absl::UnavailableError("this node is shutting down: it stopped applying the log");
  }
  if (!applied) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the dictionary message of pool '", dictionary.pool, "' is in the log (", kRecordsTopic,
        "/", partition, "@", offset, ") but this node has not applied it yet"));
  }
  auto it = noted_.find({partition, offset});
  if (it == noted_.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this node skipped the dictionary message ", kRecordsTopic, "/", partition, "@",
        offset, " (its log says why)"));
  }
  return it->second;
}

bool ClusterLog::TrainsHere(absl::string_view pool) const {
  if (options_.trains_partition) {
    const std::optional<bool> verdict =
        options_.trains_partition(PartitionOf(pool, options_.partitions));
    if (verdict.has_value()) return *verdict;
  }
  if (options_.nodes.empty()) return true;
  const int32_t n = static_cast<int32_t>(options_.nodes.size());
  return options_.nodes[PartitionOf(pool, n)] == options_.node_name;
}

void ClusterLog::NoteDictionary(int32_t partition, int64_t offset,
                                engine::AppliedDictionary applied) {
  absl::MutexLock lock(&mu_);
  if (!noted_.insert_or_assign({partition, offset}, applied).second) return;
  noted_order_.push_back({partition, offset});
  if (noted_order_.size() > kNotedDictionaries) {
    noted_.erase(noted_order_.front());
    noted_order_.pop_front();
  }
}

bool ClusterLog::AwaitOffset(int32_t partition, int64_t offset,
                             absl::Duration timeout) const {
  auto applied = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = applied_.find(partition);
    return it != applied_.end() && it->second >= offset;
  };
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return applied() || stopped_; };
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  return applied();
}

void ClusterLog::StopWaiting() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

void ClusterLog::MarkApplied(int32_t partition, int64_t offset) {
  absl::MutexLock lock(&mu_);
  int64_t& applied = applied_.try_emplace(partition, -1).first->second;
  if (offset > applied) applied = offset;
}

void ClusterLog::ForgetApplied(int32_t partition) {
  absl::MutexLock lock(&mu_);
  applied_.erase(partition);
}

int64_t ClusterLog::Applied(int32_t partition) const {
  absl::MutexLock lock(&mu_);
  auto it = applied_.find(partition);
  return it == applied_.end() ? -1 : it->second;
}

absl::Status ClusterLog::NotApplied(absl::string_view pool, uint64_t seq,
                                    int32_t partition) const {
  return absl::UnavailableError(absl::StrCat(
      "record ", pool, "/", seq, " is not applied on this node yet (partition ", partition,
      " applied up to offset ", Applied(partition), ", the record is at ", OffsetOf(seq),
      "); retry, or read from another node"));
}

absl::Status ClusterLog::CheckApplied(absl::string_view pool, uint64_t seq) const {
  const int32_t partition = PartitionOf(pool, options_.partitions);
  if (seq == 0 || Applied(partition) >= OffsetOf(seq)) return absl::OkStatus();
  return NotApplied(pool, seq, partition);
}

absl::Status ClusterLog::AwaitApplied(absl::string_view pool, uint64_t seq) const {
  const int32_t partition = PartitionOf(pool, options_.partitions);
  if (seq == 0) return absl::OkStatus();
  if (AwaitOffset(partition, OffsetOf(seq), options_.apply_wait)) return absl::OkStatus();
  return NotApplied(pool, seq, partition);
}

}  // namespace dictlog::cluster
