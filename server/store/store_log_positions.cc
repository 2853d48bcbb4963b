// Store's log positions (cluster mode, docs/cluster.md): per Kafka partition of
// dictlog.records, the offset of the message applied last, in the catalog family
// ('L' partition:u32be -> offset:u64be). Written in the same WriteBatch as the records
// of that message, so a restart resumes exactly after it.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/store/keys.h"
#include "server/store/rocksdb_status.h"
#include "server/store/store.h"

namespace dictlog::store {

absl::Status Store::BatchLogPosition(const LogPosition& applied, rocksdb::WriteBatch* batch) {
  if (applied.offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative log offset ", applied.offset, " of partition ", applied.partition));
  }
  std::string value;
  PutFixed64BE(static_cast<uint64_t>(applied.offset), &value);
  return FromRocks(batch->Put(catalog_, LogPositionKey(applied.partition), value),
                   "batching a log position");
}

absl::Status Store::PutLogPosition(const LogPosition& applied) {
  rocksdb::WriteBatch batch;
  RETURN_IF_ERROR(BatchLogPosition(applied, &batch));
  return Write(&batch, "writing a log position");
}

absl::StatusOr<std::vector<LogPosition>> Store::LoadLogPositions() const {
  std::vector<LogPosition> positions;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), catalog_));
  const std::string prefix(1, kLogPositionPrefix);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (it->key().size() != 5 || it->value().size() != 8) {
      return absl::DataLossError("a stored log position does not parse");
    }
    positions.push_back({GetFixed32BE(it->key().data() + 1),
                         static_cast<int64_t>(GetFixed64BE(it->value().data()))});
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "reading log positions"));
  return positions;
}

}  // namespace dictlog::store
