// LogEngine's cluster mode (docs/cluster.md, ADR 0017, ADR 0020): the append path into
// the replicated log (the writer encodes), the apply path out of it (records stored as
// the writer encoded them, dictionaries and activations at their log position), the
// read barrier, and what dictionary admin calls do. Single-node mode never reaches
// these (EngineOptions::replicated_log is null).
#include <cstdio>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/block/block_reader.h"
#include "server/engine/log_engine.h"
#include "server/engine/request_ids.h"
#include "server/store/keys.h"

namespace dictlog::engine {

absl::StatusOr<std::vector<std::string>> LogEngine::AppendToLog(
    absl::Span<const AppendInput> records, const store::RequestWrite* request) {
  LogAppend append;
  append.records = records;
  append.pools.reserve(records.size());
  append.encoded.reserve(records.size());
  std::shared_ptr<pool::Pool> pool;
  for (const AppendInput& record : records) {
    append.pools.push_back(router_.Route(record.category));
    if (pool == nullptr || pool->name() != append.pools.back()) {
      pool = registry_->Find(append.pools.back());
    }
    if (pool != nullptr && pool->block_mode()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pool '", pool->name(), "' is in block mode, which cluster mode does not "
          "replicate yet"));
    }
    ASSIGN_OR_RETURN(EncodedRecord encoded, EncodeForLog(pool.get(), record.payload));
    append.encoded.push_back(std::move(encoded));
  }
  if (request != nullptr) {
    append.request_id = request->request_id;
    append.principal = request->principal;
    append.request_fingerprint = request->entry.fingerprint();
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

absl::StatusOr<EncodedRecord> LogEngine::EncodeForLog(pool::Pool* pool,
                                                      absl::string_view payload) const {
  std::shared_ptr<const codec::EncoderDictionary> encoder;
  codec::EncodeOptions encode;
  encode.compression_level = options_.default_pool_options.compression_level();
  if (pool != nullptr) {
    ASSIGN_OR_RETURN(encoder, pool->Encoder());
    encode.compression_level = pool->options().compression_level();
  }
  encode.dictionary = encoder.get();
  encode.short_frame = false;  // The log carries magicless frames (docs/cluster.md).
  std::string value;
  RETURN_IF_ERROR(codec::EncodeRecord(payload, encode, &value));
  ASSIGN_OR_RETURN(const codec::RecordView view, codec::ParseRecord(value));
  EncodedRecord encoded;
  encoded.raw_size = payload.size();
  if (view.encoding != codec::Encoding::kZstdFrame) return encoded;  // Did not shrink.
  encoded.framed = true;
  encoded.frame = std::string(view.body);
  encoded.dictionary_id = view.dictionary_id;
  return encoded;
}

absl::Status LogEngine::StoreEncoded(const EncodedRecord& encoded, absl::string_view payload,
                                     uint32_t category_index, store::RecordWrite* write) {
  write->value.clear();
  if (!encoded.framed) {
    codec::EncodeRaw(payload, category_index, &write->value);
    write->raw_bytes = payload.size();
    return absl::OkStatus();
  }
  absl::Status appended = codec::AppendFrameValue(encoded.frame, category_index, &write->value);
  absl::StatusOr<codec::RecordView> view = codec::ParseRecord(write->value);
  if (!appended.ok() || !view.ok() || !view->framed() ||
      view->dictionary_id != encoded.dictionary_id || view->content_size != encoded.raw_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a logged frame does not parse or disagrees with its dictionary id ",
        encoded.dictionary_id, " or size ", encoded.raw_size));
  }
  write->dictionary_id = encoded.dictionary_id;
  write->raw_bytes = encoded.raw_size;
  return absl::OkStatus();
}

