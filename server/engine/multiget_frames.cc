// LogEngine::MultiGetFrames and ScanFrames: MultiGet's and Scan's reads (the same id
// resolution, response budget and per-id errors) without decoding, for clients that
// decode frames themselves (docs/api.md "MultiGetFrames"). Records a client cannot
// decode alone (block entries: their frame holds other records; records stored raw)
// and pools the caller's policy refuses frames of are decoded here, as MultiGet would,
// and returned as payloads. MultiGetFramesPacked answers the same in packed form
// (v1::PackedFrames), appending each frame straight from its stored value.
#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/engine/log_engine.h"
#include "server/engine/packed_writer.h"
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

// FramesOrPayloads' results as v1::RecordFrame results: out[k].
class LogEngine::RecordFrameSink : public FrameSink {
 public:
  RecordFrameSink(const LogEngine& engine, absl::Span<absl::StatusOr<v1::RecordFrame>> out)
      : engine_(engine), out_(out) {}
  void Frame(size_t k, const pool::Pool& pool, uint64_t seq, const codec::RecordView& view,
             absl::string_view value) override {
    out_[k] = engine_.FrameOf(pool, seq, view, value, Check(view.dictionary_id));
  }
  void Payload(size_t k, const pool::Pool& pool, uint64_t seq,
               codec::DecodedRecord decoded) override {
    out_[k] = PayloadFrame(engine_.ToRecord(pool, seq, std::move(decoded)));
  }
  void Error(size_t k, absl::Status error) override { out_[k] = std::move(error); }

 private:
  // The content check of dictionary `id` (0: none), remembered for the next frame:
  // a call's frames mostly name few dictionaries.
  uint32_t Check(uint32_t id) {
    if (id == 0) return 0;
    if (id != checked_id_) {
      checked_id_ = id;
      check_ = engine_.manager_->ContentCheck(id);
    }
    return check_;
  }

  const LogEngine& engine_;
  absl::Span<absl::StatusOr<v1::RecordFrame>> out_;
  uint32_t checked_id_ = 0;
  uint32_t check_ = 0;
};

// FramesOrPayloads' results packed into one v1::PackedFrames, chunk by chunk: each
// chunk's results are held (a frame as a view into its stored value, which must live
// until Pack) and then packed in request order. Sources are looked up by pool,
// category index, dictionary and kind: a category's name is copied once per call.
class LogEngine::PackedSink : public FrameSink {
 public:
  PackedSink(const LogEngine& engine, v1::PackedFrames* out) : engine_(engine), out_(out) {}

  // Prepares for a chunk of `n` stored values.
  void StartChunk(size_t n) {
    held_.clear();
    held_.resize(n);
  }
  // The call's index of the chunk's first id.
  size_t base() const { return base_; }
  void EndChunk(size_t ids) { base_ += ids; }
  void Frame(size_t k, const pool::Pool& pool, uint64_t seq, const codec::RecordView& view,
             absl::string_view value) override {
    Hold(k, pool, view.category_index, view.dictionary_id, false);
    absl::StatusOr<codec::FrameParts> parts = codec::SplitFrame(view);
    if (!parts.ok()) {
      held_[k].error = parts.status();
      return;
    }
    held_[k].head = *parts;
    held_[k].bytes = parts->body;
  }
  void Payload(size_t k, const pool::Pool& pool, uint64_t seq,
               codec::DecodedRecord decoded) override {
    Hold(k, pool, decoded.category_index, 0, true);
    held_[k].payload = std::move(decoded.payload);
    held_[k].bytes = held_[k].payload;
  }
  void Error(size_t k, absl::Status error) override { held_[k].error = std::move(error); }

  // Packs id `index` (of the call) as held result k.
  void Pack(size_t index, size_t k) {
    Held& held = held_[k];
    if (!held.error.ok()) return PackError(index, held.error);
    out_.AddResult(held.source, held.head.header_view(), held.bytes);
  }
  void PackError(size_t index, const absl::Status& status) { out_.AddError(index, status); }

 private:
  struct Held {
    absl::Status error;  // OK (no allocation) unless the record failed.
    uint32_t source = 0;
    codec::FrameParts head;   // A short frame's header (header_view(); else empty).
    absl::string_view bytes;  // The frame in its stored value, or `payload`.
    std::string payload;
  };
  using Key = std::tuple<const pool::Pool*, uint32_t, uint32_t, bool>;

