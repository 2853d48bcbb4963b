// Fuzz target: one stored record value (record_codec.h), decoded against the fixture
// dictionaries (full and compact; frames naming other ids must fail cleanly).
//
// Properties: DecodeRecord fails only with DATA_LOSS (FAILED_PRECONDITION for a block
// entry) and succeeds only on what ParseRecord accepts, with the declared content size
// and category. DecodeBatch, with every option, returns for the value exactly what
// DecodeRecord does (for a frame, where zstd's verdict on corrupt input depends on its
// context's history: DATA_LOSS or a payload of the declared size), and leaves the good
// records around it intact. StandardFrame of a decodable record is its frame with the
// magic number (of a raw record, a frame of it). A decoded payload is also parsed as a
// block content (what block mode does with it).
#include <zstd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/batch_decoder.h"
#include "codec/block_format.h"
#include "codec/record_codec.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_data.h"

namespace dictlog::fuzz {
namespace {

using codec::DecodedRecord;

// Two valid stored records (full and compact dictionary) and their payloads.
struct GoodRecords {
  std::vector<std::string> values;
  std::vector<std::string> payloads;
};

const GoodRecords& Good() {
  static const GoodRecords* good = [] {
    auto* g = new GoodRecords;
    for (const FixtureDictionary& fixture : kFixtureDictionaries) {
      if (fixture.id == kFixtureDictionaries[2].id) continue;
      const std::string line = DataLines(fixture.category)[0];
      auto dict = codec::EncoderDictionary::Create(ReadDataFile(fixture.file), 3);
      FUZZ_REQUIRE(dict.ok(), dict.status().ToString());
      codec::EncodeOptions options;
      options.dictionary = dict->get();
      std::string value;
      FUZZ_REQUIRE(codec::EncodeRecord(line, options, &value).ok(), fixture.file);
      g->values.push_back(value);
      g->payloads.push_back(line);
    }
    return g;
  }();
  return *good;
}

std::string Describe(const absl::StatusOr<DecodedRecord>& r) {
  if (!r.ok()) return r.status().ToString();
  return absl::StrCat("OK category ", r->category_index, " payload ", r->payload.size(),
                      " bytes");
}

bool SameResult(const absl::StatusOr<DecodedRecord>& a,
                const absl::StatusOr<DecodedRecord>& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) return a.status().code() == b.status().code();
  return a->payload == b->payload && a->category_index == b->category_index;
}

// Whether decoding `value` runs zstd over a frame: its result on a corrupt frame is
// then not unique. Record frames carry no checksum (RocksDB's protect them on disk),
// and zstd 1.5.4 detects some corruption only on a warm context (it picks another
// sequence decoder while a dictionary is cold), so the same mutated frame can decode
// to a wrong payload alone and fail in a batch: see crashes/record_decode/ and
// docs/reliability.md ("Fuzzing").
bool RunsZstd(const absl::StatusOr<codec::RecordView>& view) {
  return view.ok() && view->framed() &&
         (view->dictionary_id == 0 || FixtureDictionaries().Find(view->dictionary_id));
}

void CheckBatch(absl::string_view value, const absl::StatusOr<codec::RecordView>& view,
                const absl::StatusOr<DecodedRecord>& single) {
  const GoodRecords& good = Good();
  const std::vector<absl::string_view> batch = {good.values[0], value, good.values[1],
                                                value};
  for (int mode = 0; mode < 3; ++mode) {
    codec::BatchDecodeOptions options;
    options.group_by_dictionary = mode >= 1;
    options.prefetch_next = mode == 2;
    const auto results = codec::DecodeBatch(batch, FixtureDictionaries(), options);
    FUZZ_REQUIRE(results.size() == batch.size(), "batch result count");
    for (int i : {1, 3}) {
      const std::string what = absl::StrCat("mode ", mode, ": batch gives ",
                                            Describe(results[i]), ", DecodeRecord ",
                                            Describe(single));
      if (!RunsZstd(view)) {
        FUZZ_REQUIRE(SameResult(results[i], single), what);
      } else if (results[i].ok()) {
        FUZZ_REQUIRE(results[i]->payload.size() == view->content_size, what);
      } else {
        FUZZ_REQUIRE(results[i].status().code() == absl::StatusCode::kDataLoss, what);
      }
    }
    FUZZ_REQUIRE(results[0].ok() && results[0]->payload == good.payloads[0], "good record");
    FUZZ_REQUIRE(results[2].ok() && results[2]->payload == good.payloads[1], "good record");
  }
}

// StandardFrame: a stored frame with its magic number restored (so stock zstd reads
// exactly what we do); a raw record wrapped in a new frame that decodes to it.
void CheckStandardFrame(absl::string_view value, const codec::RecordView& view,
                        const DecodedRecord& decoded) {
  absl::StatusOr<std::string> frame = codec::StandardFrame(value);
  FUZZ_REQUIRE(frame.ok(), frame.status().ToString());
  if (view.framed()) {
    std::string scratch;
    FUZZ_REQUIRE(*frame == absl::StrCat("\x28\xb5\x2f\xfd", *codec::MagiclessFrame(view, &scratch)),
                 "StandardFrame is not the stored frame with its magic");
    return;
  }
  std::string out(decoded.payload.size() + 1, '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), frame->data(), frame->size());
  FUZZ_REQUIRE(!ZSTD_isError(n), ZSTD_isError(n) ? ZSTD_getErrorName(n) : "");
  out.resize(n);
  FUZZ_REQUIRE(out == decoded.payload, "StandardFrame decodes to another payload");
}

}  // namespace
}  // namespace dictlog::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dictlog;  // NOLINT: entry point
  const absl::string_view value(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<codec::RecordView> view = codec::ParseRecord(value);
  const absl::StatusOr<codec::DecodedRecord> decoded =
      codec::DecodeRecord(value, fuzz::FixtureDictionaries());
  if (!view.ok()) {
    FUZZ_REQUIRE(view.status().code() == absl::StatusCode::kDataLoss,
                 view.status().ToString());
    FUZZ_REQUIRE(!decoded.ok(), "decoded a record ParseRecord refused");
  }
  if (decoded.ok()) {
    FUZZ_REQUIRE(decoded->payload.size() == view->content_size, "content size");
    FUZZ_REQUIRE(decoded->category_index == view->category_index, "category index");
    FUZZ_REQUIRE(decoded->payload.size() <= codec::kMaxRecordBytes, "record limit");
    fuzz::CheckStandardFrame(value, *view, *decoded);
    (void)codec::ParseBlockContent(decoded->payload);
  } else {
    const absl::StatusCode code = decoded.status().code();
    FUZZ_REQUIRE(code == absl::StatusCode::kDataLoss ||
                     (code == absl::StatusCode::kFailedPrecondition && view.ok() &&
                      view->encoding == codec::Encoding::kBlockEntry),
                 decoded.status().ToString());
  }
  fuzz::CheckBatch(value, view, decoded);
  return 0;
}
