// LogEngine::MultiGetFrames: MultiGet's reads (the same id resolution, response budget
// and per-id errors) without decoding, for clients that decode frames themselves
// (docs/api.md "MultiGetFrames"). Records a client cannot decode alone (block entries:
// their frame holds other records; records stored raw) and pools the caller's policy
// refuses frames of are decoded here, as MultiGet would, and returned as payloads.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/engine/log_engine.h"
#include "server/pool/names.h"

namespace dictlog::engine {
namespace {

constexpr uint32_t kZstdMagic = 0xFD2FB528;

// The standard zstd frame of a stored (magicless) frame body.
std::string WithMagic(absl::string_view body) {
  std::string frame;
  frame.reserve(4 + body.size());
  for (int i = 0; i < 4; ++i) frame.push_back(static_cast<char>((kZstdMagic >> (8 * i)) & 0xff));
  frame.append(body.data(), body.size());
  return frame;
}

// A server-decoded record as a MultiGetFrames result.
absl::StatusOr<v1::RecordFrame> PayloadFrame(absl::StatusOr<v1::Record> record) {
  if (!record.ok()) return record.status();
  v1::RecordFrame out;
  out.set_id(std::move(*record->mutable_id()));
  out.set_category(std::move(*record->mutable_category()));
  out.set_payload(std::move(*record->mutable_payload()));
  return out;
}

}  // namespace

absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> LogEngine::MultiGetFrames(
    absl::Span<const std::string> ids, const FramePolicy& frames_for,
    const Interrupt& interrupt) const {
  if (ids.size() > options_.max_multiget_ids) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MultiGet of ", ids.size(), " ids exceeds the limit of ", options_.max_multiget_ids));
  }
  std::vector<absl::StatusOr<v1::RecordFrame>> results;
  results.reserve(ids.size());
  block::ByteBudget budget(options_.max_response_bytes);
  for (size_t start = 0; start < ids.size(); start += kReadChunkIds) {
    if (budget.exhausted()) {
      results.resize(ids.size(), budget.ExhaustedError());
      break;
    }
    if (interrupt) RETURN_IF_ERROR(interrupt());
    MultiGetFramesChunk(ids.subspan(start, kReadChunkIds), frames_for, &budget, &results);
  }
  return results;
}

void LogEngine::MultiGetFramesChunk(
    absl::Span<const std::string> ids, const FramePolicy& frames_for,
    block::ByteBudget* budget, std::vector<absl::StatusOr<v1::RecordFrame>>* all) const {
  std::vector<absl::StatusOr<v1::Record>> resolved(ids.size(), absl::UnknownError("not read"));
  const ChunkRefs chunk = ResolveIds(ids, absl::MakeSpan(resolved));
  const size_t base = all->size();
  for (absl::StatusOr<v1::Record>& r : resolved) all->push_back(r.status());
  absl::Span<absl::StatusOr<v1::RecordFrame>> results = absl::MakeSpan(*all).subspan(base);
  const uint64_t read_at = manager_->RetiredGeneration();
  const std::vector<absl::StatusOr<std::string>> values =
      ReadWithinBudget(chunk.distinct, *budget);
  absl::flat_hash_map<const pool::Pool*, bool> frames_allowed;
  auto allowed = [&](const pool::Pool& pool) {
    if (!frames_for) return true;
    auto [it, added] = frames_allowed.try_emplace(&pool, false);
    if (added) it->second = frames_for(CategoriesOfPool(pool));
    return it->second;
  };
  size_t exhausted_from = ids.size();
  std::vector<size_t> pending;  // Into chunk.refs: records the server decodes, in order.
  // Decodes the pending records (they take from the budget before any later frame);
  // false once one does not fit.
  auto flush = [&] {
    std::vector<store::RecordRef> refs;
    std::vector<absl::string_view> encoded;
    std::vector<uint64_t> indexed_from;  // Absent records that may be in indexed blocks.
    for (size_t j : pending) {
      refs.push_back(chunk.refs[j]);
      const absl::StatusOr<std::string>& value = values[chunk.distinct_of[j]];
      encoded.push_back(value.ok() ? absl::string_view(*value) : "");
      indexed_from.push_back(value.ok() ? 0 : IndexedFrom(*chunk.pools[j], refs.back().seq));
    }
    std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
        DecodeRead(refs, encoded, read_at, budget, indexed_from);
    for (size_t k = 0; k < pending.size(); ++k) {
      const size_t j = pending[k];
      if (absl::IsResourceExhausted(decoded[k].status())) {
        exhausted_from = chunk.positions[j];
        return false;
      }
      chunk.pools[j]->CountReads(1);
      results[chunk.positions[j]] =
          PayloadFrame(ToRecord(*chunk.pools[j], chunk.refs[j].seq, std::move(decoded[k])));
    }
    pending.clear();
    return true;
  };
  for (size_t j = 0; j < chunk.refs.size(); ++j) {
    const size_t i = chunk.positions[j];
    if (chunk.distinct_of[j] >= values.size()) {  // Not read: past the budget.
      if (flush()) exhausted_from = i;
      break;
    }
    const absl::StatusOr<std::string>& value = values[chunk.distinct_of[j]];
    if (absl::IsNotFound(value.status())) {
      if (IndexedFrom(*chunk.pools[j], chunk.refs[j].seq) != 0) {
        pending.push_back(j);  // Sealed into an indexed block: decoded here.
      } else {
        results[i] = absl::NotFoundError(absl::StrCat("no record ", ids[i]));
      }
      continue;
    }
    if (!value.ok()) {
      results[i] = value.status();
      continue;
    }
    absl::StatusOr<codec::RecordView> view = codec::ParseRecord(*value);
    if (!view.ok() || view->encoding != codec::Encoding::kZstdFrame ||
        !allowed(*chunk.pools[j])) {
      pending.push_back(j);  // Decoding reports a malformed record as MultiGet does.
      continue;
    }
    if (!flush()) break;
    if (!budget->Take(view->content_size)) {
      exhausted_from = i;
      break;
    }
    chunk.pools[j]->CountReads(1);
    results[i] = FrameOf(*chunk.pools[j], chunk.refs[j].seq, *view);
  }
  if (exhausted_from == ids.size()) flush();
  if (exhausted_from < ids.size()) budget->Exhaust();
  for (size_t i = exhausted_from; i < ids.size(); ++i) results[i] = budget->ExhaustedError();
}

absl::StatusOr<v1::RecordFrame> LogEngine::FrameOf(const pool::Pool& pool, uint64_t seq,
                                                   const codec::RecordView& view) const {
  v1::RecordFrame frame;
  ASSIGN_OR_RETURN(*frame.mutable_category(), pool.CategoryName(view.category_index));
  frame.set_id(pool::FormatRecordId(pool.name(), seq));
  frame.set_frame(WithMagic(view.body));
  frame.set_dictionary_id(view.dictionary_id);
  return frame;
}

}  // namespace dictlog::engine
