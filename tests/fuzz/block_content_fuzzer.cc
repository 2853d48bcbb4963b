// Fuzz target: block contents (block_format.h), the payload of a block-mode record.
//
// Properties: ParseBlockContent accepts exactly the encodings EncodeBlockContent
// makes (re-encoding what it parsed gives back the input) and fails only with
// DATA_LOSS; and any list of payloads (the input cut at '\n') survives
// EncodeBlockContent then ParseBlockContent unchanged.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "codec/block_format.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dictlog;  // NOLINT: entry point
  const absl::string_view content(reinterpret_cast<const char*>(data), size);
  const auto parsed = codec::ParseBlockContent(content);
  if (parsed.ok()) {
    FUZZ_REQUIRE(codec::EncodeBlockContent(*parsed) == content,
                 "parsed a content that does not re-encode to itself");
  } else {
    FUZZ_REQUIRE(parsed.status().code() == absl::StatusCode::kDataLoss,
                 parsed.status().ToString());
  }
  const std::vector<absl::string_view> payloads = absl::StrSplit(content, '\n');
  const std::string encoded = codec::EncodeBlockContent(payloads);
  const auto round_trip = codec::ParseBlockContent(encoded);
  FUZZ_REQUIRE(round_trip.ok(), round_trip.status().ToString());
  FUZZ_REQUIRE(*round_trip == payloads, "payloads changed by a round trip");
  return 0;
}
