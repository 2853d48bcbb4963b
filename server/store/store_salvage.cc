// Store::SalvageInto: copies what a damaged store can read into a new one (store.h).
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/store/key_space.h"
#include "server/store/rocksdb_status.h"
#include "server/store/store.h"

namespace dictlog::store {
namespace {

// Bytes of one batch written to the new store.
constexpr size_t kBatchBytes = size_t{4} << 20;
// The search's key width: at least this, and beyond the longest key seen so far.
constexpr size_t kMinProbeWidth = 64;

// A seek to `target` can read (lands on a key, or past the last one): false where it
// meets a damaged block (Corruption); other errors are returned.
absl::StatusOr<bool> SeekReads(rocksdb::Iterator* it, const std::string& target,
                               absl::string_view family) {
  it->Seek(target);
  if (it->Valid() || it->status().ok()) return true;
  if (it->status().IsCorruption()) return false;
  return FromRocks(it->status(), absl::StrCat("salvaging ", family));
}

}  // namespace

absl::StatusOr<SalvageReport> Store::SalvageInto(
    Store& to, uint64_t progress_every,
    absl::FunctionRef<void(const SalvageReport&)> progress) const {
  SalvageReport report;
  rocksdb::WriteOptions write;
  write.disableWAL = true;  // Flushed at the end; a failed salvage is run again.
  uint64_t since_progress = 0;
  for (size_t f = 0; f < handles_.size(); ++f) {
    report.families.push_back({handles_[f]->GetName(), 0, 0, {}});
    SalvagedFamily& family = report.families.back();
    rocksdb::ReadOptions read;
    read.fill_cache = false;
    read.total_order_seek = true;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, handles_[f]));
    rocksdb::WriteBatch batch;
    const auto write_batch = [&]() -> absl::Status {
      if (batch.Count() == 0) return absl::OkStatus();
      RETURN_IF_ERROR(FromRocks(to.db_->Write(write, &batch),
                                absl::StrCat("writing salvaged ", family.name)));
      batch.Clear();
      return absl::OkStatus();
    };
    std::string last;  // The last key copied.
    bool copied_any = false;
    size_t width = kMinProbeWidth;
    it->SeekToFirst();
    while (true) {
      if (it->Valid()) {
        RETURN_IF_ERROR(FromRocks(batch.Put(to.handles_[f], it->key(), it->value()),
                                  "batching a salvaged entry"));
        last.assign(it->key().data(), it->key().size());
        copied_any = true;
        width = std::max(width, last.size() + 8);
        ++family.entries;
        family.bytes += it->key().size() + it->value().size();
        if (batch.GetDataSize() >= kBatchBytes) RETURN_IF_ERROR(write_batch());
        if (++since_progress == progress_every) {
          since_progress = 0;
          progress(report);
        }
        it->Next();
        continue;
      }
      if (it->status().ok()) break;  // The family's end.
      if (!it->status().IsCorruption()) {
        return FromRocks(it->status(), absl::StrCat("salvaging ", family.name));
      }
      SalvagedFamily::LostRange lost{copied_any ? last : "", "", it->status().ToString()};
      std::unique_ptr<rocksdb::Iterator> probe(db_->NewIterator(read, handles_[f]));
      ASSIGN_OR_RETURN(
          const std::optional<std::string> next,
          FirstPassing(
              last, !copied_any, width,
              [&](const std::string& t) { return SeekReads(probe.get(), t, family.name); },
              &report.probe_seeks));
      if (!next.has_value()) {  // Nothing readable after it: lost to the end.
        family.lost.push_back(std::move(lost));
        break;
      }
      it->Seek(*next);
      if (it->Valid()) lost.before.assign(it->key().data(), it->key().size());
      family.lost.push_back(std::move(lost));
      if (!it->Valid() && !it->status().ok()) {  // The probe's seek read; this one not.
        return FromRocks(it->status(), absl::StrCat("salvaging ", family.name,
                                                    ": a seek past the damage failed"));
      }
    }
    RETURN_IF_ERROR(write_batch());
  }
  RETURN_IF_ERROR(to.Flush().status());
  progress(report);
  return report;
}

}  // namespace dictlog::store
