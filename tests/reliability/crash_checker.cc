#include "tests/reliability/crash_checker.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace dictlog::crash {
namespace {

constexpr size_t kMultiGetChunk = 1000;
constexpr size_t kMaxExamples = 20;

std::string Describe(const BatchKey& key, uint32_t index) {
  return absl::StrCat("c", key.cycle, " w", key.writer, " b", key.batch, " i", index);
}

}  // namespace

uint64_t CheckReport::violations() const {
  return lost + altered + partial_batches + decode_errors + unknown + duplicates +
         counter_mismatches + admin_violations;
}

void CheckReport::Add(const CheckReport& o) {
  acked_checked += o.acked_checked;
  scanned += o.scanned;
  recovered_batches += o.recovered_batches;
  dropped_batches += o.dropped_batches;
  read_back_seconds += o.read_back_seconds;
  scan_seconds += o.scan_seconds;
  lost += o.lost;
  altered += o.altered;
  partial_batches += o.partial_batches;
  decode_errors += o.decode_errors;
  unknown += o.unknown;
  duplicates += o.duplicates;
  counter_mismatches += o.counter_mismatches;
  admin_violations += o.admin_violations;
  for (const std::string& e : o.examples) {
    if (examples.size() < kMaxExamples) examples.push_back(e);
  }
}

void Checker::Violation(uint64_t* counter, std::string what, uint64_t count) {
  *counter += count;
  if (report_.examples.size() < kMaxExamples) report_.examples.push_back(std::move(what));
}

CheckReport Checker::Run(const AdminAcks& admin) {
  report_ = CheckReport();
  tallies_.clear();
  in_flight_seen_.clear();
  seen_.clear();
  absl::Time start = absl::Now();
  CheckAcked();
  report_.read_back_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  start = absl::Now();
  absl::StatusOr<std::vector<v1::PoolInfo>> pools = client_->ListPools();
  if (!pools.ok()) {
    Violation(&report_.decode_errors, absl::StrCat("ListPools: ", pools.status().ToString()));
    return report_;
  }
  // A failed Scan leaves the fate of in-flight batches open: they wait for the next.
  if (ScanPools(*pools)) {
    SettleInFlight();
    CheckCounters(*pools);
  }
  report_.scan_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  CheckAdmin(*pools, admin);
  return report_;
}

void Checker::CheckAcked() {
  std::vector<std::string> ids;
  std::vector<const SentRecord*> expected;
  for (const auto& [key, batch] : model_->Batches()) {
    if (batch->state != BatchState::kAcked) continue;
    for (size_t i = 0; i < batch->records.size(); ++i) {
      ids.push_back(batch->ids[i]);
      expected.push_back(&batch->records[i]);
      if (ids.size() == kMultiGetChunk) {
        CheckChunk(ids, expected);
        ids.clear();
        expected.clear();
      }
    }
  }
  if (!ids.empty()) CheckChunk(ids, expected);
}

void Checker::CheckChunk(const std::vector<std::string>& ids,
                         const std::vector<const SentRecord*>& expected) {
  absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> results = client_->MultiGet(ids);
  if (!results.ok() || results->size() != ids.size()) {
    Violation(&report_.decode_errors,
              absl::StrCat("MultiGet of ", ids.size(), " ids: ",
                           results.ok() ? "wrong result count" : results.status().ToString()),
              ids.size());
    return;
  }
  report_.acked_checked += ids.size();
  for (size_t i = 0; i < ids.size(); ++i) {
    const absl::StatusOr<v1::Record>& got = (*results)[i];
    if (absl::IsNotFound(got.status())) {
      Violation(&report_.lost, absl::StrCat("lost: acknowledged ", ids[i]));
    } else if (!got.ok()) {
      Violation(&report_.decode_errors, absl::StrCat("read ", ids[i], ": ",
                                                     got.status().ToString()));
    } else if (got->payload() != expected[i]->payload ||
               got->category() != expected[i]->category || got->id() != ids[i]) {
      Violation(&report_.altered, absl::StrCat("altered: ", ids[i], " holds '",
                                               got->payload().substr(0, 60), "'"));
    }
  }
}

bool Checker::ScanPools(const std::vector<v1::PoolInfo>& pools) {
  bool complete = true;
  for (const v1::PoolInfo& pool : pools) {
    PoolTally& tally = tallies_[pool.name()];
    v1::ScanRequest request;
    request.set_pool(pool.name());
    absl::Status status = client_->Scan(request, [&](const v1::Record& record) {
      CheckScanned(record, &tally);
      return absl::OkStatus();
    });
    if (!status.ok()) {
      complete = false;
      Violation(&report_.decode_errors,
                absl::StrCat("Scan of pool ", pool.name(), ": ", status.ToString()));
    }
  }
  return complete;
}

