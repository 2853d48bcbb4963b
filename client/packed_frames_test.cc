// UnpackFrames: a packed MultiGetFrames response read back as the per-result form (ids
// from the request, magic numbers restored, errors at their indexes), and every
// response whose counts, indexes or sizes do not add up refused DATA_LOSS, including
// each truncation and single-byte change of a serialized response (no crash, and
// nothing decoded from outside a record's own bytes).
#include "client/packed_frames.h"

#include <zstd.h>

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "client/frame_decoder.h"
#include "gtest/gtest.h"

namespace dictlog::client {
namespace {

using absl::StatusCode;

const std::vector<std::string> kIds = {"web/1", "web/2", "db/7", "nope", "web/3", "db/9"};

// A standard zstd frame of `payload` (no dictionary, content size present).
std::string Frame(const std::string& payload) {
  std::string frame(ZSTD_compressBound(payload.size()), '\0');
  const size_t n = ZSTD_compress(frame.data(), frame.size(), payload.data(), payload.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  frame.resize(n);
  return frame;
}

std::string Line(int i) {
  return absl::StrCat("2026-11-25 03:", i, " INFO web request served in ", i * 7, " ms");
}

void AddRecord(v1::PackedFrames* packed, uint32_t source, const std::string& bytes) {
  packed->mutable_data()->append(bytes);
  packed->add_sizes(static_cast<uint32_t>(bytes.size()));
  packed->add_source_indexes(source);
}

// kIds answered: web/1, web/2, web/3 frames of Line(1..3) (dictionary 0), db/7 a
// payload, "nope" INVALID_ARGUMENT, db/9 NOT_FOUND.
v1::PackedFrames Packed() {
  v1::PackedFrames packed;
  v1::PackedSource* web = packed.add_sources();
  web->set_category("web");
  v1::PackedSource* db = packed.add_sources();
  db->set_category("db");
  db->set_payload(true);
  AddRecord(&packed, 0, Frame(Line(1)).substr(4));
  AddRecord(&packed, 0, Frame(Line(2)).substr(4));
  AddRecord(&packed, 1, "db line 7");
  AddRecord(&packed, 0, Frame(Line(3)).substr(4));
  v1::PackedError* bad = packed.add_errors();
  bad->set_index(3);
  bad->mutable_error()->set_code(static_cast<int>(StatusCode::kInvalidArgument));
  bad->mutable_error()->set_message("malformed id 'nope'");
  v1::PackedError* missing = packed.add_errors();
  missing->set_index(5);
  missing->mutable_error()->set_code(static_cast<int>(StatusCode::kNotFound));
  missing->mutable_error()->set_message("no record db/9");
  return packed;
}

TEST(PackedFramesTest, AFrameCarriesItsSourcesDictionaryAndCheck) {
  v1::PackedFrames packed;
  v1::PackedSource* web = packed.add_sources();
  web->set_category("web");
  web->set_dictionary_id(40000);
  web->set_dictionary_check(0x9e3779b9);
  AddRecord(&packed, 0, "frame body");
  const std::vector<std::string> ids = {"web/1"};
  auto results = UnpackFrames(ids, packed);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_TRUE((*results)[0].ok());
  EXPECT_EQ((*results)[0]->dictionary_id(), 40000u);
  EXPECT_EQ((*results)[0]->dictionary_check(), 0x9e3779b9u);
}

TEST(PackedFramesTest, ResultsAreThePerResultFormsInRequestOrder) {
  auto results = UnpackFrames(kIds, Packed());
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), kIds.size());
  const std::map<size_t, int> lines = {{0, 1}, {1, 2}, {4, 3}};
  for (const auto& [i, line] : lines) {
    const absl::StatusOr<v1::RecordFrame>& r = (*results)[i];
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->id(), kIds[i]);
    EXPECT_EQ(r->category(), "web");
    EXPECT_EQ(r->dictionary_id(), 0u);
    EXPECT_EQ(r->frame(), Frame(Line(line)));  // Magic number restored.
    EXPECT_EQ(*DecodeFrame(r->frame(), nullptr), Line(line));
  }
  ASSERT_TRUE((*results)[2].ok());
  EXPECT_EQ((*results)[2]->id(), "db/7");
  EXPECT_EQ((*results)[2]->category(), "db");
  EXPECT_EQ((*results)[2]->payload(), "db line 7");
  EXPECT_EQ((*results)[3].status(), absl::InvalidArgumentError("malformed id 'nope'"));
  EXPECT_EQ((*results)[5].status(), absl::NotFoundError("no record db/9"));
}

TEST(PackedFramesTest, AnEmptyRequestHasAnEmptyAnswer) {
  auto results = UnpackFrames({}, v1::PackedFrames());
  ASSERT_TRUE(results.ok());
  EXPECT_TRUE(results->empty());
}

