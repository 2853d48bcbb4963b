// LogEngine::MultiGetFrames and ScanFrames: MultiGet's and Scan's reads (the same id
// resolution, response budget and per-id errors) without decoding, for clients that
// decode frames themselves (docs/api.md "MultiGetFrames"). Records a client cannot
// decode alone (block entries: their frame holds other records; records stored raw)
// and pools the caller's policy refuses frames of are decoded here, as MultiGet would,
// and returned as payloads.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/engine/log_engine.h"
#include "server/pool/names.h"

namespace dictlog::engine {
namespace {

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
  std::vector<absl::StatusOr<v1::RecordFrame>> results;
  results.reserve(std::min(ids.size(), options_.max_multiget_ids));
  PoolFramePolicy allowed(this, frames_for);
  RETURN_IF_ERROR(ReadInChunks(
      ids, interrupt, [&](absl::Span<const std::string> chunk, block::ByteBudget* budget) {
        MultiGetFramesChunk(chunk, allowed, budget, &results);
      }));
  return results;
}

void LogEngine::MultiGetFramesChunk(
    absl::Span<const std::string> ids, PoolFramePolicy& allowed, block::ByteBudget* budget,
    std::vector<absl::StatusOr<v1::RecordFrame>>* all) const {
  const ChunkValues read = ReadChunk(ids, *budget);
  absl::Span<absl::StatusOr<v1::RecordFrame>> results = AppendErrors(read.errors, all);
  std::vector<pool::Pool*> pools;
  pools.reserve(read.found.size());
  for (size_t j : read.found) pools.push_back(read.chunk.pools[j].get());
  std::vector<absl::StatusOr<v1::RecordFrame>> frames(read.found.size());
  const size_t refused = FramesOrPayloads(pools, read.found_refs, read.encoded, read.indexed_from,
                                          read.read_at, allowed, budget,
                                          absl::MakeSpan(frames));
  size_t exhausted_from = read.cut;
  for (size_t k = 0; k < read.found.size(); ++k) {
    const size_t i = read.chunk.positions[read.found[k]];
    if (k == refused) {
      exhausted_from = i;
      break;
    }
    results[i] = std::move(frames[k]);
  }
  ExhaustFrom(exhausted_from, budget, results);
}

absl::Status LogEngine::ScanFrames(
    const ScanSpec& spec, const FramePolicy& frames_for,
    const std::function<absl::Status(std::vector<v1::RecordFrame>)>& sink,
    const Interrupt& interrupt) const {
  PoolFramePolicy allowed(this, frames_for);
  auto emit = [&](pool::Pool& pool, absl::Span<const store::RecordRef> refs,
                  absl::Span<const absl::string_view> values,
                  uint64_t read_at) -> absl::StatusOr<size_t> {
    block::ByteBudget budget(kScanChunkBytes);
    const std::vector<pool::Pool*> pools(refs.size(), &pool);
    std::vector<absl::StatusOr<v1::RecordFrame>> frames(refs.size());
    const size_t answered = FramesOrPayloads(pools, refs, values, {}, read_at, allowed,
                                             &budget, absl::MakeSpan(frames));
    std::vector<v1::RecordFrame> out;
    out.reserve(answered);
    for (size_t k = 0; k < answered; ++k) {
      RETURN_IF_ERROR(frames[k].status());  // As Scan: a record that fails ends it.
      out.push_back(*std::move(frames[k]));
    }
    if (answered > 0) RETURN_IF_ERROR(sink(std::move(out)));
    return answered;
  };
  return ScanChunks(spec, emit, interrupt);
}

bool LogEngine::PoolFramePolicy::Allows(const pool::Pool& pool) {
  if (!frames_for_) return true;
  auto [it, added] = allowed_.try_emplace(&pool, false);
  if (added) it->second = frames_for_(engine_->CategoriesOfPool(pool));
  return it->second;
}

size_t LogEngine::FramesOrPayloads(absl::Span<pool::Pool* const> pools,
                                   absl::Span<const store::RecordRef> refs,
                                   absl::Span<const absl::string_view> values,
                                   absl::Span<const uint64_t> indexed_from,
                                   uint64_t read_at, PoolFramePolicy& allowed,
                                   block::ByteBudget* budget,
                                   absl::Span<absl::StatusOr<v1::RecordFrame>> out) const {
  std::vector<size_t> pending;  // Records the server decodes, in order.
  size_t refused = values.size();
  // Decodes the pending records (they take from the budget before any later frame);
  // false once one does not fit.
  auto flush = [&] {
    std::vector<store::RecordRef> pending_refs;
    std::vector<absl::string_view> encoded;
    std::vector<uint64_t> pending_from;  // Absent records that may be in indexed blocks.
    for (size_t k : pending) {
      pending_refs.push_back(refs[k]);
      encoded.push_back(values[k]);
      pending_from.push_back(indexed_from.empty() ? 0 : indexed_from[k]);
    }
    std::vector<absl::StatusOr<codec::DecodedRecord>> decoded =
        DecodeRead(pending_refs, encoded, read_at, budget, pending_from);
    for (size_t p = 0; p < pending.size(); ++p) {
      const size_t k = pending[p];
      if (absl::IsResourceExhausted(decoded[p].status())) {
        refused = k;
        return false;
      }
      pools[k]->CountReads(1);
      if (!decoded[p].ok() && refs[k].seq < pools[k]->retained_from()) {
        out[k] = MissingRecord(*pools[k], refs[k].seq);  // Its block went as it was read.
        continue;
      }
      out[k] = PayloadFrame(ToRecord(*pools[k], refs[k].seq, std::move(decoded[p])));
    }
    pending.clear();
    return true;
  };
  for (size_t k = 0; k < values.size(); ++k) {
    if (!indexed_from.empty() && indexed_from[k] != 0) {
      pending.push_back(k);  // Sealed into an indexed block: decoded here.
      continue;
    }
    absl::StatusOr<codec::RecordView> view = codec::ParseRecord(values[k]);
    if (!view.ok() || view->encoding != codec::Encoding::kZstdFrame ||
        !allowed.Allows(*pools[k])) {
      pending.push_back(k);  // Decoding reports a malformed record as MultiGet does.
      continue;
    }
    if (!flush()) return refused;
    if (!budget->Take(view->content_size)) return k;
    pools[k]->CountReads(1);
    out[k] = FrameOf(*pools[k], refs[k].seq, *view, values[k]);
  }
  flush();
  return refused;
}

absl::StatusOr<v1::RecordFrame> LogEngine::FrameOf(const pool::Pool& pool, uint64_t seq,
                                                   const codec::RecordView& view,
                                                   absl::string_view value) const {
  v1::RecordFrame frame;
  ASSIGN_OR_RETURN(*frame.mutable_category(), pool.CategoryName(view.category_index));
  frame.set_id(pool::FormatRecordId(pool.name(), seq));
  ASSIGN_OR_RETURN(*frame.mutable_frame(), codec::StandardFrame(value));
  frame.set_dictionary_id(view.dictionary_id);
  return frame;
}

}  // namespace dictlog::engine