void Checker::CheckScanned(const v1::Record& record, PoolTally* tally) {
  ++report_.scanned;
  ++tally->records;
  tally->raw_bytes += record.payload().size();
  std::optional<PayloadHeader> header = ParsePayload(record.payload());
  if (!header.has_value()) {
    Violation(&report_.unknown, absl::StrCat("unknown: ", record.id(), " holds '",
                                             record.payload().substr(0, 60), "'"));
    return;
  }
  if (!seen_.emplace(header->key, header->index).second) {
    Violation(&report_.duplicates, absl::StrCat("duplicate: ", Describe(header->key,
                                                header->index), " again at ", record.id()));
    return;
  }
  CheckSentRecord(record, *header);
}

void Checker::CheckSentRecord(const v1::Record& record, const PayloadHeader& header) {
  const SentBatch* batch = model_->Find(header.key);
  const std::string where = absl::StrCat(Describe(header.key, header.index), " at ",
                                         record.id());
  if (batch == nullptr || batch->state == BatchState::kDropped) {
    Violation(&report_.unknown, absl::StrCat(batch == nullptr ? "never sent: " :
                                             "dropped batch came back: ", where));
    return;
  }
  if (header.size != batch->records.size() ||
      batch->records[header.index].payload != record.payload() ||
      batch->records[header.index].category != record.category()) {
    Violation(&report_.altered, absl::StrCat("altered: ", where));
    return;
  }
  if (batch->state == BatchState::kAcked && batch->ids[header.index] != record.id()) {
    Violation(&report_.altered, absl::StrCat("moved: ", where, ", acknowledged as ",
                                             batch->ids[header.index]));
  } else if (batch->state == BatchState::kInFlight) {
    std::vector<std::string>& ids = in_flight_seen_[header.key];
    ids.resize(header.size);
    ids[header.index] = record.id();
  }
}

void Checker::SettleInFlight() {
  for (const auto& [key, batch] : model_->Batches()) {
    if (batch->state != BatchState::kInFlight) continue;
    auto it = in_flight_seen_.find(key);
    if (it == in_flight_seen_.end()) {
      ++report_.dropped_batches;
      (void)model_->Settle(key, BatchState::kDropped, {});
      continue;
    }
    const std::vector<std::string>& ids = it->second;
    const size_t found = std::count_if(ids.begin(), ids.end(),
                                       [](const std::string& id) { return !id.empty(); });
    if (found != batch->records.size()) {
      Violation(&report_.partial_batches,
                absl::StrCat("partial batch: ", Describe(key, 0), ".. has ", found, " of ",
                             batch->records.size(), " records"));
      (void)model_->Settle(key, BatchState::kBroken, {});
      continue;
    }
    ++report_.recovered_batches;
    absl::Status status = model_->Settle(key, BatchState::kAcked, ids);
    if (!status.ok()) Violation(&report_.duplicates, status.ToString());
  }
}

void Checker::CheckCounters(const std::vector<v1::PoolInfo>& pools) {
  for (const v1::PoolInfo& pool : pools) {
    const PoolTally& tally = tallies_[pool.name()];
    if (pool.stats().records() != tally.records || pool.stats().raw_bytes() != tally.raw_bytes) {
      Violation(&report_.counter_mismatches,
                absl::StrCat("counters of pool ", pool.name(), ": ", pool.stats().records(),
                             " records / ", pool.stats().raw_bytes(), " raw bytes, scan found ",
                             tally.records, " / ", tally.raw_bytes));
    }
  }
}

void Checker::CheckAdmin(const std::vector<v1::PoolInfo>& pools, const AdminAcks& admin) {
  for (const v1::PoolInfo& pool : pools) {
    v1::RecompressRequest request;
    request.set_pool(pool.name());
    absl::StatusOr<v1::RecompressStatus> job = client_->GetRecompressStatus(request);
    if (!job.ok() || job->state() == v1::RecompressStatus::FAILED) {
      Violation(&report_.admin_violations,
                absl::StrCat("re-compression of ", pool.name(), ": ",
                             job.ok() ? job->error() : job.status().ToString()));
    } else if (job->state() == v1::RecompressStatus::NONE &&
               std::count(admin.recompressions.begin(), admin.recompressions.end(),
                          pool.name()) > 0) {
      Violation(&report_.admin_violations,
                absl::StrCat("re-compression of ", pool.name(), " started, then forgotten"));
    }
  }
  for (const auto& [pool, id] : admin.dictionaries) {
    v1::GetDictionaryRequest request;
    request.set_id(id);
    absl::StatusOr<v1::GetDictionaryResponse> dict = client_->GetDictionary(request);
    if (!dict.ok() || dict->dictionary().pool() != pool) {
      Violation(&report_.admin_violations,
                absl::StrCat("dictionary ", id, " of ", pool, " trained, then lost: ",
                             dict.status().ToString()));
    }
  }
}

}  // namespace dictlog::crash