TEST(PackedFramesTest, CountsIndexesAndSizesThatDoNotAddUpAreDataLoss) {
  std::vector<std::pair<std::string, std::function<void(v1::PackedFrames*)>>> cases = {
      {"a size too large", [](auto* p) { p->set_sizes(0, p->sizes(0) + 1); }},
      {"a size too small", [](auto* p) { p->set_sizes(3, p->sizes(3) - 1); }},
      {"a byte too many", [](auto* p) { p->mutable_data()->push_back('x'); }},
      {"a size missing", [](auto* p) { p->mutable_sizes()->RemoveLast(); }},
      {"a source missing", [](auto* p) { p->mutable_source_indexes()->RemoveLast(); }},
      {"a source index out of range", [](auto* p) { p->set_source_indexes(1, 2); }},
      {"an error missing", [](auto* p) { p->mutable_errors()->RemoveLast(); }},
      {"an error index out of range", [](auto* p) { p->mutable_errors(1)->set_index(6); }},
      {"error indexes out of order", [](auto* p) { p->mutable_errors(0)->set_index(5); }},
      {"an OK error", [](auto* p) { p->mutable_errors(0)->mutable_error()->set_code(0); }},
      {"an unknown code", [](auto* p) { p->mutable_errors(0)->mutable_error()->set_code(17); }},
      {"a payload with a dictionary", [](auto* p) { p->mutable_sources(1)->set_dictionary_id(9); }},
      {"sizes whose 32-bit sum wraps to the data's",
       [](auto* p) {
         const uint32_t d = p->sizes(1) + 1;
         p->set_sizes(0, p->sizes(0) + d);
         p->set_sizes(1, p->sizes(1) - d);  // 0xffffffff
       }},
  };
  for (auto& [what, change] : cases) {
    v1::PackedFrames packed = Packed();
    change(&packed);
    EXPECT_EQ(UnpackFrames(kIds, packed).status().code(), StatusCode::kDataLoss) << what;
  }
  // One id fewer or more than the response answers.
  EXPECT_EQ(UnpackFrames(absl::MakeSpan(kIds).subspan(1), Packed()).status().code(),
            StatusCode::kDataLoss);
  std::vector<std::string> more = kIds;
  more.push_back("web/4");
  EXPECT_EQ(UnpackFrames(more, Packed()).status().code(), StatusCode::kDataLoss);
}

enum class Outcome { kUnparsed, kRefused, kUnpacked };

// What the client makes of a response arriving as `bytes`: gRPC refuses what does not
// parse; UnpackFrames refuses DATA_LOSS or returns results within the response's bytes,
// each frame decoding to a payload or failing DATA_LOSS.
Outcome Check(const std::string& bytes) {
  v1::PackedFrames packed;
  if (!packed.ParseFromString(bytes)) return Outcome::kUnparsed;
  auto results = UnpackFrames(kIds, packed);
  if (!results.ok()) {
    EXPECT_EQ(results.status().code(), StatusCode::kDataLoss) << results.status();
    return Outcome::kRefused;
  }
  EXPECT_EQ(results->size(), kIds.size());
  size_t bytes_used = 0;
  for (const auto& r : *results) {
    if (!r.ok()) continue;
    if (r->content_case() == v1::RecordFrame::kPayload) {
      bytes_used += r->payload().size();
      continue;
    }
    bytes_used += r->frame().size() - 4;
    auto payload = DecodeFrame(r->frame(), nullptr);
    if (!payload.ok()) {
      EXPECT_EQ(payload.status().code(), StatusCode::kDataLoss);
    }
  }
  EXPECT_EQ(bytes_used, packed.data().size());
  return Outcome::kUnpacked;
}

TEST(PackedFramesTest, TruncatedAndAlteredResponsesAreRefusedOrStayInBounds) {
  const std::string wire = Packed().SerializeAsString();
  std::map<Outcome, int> truncated;
  for (size_t n = 0; n < wire.size(); ++n) ++truncated[Check(wire.substr(0, n))];
  // Every truncation loses something the counts need (the last error at least).
  EXPECT_EQ(truncated[Outcome::kUnpacked], 0);
  EXPECT_GT(truncated[Outcome::kRefused], 5);
  std::map<Outcome, int> altered;
  for (size_t i = 0; i < wire.size(); ++i) {
    for (int x : {0x01, 0x80, 0xff}) {
      std::string bytes = wire;
      bytes[i] = static_cast<char>(bytes[i] ^ x);
      ++altered[Check(bytes)];
    }
  }
  EXPECT_GT(altered[Outcome::kRefused], 10);
  EXPECT_GT(altered[Outcome::kUnpacked], 100);  // Bytes inside frames.
}

}  // namespace
}  // namespace dictlog::client
