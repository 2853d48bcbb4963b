// PackedWriter: sources get indexes in the order added (a payload source names no
// dictionary), results append their bytes with a size and a source index each, and
// errors keep their id's index and status apart from the data.
#include "server/engine/packed_writer.h"

#include <vector>

#include "gtest/gtest.h"

namespace dictlog::engine {
namespace {

TEST(PackedWriterTest, WritesSourcesResultsAndErrors) {
  v1::PackedFrames packed;
  PackedWriter writer(&packed);
  EXPECT_EQ(writer.AddSource("web", 40000, 77, false), 0u);
  EXPECT_EQ(writer.AddSource("db", 40000, 77, true), 1u);
  writer.Reserve(6);
  writer.AddResult(0, "AAA");
  writer.AddError(1, absl::NotFoundError("no record web/9"));
  writer.AddResult(1, "pay");
  writer.AddResult(0, "");
  EXPECT_EQ(packed.data(), "AAApay");
  EXPECT_EQ(std::vector<uint32_t>(packed.sizes().begin(), packed.sizes().end()),
            (std::vector<uint32_t>{3, 3, 0}));
  EXPECT_EQ(std::vector<uint32_t>(packed.source_indexes().begin(),
                                  packed.source_indexes().end()),
            (std::vector<uint32_t>{0, 1, 0}));
  ASSERT_EQ(packed.sources_size(), 2);
  EXPECT_EQ(packed.sources(0).category(), "web");
  EXPECT_EQ(packed.sources(0).dictionary_id(), 40000u);
  EXPECT_EQ(packed.sources(0).dictionary_check(), 77u);
  EXPECT_FALSE(packed.sources(0).payload());
  EXPECT_EQ(packed.sources(1).category(), "db");
  EXPECT_EQ(packed.sources(1).dictionary_id(), 0u);  // Payloads name no dictionary.
  EXPECT_EQ(packed.sources(1).dictionary_check(), 0u);
  EXPECT_TRUE(packed.sources(1).payload());
  ASSERT_EQ(packed.errors_size(), 1);
  EXPECT_EQ(packed.errors(0).index(), 1u);
  EXPECT_EQ(packed.errors(0).error().code(), static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_EQ(packed.errors(0).error().message(), "no record web/9");
}

}  // namespace
}  // namespace dictlog::engine
