// LogEngine's cluster mode (docs/cluster.md, ADR 0017): the append path into the
// replicated log, the apply path out of it, and the read barrier. Single-node mode
// never reaches these (EngineOptions::replicated_log is null).
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/engine/log_engine.h"
#include "server/engine/request_ids.h"
#include "server/store/keys.h"

namespace dictlog::engine {

absl::StatusOr<std::vector<std::string>> LogEngine::AppendToLog(
    absl::Span<const AppendInput> records, const store::RequestWrite* request) {
  LogAppend append;
  append.records = records;
  append.pools.reserve(records.size());
  for (const AppendInput& record : records) {
    append.pools.push_back(router_.Route(record.category));
    std::shared_ptr<pool::Pool> pool = registry_->Find(append.pools.back());
    if (pool != nullptr && pool->block_mode()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pool '", pool->name(), "' is in block mode, which cluster mode does not "
          "replicate yet"));
    }
  }
  if (request != nullptr) {
    append.request_id = request->request_id;
    append.principal = request->principal;
  }
  append.append_unix_ms = absl::ToUnixMillis(store_->Now());
  ASSIGN_OR_RETURN(const std::vector<uint64_t> seqs, options_.replicated_log->Append(append));
  if (seqs.size() != records.size()) {
    return absl::InternalError(absl::StrCat("the log gave ", seqs.size(), " seqs for ",
                                            records.size(), " records"));
  }
  std::vector<std::string> ids;
  ids.reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    ids.push_back(pool::FormatRecordId(append.pools[i], seqs[i]));
  }
  return ids;
}

absl::Status LogEngine::ApplyLogged(const LoggedBatch& batch) {
  if (options_.replicated_log == nullptr) {
    return absl::FailedPreconditionError("ApplyLogged outside cluster mode");
  }
  RETURN_IF_ERROR(ValidateAppend(batch.records));
  const size_t n = batch.records.size();
  if (batch.pools.size() != n || batch.seqs.size() != n) {
    return absl::InvalidArgumentError("a logged batch needs one pool and seq per record");
  }
  for (size_t i = 0; i < n; ++i) {
    if (router_.Route(batch.records[i].category) != batch.pools[i]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "category '", batch.records[i].category, "' routes to pool '",
          router_.Route(batch.records[i].category), "' here but to '", batch.pools[i],
          "' on the node that wrote it: every node needs the same routes"));
    }
  }
  store::RequestWrite request;
  if (!batch.request_id.empty()) {
    RETURN_IF_ERROR(pool::ValidateName(batch.request_id, "request id"));
    if (batch.principal.size() > store::kMaxPrincipalBytes) {
      return absl::InvalidArgumentError("principal longer than 255 bytes");
    }
    request.request_id = batch.request_id;
    request.principal = batch.principal;
    request.entry.set_created_unix_ms(batch.append_unix_ms);
    request.entry.set_fingerprint(RequestFingerprint(batch.records));
  }
  const Placement placement{batch.seqs, batch.append_unix_ms, &batch.position};
  return AppendOnce(batch.records, batch.request_id.empty() ? nullptr : &request, &placement)
      .status();
}

absl::Status LogEngine::AppliedHere(const pool::RecordId& id,
                                    absl::flat_hash_set<std::string>* waited) const {
  const ReplicatedLog* log = options_.replicated_log;
  if (log == nullptr) return absl::OkStatus();
  absl::Status applied = log->CheckApplied(id.pool, id.seq);
  if (applied.ok()) return applied;
  if (waited != nullptr && !waited->insert(id.pool).second) return applied;
  return log->AwaitApplied(id.pool, id.seq);
}

}  // namespace dictlog::engine
