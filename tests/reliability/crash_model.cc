#include "tests/reliability/crash_model.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dictlog::crash {
namespace {

constexpr absl::string_view kSeparator = " | ";

}  // namespace

std::string MakePayload(const PayloadHeader& header, absl::string_view text) {
  return absl::StrFormat("crash c=%u w=%u b=%u i=%u n=%u%s%s", header.key.cycle,
                         header.key.writer, header.key.batch, header.index, header.size,
                         kSeparator, text);
}

std::optional<PayloadHeader> ParsePayload(absl::string_view payload) {
  const size_t end = payload.find(kSeparator);
  if (end == absl::string_view::npos || end > 100) return std::nullopt;
  const std::string head(payload.substr(0, end));
  PayloadHeader h;
  int consumed = 0;
  if (std::sscanf(head.c_str(), "crash c=%u w=%u b=%u i=%u n=%u%n", &h.key.cycle,
                  &h.key.writer, &h.key.batch, &h.index, &h.size, &consumed) != 5 ||
      consumed != static_cast<int>(head.size()) || h.index >= h.size) {
    return std::nullopt;
  }
  return h;
}

void CrashModel::Sent(const BatchKey& key, std::vector<SentRecord> records) {
  absl::MutexLock lock(&mu_);
  SentBatch& batch = batches_[key];
  batch.records = std::move(records);
  batch.state = BatchState::kInFlight;
}

absl::Status CrashModel::Acked(const BatchKey& key, std::vector<std::string> ids) {
  return Settle(key, BatchState::kAcked, std::move(ids));
}

absl::Status CrashModel::Settle(const BatchKey& key, BatchState state,
                                std::vector<std::string> ids) {
  absl::MutexLock lock(&mu_);
  auto it = batches_.find(key);
  if (it == batches_.end()) return absl::InternalError("settling a batch never sent");
  SentBatch& batch = it->second;
  batch.state = state;
  if (state != BatchState::kAcked) return absl::OkStatus();
  if (ids.size() != batch.records.size()) {
    batch.state = BatchState::kBroken;
    return absl::InternalError(absl::StrCat("batch of ", batch.records.size(),
                                            " records acknowledged with ", ids.size(),
                                            " ids"));
  }
  // Acknowledged even if an id was handed out before: the server said so, and the
  // read-back then finds which of the two records the id holds.
  acked_records_ += ids.size();
  batch.ids = std::move(ids);
  absl::Status status;
  for (const std::string& id : batch.ids) {
    auto [owner, fresh] = owner_.try_emplace(id, key);
    if (!fresh && status.ok()) {
      status = absl::InternalError(absl::StrCat(
          "id ", id, " handed out twice (batches c", owner->second.cycle, " w",
          owner->second.writer, " b", owner->second.batch, " and c", key.cycle, " w",
          key.writer, " b", key.batch, ")"));
    }
  }
  return status;
}

const SentBatch* CrashModel::Find(const BatchKey& key) const {
  absl::MutexLock lock(&mu_);
  auto it = batches_.find(key);
  return it == batches_.end() ? nullptr : &it->second;
}

std::vector<std::pair<BatchKey, const SentBatch*>> CrashModel::Batches() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<BatchKey, const SentBatch*>> out;
  out.reserve(batches_.size());
  for (const auto& [key, batch] : batches_) out.emplace_back(key, &batch);
  return out;
}

uint64_t CrashModel::acked_records() const {
  absl::MutexLock lock(&mu_);
  return acked_records_;
}

}  // namespace dictlog::crash
