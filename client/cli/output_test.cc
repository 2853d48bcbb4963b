#include "client/cli/output.h"

#include "gtest/gtest.h"

namespace dictlog::cli {
namespace {

TEST(OutputTest, JsonStringEscapes) {
  EXPECT_EQ(JsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST(OutputTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));          // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_FALSE(IsValidUtf8("\xff"));
}

TEST(OutputTest, RecordJsonFallsBackToBase64ForBinaryPayloads) {
  v1::Record record;
  record.set_id("HDFS/1");
  record.set_category("HDFS");
  record.set_payload("ok line");
  EXPECT_EQ(RecordJson(record),
            R"({"id":"HDFS/1","category":"HDFS","payload":"ok line"})");
  record.set_payload(std::string("\xff\x00", 2));
  EXPECT_EQ(RecordJson(record),
            R"({"id":"HDFS/1","category":"HDFS","payload_base64":"/wA="})");
}

TEST(OutputTest, RecordJsonHasTheAppendTimeOnlyWhenTheRecordHasOne) {
  v1::Record record;
  record.set_id("HDFS/1");
  record.set_category("HDFS");
  record.set_payload("ok line");
  record.set_append_time_unix_ms(1764000000123);
  EXPECT_EQ(RecordJson(record),
            R"({"id":"HDFS/1","category":"HDFS","append_time_unix_ms":1764000000123,)"
            R"("payload":"ok line"})");
}

// Issue 17: an import's answer says what became of the file's id; listings do not.
TEST(OutputTest, DictionaryJsonHasTheImportFieldsOnlyForAnImport) {
  v1::DictionaryInfo info;
  info.set_id(32770);
  EXPECT_EQ(DictionaryJson(info).find("import"), std::string::npos);
  info.set_imported_id(36337);
  info.set_import_note("the file's dictionary id 36337 is stored as 32770: why");
  const std::string json = DictionaryJson(info);
  EXPECT_NE(json.find(R"(,"imported_id":36337,"import_existing":false,"import_note":)"
                      R"("the file's dictionary id 36337 is stored as 32770: why"})"),
            std::string::npos)
      << json;
}

TEST(OutputTest, PoolsTableHasRatiosAndTotal) {
  v1::PoolInfo a, b;
  a.set_name("HDFS");
  a.mutable_stats()->set_records(2);
  a.mutable_stats()->set_raw_bytes(300);
  a.mutable_stats()->set_stored_bytes(100);
  b.set_name("Linux");
  b.set_active_dictionary_id(32768);
  b.mutable_stats()->set_records(1);
  b.mutable_stats()->set_raw_bytes(100);
  b.mutable_stats()->set_stored_bytes(100);
  const std::string table = PoolsTable({a, b});
  EXPECT_NE(table.find("HDFS "), std::string::npos);
  EXPECT_NE(table.find("  3.00  record      -"), std::string::npos) << table;
  EXPECT_NE(table.find("32768"), std::string::npos);
  EXPECT_NE(table.find("TOTAL"), std::string::npos);
  EXPECT_NE(table.find("  2.00"), std::string::npos);  // 400 raw / 200 stored.
  EXPECT_NE(PoolJson(a).find("\"ratio\":3.0000"), std::string::npos);
}

// A pool whose newest records were unreadable at open is named under the table, and
// its JSON carries why; a pool without damage adds no line.
TEST(OutputTest, PoolsDamagedAtOpenAreNamed) {
  v1::PoolInfo damaged, fine;
  damaged.set_name("web");
  damaged.set_damaged_at_open("DATA_LOSS: finding the last record: Corruption: block checksum");
  fine.set_name("db");
  const std::string table = PoolsTable({damaged, fine});
  EXPECT_NE(table.find("warning: pool 'web' was found damaged when the store opened "
                       "(DATA_LOSS: finding the last record: Corruption: block checksum); "
                       "reads of the damaged records are DATA_LOSS"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("pool 'db'"), std::string::npos) << table;
  EXPECT_EQ(PoolsTable({fine}).find("warning"), std::string::npos);
  EXPECT_NE(PoolJson(damaged).find("\"damaged_at_open\":\"DATA_LOSS: finding the last "
                                   "record: Corruption: block checksum\"}"),
            std::string::npos)
      << PoolJson(damaged);
  EXPECT_NE(PoolJson(fine).find("\"damaged_at_open\":\"\"}"), std::string::npos);
}

TEST(OutputTest, PoolsShowTheDictionaryModes) {
  v1::PoolInfo pool;
  pool.set_name("Linux");
  pool.set_active_dictionary_id(32768);
  pool.set_active_dictionary_mode(v1::DICTIONARY_MODE_COMPACT);
  pool.set_next_dictionary_mode(v1::DICTIONARY_MODE_FULL);
  pool.mutable_options()->set_dictionary_mode(v1::DICTIONARY_MODE_AUTO);
  EXPECT_NE(PoolsTable({pool}).find("32768 (compact)"), std::string::npos);
  const std::string json = PoolJson(pool);
  EXPECT_NE(json.find("\"active_dictionary_mode\":\"compact\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"next_dictionary_mode\":\"full\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"dictionary_mode\":\"auto\""), std::string::npos) << json;
}

TEST(OutputTest, PoolsAndDictionariesShowTheDriftSignal) {
  v1::PoolInfo pool;
  pool.set_name("web");
  EXPECT_NE(PoolsTable({pool}).find("      - -"), std::string::npos) << PoolsTable({pool});
  pool.set_drift_recent_ratio(2.5);
  pool.set_drift_activation_ratio(3.125);
  pool.set_drift_retrains(1);
  pool.mutable_options()->set_drift_threshold_percent(10);
  // Too few appends to judge (after an activation or a restart): not "+0.0%".
  EXPECT_NE(PoolsTable({pool}).find(" filling -"), std::string::npos) << PoolsTable({pool});
  pool.set_drift_window_full(true);
  pool.set_drift_degraded_percent(20);
  pool.set_drift_reactivations(2);
  EXPECT_NE(PoolsTable({pool}).find(" +20.0% -"), std::string::npos) << PoolsTable({pool});
  const std::string json = PoolJson(pool);
  EXPECT_NE(json.find("\"drift_recent_ratio\":2.5000,\"drift_activation_ratio\":3.1250,"
                      "\"drift_degraded_percent\":20.00,\"drift_retrains\":1,"
                      "\"drift_threshold_percent\":10,\"auto_upkeep\":false"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"drift_window_full\":true,\"drift_reactivations\":2,"),
            std::string::npos)
      << json;
  v1::DictionaryInfo dict;
  dict.set_id(32768);
  dict.set_recent_ratio(2.5);
  EXPECT_NE(DictionariesTable({dict}).find("  2.500 filling"), std::string::npos)
      << DictionariesTable({dict});
  dict.set_recent_window_full(true);
  dict.set_degraded_percent(20);
  EXPECT_NE(DictionariesTable({dict}).find("  2.500  +20.0%"), std::string::npos)
      << DictionariesTable({dict});
  EXPECT_NE(DictionaryJson(dict).find("\"recent_ratio\":2.5000"), std::string::npos);
  dict.set_content_check(4027213185u);  // Printed unsigned: above 2^31.
  EXPECT_NE(DictionaryJson(dict).find("\"content_check\":4027213185,"), std::string::npos);
  EXPECT_NE(DictionaryJson(dict).find("\"recent_window_full\":true"), std::string::npos);
}

TEST(OutputTest, PoolsShowTheStorageMode) {
  v1::PoolInfo pool;
  pool.set_name("Linux");
  pool.mutable_options()->set_storage_mode(v1::STORAGE_MODE_BLOCK);
  pool.mutable_options()->set_block_bytes(2048);
  EXPECT_NE(PoolsTable({pool}).find("block 2048"), std::string::npos) << PoolsTable({pool});
  const std::string json = PoolJson(pool);
  EXPECT_NE(json.find("\"storage_mode\":\"block\",\"block_bytes\":2048"),
            std::string::npos)
      << json;
}

TEST(OutputTest, RecompressLineListsTheRecordsLeftUnreadable) {
  v1::RecompressStatus status;
  status.set_pool("app");
  status.set_state(v1::RecompressStatus::DONE);
  status.set_records_done(300);
  status.set_records_total(300);
  status.set_records_rewritten(298);
  status.set_bytes_before(30000);
  status.set_bytes_after(10000);
  status.set_target_dictionary_id(1001);
  const std::string clean = RecompressLine(status);
  EXPECT_EQ(clean,
            "recompress app: DONE 300/300 records, 298 re-encoded, 30.0 KB -> 10.0 KB, "
            "dictionary 1001");
  status.set_unreadable(2);
  status.add_unreadable_seqs(100);
  status.add_unreadable_seqs(200);
  EXPECT_EQ(RecompressLine(status),
            clean + ", 2 unreadable (DATA_LOSS), left as stored: app/100 app/200");
  status.set_unreadable(40);  // More than the status keeps.
  EXPECT_EQ(RecompressLine(status),
            clean + ", 40 unreadable (DATA_LOSS), left as stored: app/100 app/200 ...");
}

TEST(OutputTest, RecompressLineSaysHowManyRecordsKeptTheirFrame) {
  v1::RecompressStatus status;
  status.set_pool("app");
  status.set_state(v1::RecompressStatus::DONE);
  status.set_records_done(300);
  status.set_records_total(300);
  status.set_records_rewritten(100);
  status.set_records_kept(200);
  status.set_bytes_before(10000);
  status.set_bytes_after(5000);
  status.set_target_dictionary_id(1001);
  EXPECT_EQ(RecompressLine(status),
            "recompress app: DONE 300/300 records, 100 re-encoded, 10.0 KB -> 5.0 KB, "
            "dictionary 1001, 200 kept (an earlier dictionary stores them smaller)");
}

}  // namespace
}  // namespace dictlog::cli
