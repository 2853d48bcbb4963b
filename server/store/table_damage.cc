#include "server/store/table_damage.h"

#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/file_damage.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/table_properties.h"

namespace dictlog::store {

absl::Status DamageNewestRecordsBlock(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".sst") continue;
    rocksdb::SstFileReader reader{rocksdb::Options()};
    const rocksdb::Status opened = reader.Open(entry.path().string());
    if (!opened.ok()) {
      return absl::InternalError(absl::StrCat(entry.path().string(), ": ", opened.ToString()));
    }
    const std::shared_ptr<const rocksdb::TableProperties> properties =
        reader.GetTableProperties();
    if (properties->column_family_name != "records") continue;
    FlipByte(entry.path().string(), properties->data_size - 10);  // Before its trailer.
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("no records table in ", dir));
}

}  // namespace dictlog::store
