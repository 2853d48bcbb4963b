#include "benchmarks/compare/backend.h"

#include "absl/strings/str_cat.h"
#include "benchmarks/compare/record_id.h"

namespace dictlog::compare {

std::vector<absl::StatusOr<v1::Record>> Backend::MultiGet(
    absl::Span<const std::string> ids) {
  std::vector<absl::StatusOr<v1::Record>> results;
  results.reserve(ids.size());
  for (const std::string& id : ids) results.push_back(Get(id));
  return results;
}

uint64_t SeqAllocator::Allocate(absl::string_view category, uint64_t count,
                                uint64_t raw_bytes) {
  absl::MutexLock lock(&mu_);
  uint64_t& next = next_[category];
  if (next == 0) next = 1;
  const uint64_t first = next;
  next += count;
  records_ += count;
  raw_bytes_ += raw_bytes;
  return first;
}

uint64_t SeqAllocator::records() const {
  absl::MutexLock lock(&mu_);
  return records_;
}

uint64_t SeqAllocator::raw_bytes() const {
  absl::MutexLock lock(&mu_);
  return raw_bytes_;
}

absl::StatusOr<std::vector<std::string>> AssignIds(SeqAllocator& seqs,
                                                   absl::Span<const AppendInput> records,
                                                   std::vector<uint64_t>* seq_out) {
  for (size_t i = 0; i < records.size(); ++i) {
    if (absl::Status status = ValidateCategory(records[i].category); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("record ", i, ": ", status.message()));
    }
  }
  std::vector<std::string> ids;
  ids.reserve(records.size());
  seq_out->clear();
  for (const AppendInput& record : records) {
    const uint64_t seq = seqs.Allocate(record.category, 1, record.payload.size());
    seq_out->push_back(seq);
    ids.push_back(FormatRecordId(record.category, seq));
  }
  return ids;
}

}  // namespace dictlog::compare
