#include "server/store/table_damage.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_damage.h"
#include "server/store/keys.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/table_properties.h"

namespace dictlog::store {

namespace {

// The table files in `dir`, oldest (smallest file number) first.
std::vector<std::string> Tables(const std::string& dir) {
  std::vector<std::string> tables;  // NNNNNN.sst: by name is by number.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".sst") tables.push_back(entry.path().string());
  }
  std::sort(tables.begin(), tables.end());
  return tables;
}

// Flips the byte at `offset(data_size)` of the first table in `tables` of `family`
// for which `pick(reader)` holds.
template <typename Pick, typename Offset>
absl::Status DamageFirst(const std::vector<std::string>& tables, const std::string& family,
                         Pick pick, Offset offset) {
  for (const std::string& table : tables) {
    rocksdb::SstFileReader reader{rocksdb::Options()};
    const rocksdb::Status opened = reader.Open(table);
    if (!opened.ok()) return absl::InternalError(absl::StrCat(table, ": ", opened.ToString()));
    const std::shared_ptr<const rocksdb::TableProperties> properties =
        reader.GetTableProperties();
    if (properties->column_family_name != family || !pick(reader)) continue;
    FlipByte(table, offset(properties->data_size));
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no such ", family, " table"));
}

bool Any(rocksdb::SstFileReader&) { return true; }

// Before the last block's trailer.
uint64_t InLastBlock(uint64_t data_size) { return data_size - 10; }

}  // namespace

absl::Status DamageNewestRecordsBlock(const std::string& dir) {
  return DamageFirst(Tables(dir), "records", Any, InLastBlock);
}

absl::Status DamageTableData(const std::string& dir, const std::string& family,
                             double where) {
  return DamageFirst(Tables(dir), family, Any, [where](uint64_t data_size) {
    return static_cast<uint64_t>(where * static_cast<double>(data_size));
  });
}

absl::Status DamageDictionaryAtTableEnd(const std::string& dir, uint32_t id) {
  std::vector<std::string> newest_first = Tables(dir);
  std::reverse(newest_first.begin(), newest_first.end());
  const std::string key = DictionaryKey(id);
  const auto ends_with_key = [&key](rocksdb::SstFileReader& reader) {
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(rocksdb::ReadOptions()));
    it->SeekToLast();
    return it->Valid() && it->key() == key;
  };
  return DamageFirst(newest_first, "dictionaries", ends_with_key, InLastBlock);
}

}  // namespace dictlog::store
