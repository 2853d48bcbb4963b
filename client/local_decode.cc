// Client::MultiGet and Scan with ReadOptions::decode_locally, and MultiGetFrames: the
// server sends stored frames, the client fetches each dictionary once by id (and
// again if a frame names the id with another content check) into its DdictCache and
// decodes on the calling thread (frame_decoder.h). Errors read as the
// server's would ("record <id>: ...").
#include "absl/strings/str_cat.h"
#include "client/ask_again.h"
#include "client/by_partition.h"
#include "client/client.h"
#include "client/grpc_status.h"
#include "common/status_macros.h"

namespace dictlog::client {
namespace {

using Ddicts = absl::flat_hash_map<uint32_t, std::shared_ptr<const Ddict>>;

bool NeedsDictionary(const absl::StatusOr<v1::RecordFrame>& frame) {
  return frame.ok() && frame->content_case() == v1::RecordFrame::kFrame &&
         frame->dictionary_id() != 0;
}

// The record MultiGet would return for `frame`: decoded with the dictionary it names
// (a null entry in `ddicts`: gc deleted it).
absl::StatusOr<v1::Record> Decoded(v1::RecordFrame frame, const Ddicts& ddicts) {
  v1::Record record;
  record.set_id(std::move(*frame.mutable_id()));
  record.set_category(std::move(*frame.mutable_category()));
  if (frame.content_case() == v1::RecordFrame::kPayload) {
    record.set_payload(std::move(*frame.mutable_payload()));
    return record;
  }
  const Ddict* ddict = nullptr;
  if (frame.dictionary_id() != 0) {
    auto it = ddicts.find(frame.dictionary_id());
    ddict = it == ddicts.end() ? nullptr : it->second.get();
    if (ddict == nullptr) {
      return absl::DataLossError(absl::StrCat(
          "record ", record.id(), ": stored frame names unknown dictionary id ",
          frame.dictionary_id(), " (or one the server now has with other content)"));
    }
  }
  absl::StatusOr<std::string> payload = DecodeFrame(frame.frame(), ddict);
  if (!payload.ok()) {
    return absl::Status(payload.status().code(),
                        absl::StrCat("record ", record.id(), ": ", payload.status().message()));
  }
  record.set_payload(*std::move(payload));
  return record;
}

}  // namespace

absl::StatusOr<std::vector<absl::StatusOr<v1::RecordFrame>>> Client::MultiGetFrames(
    absl::Span<const std::string> ids, const ReadOptions& options) const {
  ASSIGN_OR_RETURN(std::shared_ptr<const ShardTable> table, RoutingTable());
  return ByPartition<v1::RecordFrame>(
      ids, *table, [&](absl::Span<const std::string> part, int64_t partition) {
        return AskAgain<v1::RecordFrame>(part, [&](absl::Span<const std::string> some) {
          return MultiGetFramesOnce(some, options.packed, partition);
        });
      });
}

absl::StatusOr<Ddicts> Client::DdictsOf(
    absl::Span<const absl::StatusOr<v1::RecordFrame>> frames) const {
  Ddicts ddicts;
  for (const absl::StatusOr<v1::RecordFrame>& frame : frames) {
    if (!NeedsDictionary(frame) || ddicts.contains(frame->dictionary_id())) continue;
    const uint32_t id = frame->dictionary_id();
    const uint32_t check = frame->dictionary_check();
    std::shared_ptr<const Ddict> ddict = ddicts_->Find(id, check);
    if (ddict == nullptr) {
      v1::GetDictionaryRequest request;
      request.set_id(id);
      absl::StatusOr<v1::GetDictionaryResponse> fetched = GetDictionary(request);
      if (absl::IsNotFound(fetched.status())) {
        ddicts[id] = nullptr;  // Deleted by gc since the frame was read.
        continue;
      }
      RETURN_IF_ERROR(fetched.status());
      absl::StatusOr<std::shared_ptr<const Ddict>> built = ddicts_->Insert(id, fetched->content());
      if (!built.ok()) {
        return absl::DataLossError(
            absl::StrCat("dictionary ", id, " from the server: ", built.status().message()));
      }
      ddict = *std::move(built);
      if (check != 0 && ddict->check() != check) {
        // The server's dictionary `id` is no longer the one the frame was read with
        // (the store was restored meanwhile, or the reads went to another store):
        // read the records again, as for a deleted one.
        ddicts[id] = nullptr;
        continue;
      }
    }
    ddicts[id] = std::move(ddict);
  }
  return ddicts;
}

absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> Client::MultiGetDecodingLocally(
    absl::Span<const std::string> ids, bool packed) const {
  ReadOptions options;
  options.packed = packed;
  ASSIGN_OR_RETURN(std::vector<absl::StatusOr<v1::RecordFrame>> frames,
                   MultiGetFrames(ids, options));
  return DecodeLocally(std::move(frames));
}

absl::StatusOr<std::vector<absl::StatusOr<v1::Record>>> Client::DecodeLocally(
    std::vector<absl::StatusOr<v1::RecordFrame>> frames) const {
  ASSIGN_OR_RETURN(Ddicts ddicts, DdictsOf(frames));
  // gc deletes only dictionaries no record references: a frame naming a deleted one
  // was re-encoded after it was read. Read those records again, once.
  std::vector<size_t> stale;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (NeedsDictionary(frames[i]) && ddicts[frames[i]->dictionary_id()] == nullptr) {
      stale.push_back(i);
    }
  }
  if (!stale.empty()) {
    std::vector<std::string> again;
    for (size_t i : stale) again.push_back(frames[i]->id());
    ASSIGN_OR_RETURN(std::vector<absl::StatusOr<v1::RecordFrame>> fresh, MultiGetFrames(again));
    if (fresh.size() != stale.size()) return absl::InternalError("MultiGetFrames result count");
    ASSIGN_OR_RETURN(Ddicts more, DdictsOf(fresh));
    for (auto& [id, ddict] : more) {
      if (ddict != nullptr || !ddicts.contains(id)) ddicts[id] = std::move(ddict);
    }
    for (size_t k = 0; k < stale.size(); ++k) frames[stale[k]] = std::move(fresh[k]);
  }
  std::vector<absl::StatusOr<v1::Record>> results;
  results.reserve(frames.size());
  for (absl::StatusOr<v1::RecordFrame>& frame : frames) {
    if (!frame.ok()) {
      results.emplace_back(frame.status());
    } else {
      results.push_back(Decoded(*std::move(frame), ddicts));
    }
  }
  return results;
}

}  // namespace dictlog::client