absl::Status LogEngine::CheckFrameDictionaries(const LoggedBatch& batch) const {
  absl::flat_hash_set<uint32_t> checked;
  for (const EncodedRecord& encoded : batch.encoded) {
    if (encoded.raw_size > options_.max_record_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a logged record of ", encoded.raw_size, " bytes exceeds --max_record_bytes=",
          options_.max_record_bytes));
    }
    if (!encoded.framed || encoded.dictionary_id == 0) continue;
    if (!checked.insert(encoded.dictionary_id).second) continue;
    if (dictionaries_.Find(encoded.dictionary_id) == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "unknown dictionary ", encoded.dictionary_id,
          ": a logged frame names a dictionary this node has not applied"));
    }
  }
  return absl::OkStatus();
}

absl::Status LogEngine::ApplyLogged(const LoggedBatch& batch) {
  if (options_.replicated_log == nullptr) {
    return absl::FailedPreconditionError("ApplyLogged outside cluster mode");
  }
  RETURN_IF_ERROR(ValidateAppend(batch.records));
  const size_t n = batch.records.size();
  if (batch.pools.size() != n || batch.seqs.size() != n ||
      (!batch.encoded.empty() && batch.encoded.size() != n)) {
    return absl::InvalidArgumentError("a logged batch needs one pool and seq per record");
  }
  RETURN_IF_ERROR(CheckFrameDictionaries(batch));
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
    request.entry.set_fingerprint(batch.request_fingerprint != 0
                                      ? batch.request_fingerprint
                                      : RequestFingerprint(batch.records));
  }
  const Placement placement{batch.seqs, batch.append_unix_ms, &batch.position,
                            batch.encoded};
  return AppendOnce(batch.records, batch.request_id.empty() ? nullptr : &request, &placement)
      .status();
}

std::vector<v1::Record> LogEngine::AppliedRecords(
    const pool::Pool& pool, absl::Span<const std::shared_ptr<pool::Pool>> pools,
    absl::Span<const store::RecordWrite> writes, int64_t time_ms) const {
  std::vector<v1::Record> followed;
  for (size_t i = 0; i < writes.size(); ++i) {  // In seq order within the pool.
    if (pools[i].get() != &pool) continue;
    const store::RecordRef ref{pool.id(), writes[i].seq};
    absl::StatusOr<v1::Record> record =
        ToRecord(pool, writes[i].seq, block::DecodeOne(*store_, ReadLookup(), ref, writes[i].value));
    if (!record.ok()) {  // Stored as the writer encoded it; a Get reports the same error.
      std::fprintf(stderr, "dictlogd: follow streams skip a record: %s\n",
                   record.status().ToString().c_str());
      continue;
    }
    if (time_ms != 0) record->set_append_time_unix_ms(time_ms);
    followed.push_back(*std::move(record));
  }
  return followed;
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

absl::StatusOr<AppliedDictionary> LogEngine::ApplyLoggedDictionary(
    const LogDictionary& dictionary, bool stored, const store::LogPosition& position) {
  if (options_.replicated_log == nullptr) {
    return absl::FailedPreconditionError("ApplyLoggedDictionary outside cluster mode");
  }
  std::shared_ptr<pool::Pool> pool = registry_->Find(dictionary.pool);
  if (pool == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("a logged dictionary names pool '", dictionary.pool,
                     "', which this node does not hold"));
  }
  if (!dictionary.content.empty() && !stored) {
    storage::DictionaryRecord record;
    record.set_id(dictionary.id);
    record.set_pool_id(pool->id());
    record.set_pool(pool->name());
    record.set_content(dictionary.content);
    record.set_created_unix_ms(dictionary.created_unix_ms);
    record.set_source(dictionary.source);
    if (!record.mutable_evaluation()->ParseFromString(dictionary.evaluation)) {
      record.clear_evaluation();
    }
    absl::Status added = manager_->AddLogged(std::move(record));
    // A dictionary that does not build can never apply here.
    if (absl::IsDataLoss(added)) return absl::InvalidArgumentError(added.message());
    RETURN_IF_ERROR(added);
  }
  AppliedDictionary applied{dictionary.id, false};
  if (dictionary.activate) {
    const uint32_t active = pool->active_dictionary_id();
    if (active == dictionary.id) {
      applied.activated = true;  // Applied before (a replay), or the same one twice.
    } else if (active == dictionary.base_id) {  // The first activation from this base.
      absl::Status activated = manager_->Activate(pool->name(), dictionary.id).status();
      if (absl::IsNotFound(activated) || absl::IsInvalidArgument(activated)) {
        return absl::FailedPreconditionError(activated.message());
      }
      RETURN_IF_ERROR(activated);
      applied.activated = true;
    }
  }
  RETURN_IF_ERROR(store_->PutLogPosition(position));
  return applied;
}