  void Hold(size_t k, const pool::Pool& pool, uint32_t category_index, uint32_t dictionary_id,
            bool payload) {
    const Key key{&pool, category_index, dictionary_id, payload};
    auto it = sources_.find(key);
    if (it == sources_.end()) {
      absl::StatusOr<std::string> category = pool.CategoryName(category_index);
      if (!category.ok()) {
        held_[k].error = category.status();  // As MultiGetFrames' result.
        return;
      }
      const uint32_t check =
          dictionary_id == 0 ? 0 : engine_.manager_->ContentCheck(dictionary_id);
      it = sources_.emplace(key, out_.AddSource(*std::move(category), dictionary_id, check,
                                                payload))
               .first;
    }
    held_[k].source = it->second;
  }

  const LogEngine& engine_;
  PackedWriter out_;
  size_t base_ = 0;
  std::vector<Held> held_;
  absl::flat_hash_map<Key, uint32_t> sources_;
};

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
  for (size_t j : read.found) pools.push_back(read.chunk.pools[j]);
  std::vector<absl::StatusOr<v1::RecordFrame>> frames(read.found.size());
  RecordFrameSink sink(*this, absl::MakeSpan(frames));
  const size_t refused = FramesOrPayloads(pools, read.found_refs, read.encoded, read.indexed_from,
                                          read.read_at, allowed, budget, sink);
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

absl::Status LogEngine::MultiGetFramesPacked(absl::Span<const std::string> ids,
                                             const FramePolicy& frames_for,
                                             const Interrupt& interrupt,
                                             v1::PackedFrames* out) const {
  PoolFramePolicy allowed(this, frames_for);
  PackedSink sink(*this, out);
  return ReadInChunks(
      ids, interrupt, [&](absl::Span<const std::string> chunk, block::ByteBudget* budget) {
        MultiGetFramesPackedChunk(chunk, allowed, budget, sink);
      });
}

void LogEngine::MultiGetFramesPackedChunk(absl::Span<const std::string> ids,
                                          PoolFramePolicy& allowed, block::ByteBudget* budget,
                                          PackedSink& out) const {
  const ChunkValues read = ReadChunk(ids, *budget);
  std::vector<pool::Pool*> pools;
  pools.reserve(read.found.size());
  for (size_t j : read.found) pools.push_back(read.chunk.pools[j]);
  out.StartChunk(read.found.size());
  const size_t refused = FramesOrPayloads(pools, read.found_refs, read.encoded, read.indexed_from,
                                          read.read_at, allowed, budget, out);
  size_t exhausted_from = read.cut;
  if (refused < read.found.size()) {
    exhausted_from = std::min(exhausted_from, read.chunk.positions[read.found[refused]]);
  }
  if (exhausted_from < ids.size()) budget->Exhaust();
  size_t k = 0;  // Into read.found.
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i >= exhausted_from) {
      out.PackError(out.base() + i, budget->ExhaustedError());
    } else if (!read.errors[i].ok()) {
      out.PackError(out.base() + i, read.errors[i]);
    } else {
      out.Pack(out.base() + i, k++);
    }
  }
  out.EndChunk(ids.size());
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
    RecordFrameSink into(*this, absl::MakeSpan(frames));
    const size_t answered =
        FramesOrPayloads(pools, refs, values, {}, read_at, allowed, &budget, into);
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
                                   block::ByteBudget* budget, FrameSink& out) const {
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
        out.Error(k, MissingRecord(*pools[k], refs[k].seq));  // Its block went as it was read.
      } else if (!decoded[p].ok()) {
        out.Error(k, ToRecord(*pools[k], refs[k].seq, decoded[p].status()).status());
      } else {
        out.Payload(k, *pools[k], refs[k].seq, *std::move(decoded[p]));
      }
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
    if (!view.ok() || !view->framed() ||
        !allowed.Allows(*pools[k])) {
      pending.push_back(k);  // Decoding reports a malformed record as MultiGet does.
      continue;
    }
    if (!flush()) return refused;
    if (!budget->Take(view->content_size)) return k;
    pools[k]->CountReads(1);
    out.Frame(k, *pools[k], refs[k].seq, *view, values[k]);
  }
  flush();
  return refused;
}

absl::StatusOr<v1::RecordFrame> LogEngine::FrameOf(const pool::Pool& pool, uint64_t seq,
                                                   const codec::RecordView& view,
                                                   absl::string_view value,
                                                   uint32_t dictionary_check) const {
  v1::RecordFrame frame;
  ASSIGN_OR_RETURN(*frame.mutable_category(), pool.CategoryName(view.category_index));
  frame.set_id(pool::FormatRecordId(pool.name(), seq));
  ASSIGN_OR_RETURN(*frame.mutable_frame(), codec::StandardFrame(value));
  frame.set_dictionary_id(view.dictionary_id);
  frame.set_dictionary_check(dictionary_check);
  return frame;
}

}  // namespace dictlog::engine
