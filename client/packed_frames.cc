#include "client/packed_frames.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace dictlog::client {
namespace {

constexpr absl::string_view kZstdMagic("\x28\xb5\x2f\xfd", 4);

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupt packed MultiGetFrames response: ", what));
}

// Checks that the response's counts, indexes and sizes add up for `ids` ids.
absl::Status CheckShape(size_t ids, const v1::PackedFrames& packed) {
  if (static_cast<size_t>(packed.errors_size()) > ids) return Corrupt("more errors than ids");
  int64_t previous = -1;
  for (const v1::PackedError& error : packed.errors()) {
    if (error.index() >= ids || static_cast<int64_t>(error.index()) <= previous) {
      return Corrupt("error indexes out of range or order");
    }
    previous = error.index();
    if (error.error().code() <= 0 || error.error().code() > 16) {
      return Corrupt(absl::StrCat("error code ", error.error().code()));
    }
  }
  const size_t records = ids - packed.errors_size();
  if (static_cast<size_t>(packed.sizes_size()) != records ||
      static_cast<size_t>(packed.source_indexes_size()) != records) {
    return Corrupt(absl::StrCat(records, " records but ", packed.sizes_size(), " sizes and ",
                                packed.source_indexes_size(), " sources"));
  }
  uint64_t bytes = 0;
  for (uint32_t size : packed.sizes()) bytes += size;
  if (bytes != packed.data().size()) return Corrupt("sizes do not add up to the data");
  for (uint32_t source : packed.source_indexes()) {
    if (source >= static_cast<uint32_t>(packed.sources_size())) {
      return Corrupt("source index out of range");
    }
  }
  for (const v1::PackedSource& source : packed.sources()) {
    if (source.payload() && source.dictionary_id() != 0) {
      return Corrupt("a payload source names a dictionary");
    }
  }
  return absl::OkStatus();
}

v1::RecordFrame RecordOf(const std::string& id, const v1::PackedSource& source,
                         absl::string_view bytes) {
  v1::RecordFrame record;
  record.set_id(id);
  record.set_category(source.category());
  if (source.payload()) {
    record.set_payload(std::string(bytes));
  } else {
    record.set_frame(absl::StrCat(kZstdMagic, bytes));
    record.set_dictionary_id(source.dictionary_id());
    record.set_dictionary_check(source.dictionary_check());
  }
  return record;
}

}  // namespace

absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> UnpackFrames(
    absl::Span<const std::string> ids, const v1::PackedFrames& packed) {
  if (absl::Status shape = CheckShape(ids.size(), packed); !shape.ok()) return shape;
  std::vector<absl::StatusOr<v1::RecordFrame>> results;
  results.reserve(ids.size());
  const absl::string_view data = packed.data();
  size_t offset = 0;
  int error = 0;
  int record = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (error < packed.errors_size() && packed.errors(error).index() == i) {
      const v1::RecordError& e = packed.errors(error++).error();
      results.emplace_back(absl::Status(static_cast<absl::StatusCode>(e.code()), e.message()));
      continue;
    }
    const uint32_t size = packed.sizes(record);
    const v1::PackedSource& source = packed.sources(packed.source_indexes(record++));
    results.emplace_back(RecordOf(ids[i], source, data.substr(offset, size)));
    offset += size;
  }
  return results;
}

}  // namespace dictlog::client
