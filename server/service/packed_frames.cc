#include "server/service/packed_frames.h"

#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/strip.h"
#include "absl/strings/string_view.h"
#include "server/engine/packed_writer.h"

namespace dictlog::service {
namespace {

constexpr absl::string_view kZstdMagic("\x28\xb5\x2f\xfd", 4);

// The (category, dictionary id, payload) table of one response.
class Sources {
 public:
  explicit Sources(engine::PackedWriter* out) : out_(out) {}

  // The index of the source of `record`, added if new.
  uint32_t IndexOf(const v1::RecordFrame& record) {
    const bool payload = record.content_case() == v1::RecordFrame::kPayload;
    const uint32_t dictionary_id = payload ? 0 : record.dictionary_id();
    auto [it, added] = index_.try_emplace(Key(record.category(), dictionary_id, payload), 0);
    if (added) {
      it->second = out_->AddSource(record.category(), dictionary_id,
                                   record.dictionary_check(), payload);
    }
    return it->second;
  }

 private:
  using Key = std::tuple<std::string, uint32_t, bool>;
  engine::PackedWriter* const out_;
  absl::flat_hash_map<Key, uint32_t> index_;
};

}  // namespace

void PackFrames(absl::Span<const absl::StatusOr<v1::RecordFrame>> results,
                v1::PackedFrames* out) {
  engine::PackedWriter writer(out);
  Sources sources(&writer);
  size_t bytes = 0;
  for (const absl::StatusOr<v1::RecordFrame>& result : results) {
    if (result.ok()) bytes += result->frame().size() + result->payload().size();
  }
  writer.Reserve(bytes);
  for (size_t i = 0; i < results.size(); ++i) {
    const absl::StatusOr<v1::RecordFrame>& result = results[i];
    if (!result.ok()) {
      writer.AddError(i, result.status());
      continue;
    }
    absl::string_view content = result->payload();
    if (result->content_case() == v1::RecordFrame::kFrame) {
      content = result->frame();
      if (!absl::ConsumePrefix(&content, kZstdMagic)) {
        writer.AddError(i, absl::InternalError("frame without a zstd magic number"));
        continue;
      }
    }
    writer.AddResult(sources.IndexOf(*result), content);
  }
}

}  // namespace dictlog::service