absl::StatusOr<LogEngine::HeldDictionary> LogEngine::DictionaryHeld(uint32_t id) const {
  HeldDictionary held;
  ASSIGN_OR_RETURN(held.used, store_->DictionaryIdUsed(id));
  if (!held.used) return held;
  absl::StatusOr<v1::GetDictionaryResponse> got = manager_->Get(id);
  if (absl::IsNotFound(got.status())) return held;  // Retired.
  RETURN_IF_ERROR(got.status());
  held.pool = got->dictionary().pool();
  held.content = std::move(*got->mutable_content());
  return held;
}

absl::StatusOr<v1::DictionaryInfo> LogEngine::PublishDictionary(storage::DictionaryRecord record,
                                                                bool activate,
                                                                uint32_t base_id) {
  LogDictionary dictionary;
  dictionary.pool = record.pool();
  dictionary.content = std::move(*record.mutable_content());
  dictionary.activate = activate;
  dictionary.base_id = base_id;
  dictionary.source = record.source();
  dictionary.created_unix_ms = record.created_unix_ms();
  if (record.has_evaluation()) dictionary.evaluation = record.evaluation().SerializeAsString();
  ASSIGN_OR_RETURN(const AppliedDictionary applied,
                   options_.replicated_log->AppendDictionary(dictionary));
  ASSIGN_OR_RETURN(v1::GetDictionaryResponse got, manager_->Get(applied.id));
  return std::move(*got.mutable_dictionary());
}

absl::StatusOr<v1::DictionaryInfo> LogEngine::ActivateInLog(
    const v1::ActivateDictionaryRequest& request) {
  ASSIGN_OR_RETURN(std::shared_ptr<pool::Pool> pool, FindPool(request.pool()));
  ASSIGN_OR_RETURN(v1::GetDictionaryResponse got, manager_->Get(request.id()));
  if (got.dictionary().pool() != pool->name()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dictionary ", request.id(), " belongs to pool '", got.dictionary().pool(),
        "', not '", pool->name(), "'"));
  }
  LogDictionary activation;
  activation.pool = pool->name();
  activation.id = request.id();
  activation.activate = true;
  activation.base_id = pool->active_dictionary_id();
  ASSIGN_OR_RETURN(const AppliedDictionary applied,
                   options_.replicated_log->AppendDictionary(activation));
  if (!applied.activated) {
    std::shared_ptr<pool::Pool> now = registry_->Find(pool->name());
    return absl::AbortedError(absl::StrCat(
        "another activation of pool '", pool->name(), "' came first in the log (its "
        "active dictionary is now ", now ? now->active_dictionary_id() : 0,
        "); retry if still wanted"));
  }
  ASSIGN_OR_RETURN(got, manager_->Get(request.id()));
  return std::move(*got.mutable_dictionary());
}

absl::Status LogEngine::RefusedInCluster(absl::string_view what) const {
  if (options_.replicated_log == nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      what, " is not available in cluster mode: it would change this node's stored "
      "dictionaries or frames alone (docs/cluster.md)"));
}

bool LogEngine::TrainsHere(const pool::Pool& pool) const {
  return options_.replicated_log == nullptr || options_.replicated_log->TrainsHere(pool.name());
}

}  // namespace dictlog::engine
