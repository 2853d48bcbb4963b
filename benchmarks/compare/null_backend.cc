#include "benchmarks/compare/null_backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmarks/compare/record_id.h"

namespace dictlog::compare {

absl::StatusOr<std::vector<std::string>> NullBackend::Append(
    absl::Span<const AppendInput> records) {
  for (size_t i = 0; i < records.size(); ++i) {
    if (absl::Status status = ValidateCategory(records[i].category); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("record ", i, ": ", status.message()));
    }
  }
  std::vector<std::string> ids;
  ids.reserve(records.size());
  absl::MutexLock lock(&mu_);
  for (const AppendInput& record : records) {
    std::vector<uint32_t>& lengths = lengths_[record.category];
    lengths.push_back(static_cast<uint32_t>(record.payload.size()));
    ids.push_back(FormatRecordId(record.category, lengths.size()));
    ++records_;
    raw_bytes_ += record.payload.size();
  }
  return ids;
}

absl::StatusOr<v1::Record> NullBackend::Get(absl::string_view id) {
  absl::StatusOr<RecordId> parsed = ParseRecordId(id);
  if (!parsed.ok()) return parsed.status();
  uint32_t length = 0;
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = lengths_.find(parsed->pool);
    if (it == lengths_.end() || parsed->seq > it->second.size()) {
      return absl::NotFoundError(absl::StrCat("no record ", id));
    }
    length = it->second[parsed->seq - 1];
  }
  v1::Record record;
  record.set_id(std::string(id));
  record.set_category(parsed->pool);
  record.set_payload(std::string(length, 'n'));
  return record;
}

absl::StatusOr<std::string> NullBackend::MeasureJson() {
  absl::ReaderMutexLock lock(&mu_);
  return absl::StrFormat(
      "{\"backend\":\"null\",\"records\":%d,\"raw_bytes\":%d,\"stored_bytes\":0}",
      records_, raw_bytes_);
}

}  // namespace dictlog::compare
