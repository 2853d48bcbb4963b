// PackFrames: results in request order become one data field of frames without their
// magic number (or payloads), a size and a source index per record, a source table of
// distinct (category, dictionary, kind) and the errors apart with their indexes.
#include "server/service/packed_frames.h"

#include "gtest/gtest.h"

namespace dictlog::service {
namespace {

const std::string kMagic("\x28\xb5\x2f\xfd", 4);

v1::RecordFrame FrameRecord(const std::string& category, const std::string& body,
                            uint32_t dictionary_id) {
  v1::RecordFrame record;
  record.set_id("ignored/1");
  record.set_category(category);
  record.set_frame(kMagic + body);
  record.set_dictionary_id(dictionary_id);
  if (dictionary_id != 0) record.set_dictionary_check(dictionary_id + 7);
  return record;
}

v1::RecordFrame PayloadRecord(const std::string& category, const std::string& payload) {
  v1::RecordFrame record;
  record.set_id("ignored/2");
  record.set_category(category);
  record.set_payload(payload);
  return record;
}

TEST(PackedFramesTest, PacksRecordsInOrderWithASourceTableAndErrorsApart) {
  std::vector<absl::StatusOr<v1::RecordFrame>> results = {
      FrameRecord("web", "AAA", 40000),
      absl::NotFoundError("no record web/9"),
      FrameRecord("web", "BB", 40000),
      PayloadRecord("web", "a payload"),
      FrameRecord("web", "C", 40001),
      FrameRecord("db", "DDDD", 40000),
      absl::InvalidArgumentError("malformed id"),
  };
  v1::PackedFrames packed;
  PackFrames(results, &packed);
  EXPECT_EQ(packed.data(), "AAABBa payloadCDDDD");
  EXPECT_EQ(std::vector<uint32_t>(packed.sizes().begin(), packed.sizes().end()),
            (std::vector<uint32_t>{3, 2, 9, 1, 4}));
  EXPECT_EQ(std::vector<uint32_t>(packed.source_indexes().begin(),
                                  packed.source_indexes().end()),
            (std::vector<uint32_t>{0, 0, 1, 2, 3}));
  ASSERT_EQ(packed.sources_size(), 4);
  EXPECT_EQ(packed.sources(0).category(), "web");
  EXPECT_EQ(packed.sources(0).dictionary_id(), 40000u);
  EXPECT_FALSE(packed.sources(0).payload());
  EXPECT_TRUE(packed.sources(1).payload());
  EXPECT_EQ(packed.sources(1).dictionary_id(), 0u);
  EXPECT_EQ(packed.sources(2).dictionary_id(), 40001u);
  // Each source carries its dictionary's content check.
  EXPECT_EQ(packed.sources(0).dictionary_check(), 40007u);
  EXPECT_EQ(packed.sources(1).dictionary_check(), 0u);
  EXPECT_EQ(packed.sources(2).dictionary_check(), 40008u);
  EXPECT_EQ(packed.sources(3).category(), "db");
  ASSERT_EQ(packed.errors_size(), 2);
  EXPECT_EQ(packed.errors(0).index(), 1u);
  EXPECT_EQ(packed.errors(0).error().code(), static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_EQ(packed.errors(0).error().message(), "no record web/9");
  EXPECT_EQ(packed.errors(1).index(), 6u);
}

TEST(PackedFramesTest, AFrameWithoutItsMagicNumberIsAnInternalErrorOfItsId) {
  v1::RecordFrame bad = FrameRecord("web", "x", 0);
  bad.set_frame("not a frame");
  v1::PackedFrames packed;
  PackFrames({FrameRecord("web", "ok", 0), bad}, &packed);
  EXPECT_EQ(packed.data(), "ok");
  ASSERT_EQ(packed.errors_size(), 1);
  EXPECT_EQ(packed.errors(0).index(), 1u);
  EXPECT_EQ(packed.errors(0).error().code(), static_cast<int>(absl::StatusCode::kInternal));
}

}  // namespace
}  // namespace dictlog::service
