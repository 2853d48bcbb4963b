#include "server/service/packed_frames.h"

#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/strip.h"
#include "absl/strings/string_view.h"

namespace dictlog::service {
namespace {

constexpr absl::string_view kZstdMagic("\x28\xb5\x2f\xfd", 4);

// The (category, dictionary id, payload) table of one response.
class Sources {
 public:
  explicit Sources(v1::PackedFrames* out) : out_(out) {}

  // The index of the source of `record`, added if new.
  uint32_t IndexOf(const v1::RecordFrame& record) {
    const bool payload = record.content_case() == v1::RecordFrame::kPayload;
    const uint32_t dictionary_id = payload ? 0 : record.dictionary_id();
    auto [it, added] = index_.try_emplace(
        Key(record.category(), dictionary_id, payload), out_->sources_size());
    if (added) {
      v1::PackedSource* source = out_->add_sources();
      source->set_category(record.category());
      source->set_dictionary_id(dictionary_id);
      source->set_dictionary_check(payload ? 0 : record.dictionary_check());
      source->set_payload(payload);
    }
    return it->second;
  }

 private:
  using Key = std::tuple<std::string, uint32_t, bool>;
  v1::PackedFrames* const out_;
  absl::flat_hash_map<Key, uint32_t> index_;
};

void AddError(size_t index, const absl::Status& status, v1::PackedFrames* out) {
  v1::PackedError* error = out->add_errors();
  error->set_index(static_cast<uint32_t>(index));
  error->mutable_error()->set_code(static_cast<int>(status.code()));
  error->mutable_error()->set_message(std::string(status.message()));
}

}  // namespace

void PackFrames(absl::Span<const absl::StatusOr<v1::RecordFrame>> results,
                v1::PackedFrames* out) {
  Sources sources(out);
  std::string& data = *out->mutable_data();
  size_t bytes = 0;
  for (const absl::StatusOr<v1::RecordFrame>& result : results) {
    if (result.ok()) bytes += result->frame().size() + result->payload().size();
  }
  data.reserve(bytes);
  for (size_t i = 0; i < results.size(); ++i) {
    const absl::StatusOr<v1::RecordFrame>& result = results[i];
    if (!result.ok()) {
      AddError(i, result.status(), out);
      continue;
    }
    absl::string_view content = result->payload();
    if (result->content_case() == v1::RecordFrame::kFrame) {
      content = result->frame();
      if (!absl::ConsumePrefix(&content, kZstdMagic)) {
        AddError(i, absl::InternalError("frame without a zstd magic number"), out);
        continue;
      }
    }
    out->add_source_indexes(sources.IndexOf(*result));
    out->add_sizes(static_cast<uint32_t>(content.size()));
    data.append(content.data(), content.size());
  }
}

}  // namespace dictlog::service
