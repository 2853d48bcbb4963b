#include "server/cluster/materializer.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/cluster/cluster.pb.h"
#include "server/cluster/partitioning.h"
#include "server/cluster/topics.h"

namespace dictlog::cluster {
namespace {

constexpr size_t kMaxMessagesPerPoll = 256;
constexpr absl::Duration kPollWait = absl::Milliseconds(100);
constexpr absl::Duration kRetryWait = absl::Milliseconds(200);

// The batch a message carries, as ApplyLogged takes it (views into `parsed`).
absl::StatusOr<engine::LoggedBatch> ToLogged(const LogMessage& message, ClusterBatch* parsed) {
  if (!parsed->ParseFromString(message.value)) {
    return absl::InvalidArgumentError("the message does not parse as a ClusterBatch");
  }
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
  }
  batch.request_id = parsed->request_id();
  batch.principal = parsed->principal();
  batch.append_unix_ms = parsed->append_unix_ms();
  batch.position = {static_cast<uint32_t>(message.partition), message.offset};
  return batch;
}

// Errors after which the same message would fail again on this node.
bool Permanent(const absl::Status& status) {
  return absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status) ||
         absl::IsResourceExhausted(status) || absl::IsAlreadyExists(status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Materializer>> Materializer::Start(
    const std::string& bootstrap, engine::LogEngine* engine, ClusterLog* log) {
  ASSIGN_OR_RETURN(const std::vector<store::LogPosition> stored, engine->LogPositions());
  std::vector<PartitionStart> starts(log->partitions());
  for (int32_t p = 0; p < log->partitions(); ++p) starts[p] = {p, kFromBeginning};
  for (const store::LogPosition& position : stored) {
    if (position.partition >= starts.size()) continue;  // the topic shrank: not read
    starts[position.partition].offset = position.offset + 1;
    log->MarkApplied(static_cast<int32_t>(position.partition), position.offset);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Consumer> consumer,
                   Consumer::Open(bootstrap, kRecordsTopic, starts));
  return std::unique_ptr<Materializer>(new Materializer(std::move(consumer), engine, log));
}

Materializer::Materializer(std::unique_ptr<Consumer> consumer, engine::LogEngine* engine,
                           ClusterLog* log)
    : consumer_(std::move(consumer)), engine_(engine), log_(log), thread_([this] { Run(); }) {}

Materializer::~Materializer() {
  stop_.Notify();
  thread_.join();
}

void Materializer::Run() {
  while (!stop_.HasBeenNotified()) {
    absl::StatusOr<std::vector<LogMessage>> messages =
        consumer_->Poll(kPollWait, kMaxMessagesPerPoll);
    if (!messages.ok()) {
      std::fprintf(stderr, "dictlogd: materializer: %s\n", messages.status().ToString().c_str());
      stop_.WaitForNotificationWithTimeout(kRetryWait);
      continue;
    }
    for (const LogMessage& message : *messages) {
      if (!Apply(message)) return;
    }
  }
}

bool Materializer::Apply(const LogMessage& message) {
  const store::LogPosition position{static_cast<uint32_t>(message.partition), message.offset};
  while (true) {
    ClusterBatch parsed;
    absl::StatusOr<engine::LoggedBatch> batch = ToLogged(message, &parsed);
    absl::Status status = batch.ok() ? engine_->ApplyLogged(*batch) : batch.status();
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
    if (stop_.WaitForNotificationWithTimeout(kRetryWait)) return false;
  }
}

}  // namespace dictlog::cluster
