// Fuzz target: dictionary bytes as an operator imports them (`dictlog dict import`):
// first the codec's readers (dictionary_format.h, dictionary.h), then the Admin
// ImportDictionary handler with activation over a real LogEngine (engine_fixture.h).
//
// Properties: a dictionary ParseDictionary accepts serializes and parses back to the
// same parts; one the codec accepts for both decoding and encoding round-trips log
// lines; ImportDictionary fails only with INVALID_ARGUMENT or NOT_FOUND, and once it
// has activated a dictionary, records appended with it read back unchanged.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/dictionary.h"
#include "codec/dictionary_format.h"
#include "codec/record_codec.h"
#include "tests/fuzz/engine_fixture.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_data.h"

namespace dictlog::fuzz {
namespace {

bool SameTable(const codec::FseTable& a, const codec::FseTable& b) {
  return a.accuracy_log == b.accuracy_log && a.counts == b.counts;
}

void CheckFormat(absl::string_view bytes) {
  const absl::StatusOr<codec::DictionaryParts> parts = codec::ParseDictionary(bytes);
  if (!parts.ok()) {
    FUZZ_REQUIRE(parts.status().code() == absl::StatusCode::kDataLoss,
                 parts.status().ToString());
    FUZZ_REQUIRE(!codec::IsCompactDictionary(bytes), "compact but unparsable");
    return;
  }
  const absl::StatusOr<std::string> serialized = codec::SerializeDictionary(*parts);
  FUZZ_REQUIRE(serialized.ok(), serialized.status().ToString());
  const auto again = codec::ParseDictionary(*serialized);
  FUZZ_REQUIRE(again.ok(), again.status().ToString());
  FUZZ_REQUIRE(again->id == parts->id && again->huffman_tree == parts->huffman_tree &&
                   SameTable(again->offsets, parts->offsets) &&
                   SameTable(again->match_lengths, parts->match_lengths) &&
                   SameTable(again->literal_lengths, parts->literal_lengths) &&
                   again->repeat_offsets == parts->repeat_offsets &&
                   again->content == parts->content,
               "parse(serialize(parts)) != parts");
}

void CheckCodec(absl::string_view bytes) {
  auto decoder = codec::DecoderDictionary::Create(std::string(bytes));
  auto encoder = codec::EncoderDictionary::Create(bytes, 3);
  if (decoder.ok()) {
    const absl::StatusOr<uint32_t> id = codec::DictionaryIdOf(bytes);
    FUZZ_REQUIRE(id.ok() && *id == (*decoder)->id(), "DictionaryIdOf disagrees");
  }
  if (!decoder.ok() || !encoder.ok()) return;
  codec::MapDictionaryLookup lookup;
  lookup.Add(*decoder);
  codec::EncodeOptions options;
  options.dictionary = encoder->get();
  for (const std::string& line : DataLines("Apache")) {
    std::string value;
    FUZZ_REQUIRE(codec::EncodeRecord(line, options, &value).ok(), "encode");
    const auto decoded = codec::DecodeRecord(value, lookup);
    FUZZ_REQUIRE(decoded.ok() && decoded->payload == line,
                 decoded.ok() ? "payload differs" : decoded.status().ToString());
    break;  // One line keeps the input cheap.
  }
}

void CheckImport(EngineFixture& f, absl::string_view bytes) {
  grpc::ServerContext context;
  v1::ImportDictionaryRequest request;
  request.set_pool("HDFS");
  request.set_content(std::string(bytes));
  request.set_activate(true);
  v1::DictionaryInfo info;
  const grpc::Status status = f.admin().ImportDictionary(&context, &request, &info);
  if (!status.ok()) {
    FUZZ_REQUIRE(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
                 absl::StrCat(status.error_code(), " ", status.error_message()));
    return;
  }
  FUZZ_REQUIRE(info.active(), "imported with activate but not active");
  const std::string line = DataLines("HDFS")[0];
  v1::AppendRequest append;
  append.set_category("HDFS");
  append.set_payload(line);
  v1::AppendResponse appended;
  const grpc::Status append_status = f.log_store().Append(&context, &append, &appended);
  FUZZ_REQUIRE(append_status.ok(), append_status.error_message());
  v1::GetRequest get;
  get.set_id(appended.id());
  v1::GetResponse got;
  const grpc::Status get_status = f.log_store().Get(&context, &get, &got);
  FUZZ_REQUIRE(get_status.ok(), get_status.error_message());
  FUZZ_REQUIRE(got.record().payload() == line, "record altered by imported dictionary");
}

}  // namespace
}  // namespace dictlog::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dictlog::fuzz;  // NOLINT: entry point
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckFormat(bytes);
  CheckCodec(bytes);
  static EngineFixture& fixture = *new EngineFixture(/*runs_per_engine=*/200);
  fixture.BeforeInput();
  CheckImport(fixture, bytes);
  return 0;
}
