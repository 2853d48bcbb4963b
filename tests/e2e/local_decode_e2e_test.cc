// End to end, client-side decoding: the real dictlogd on 127.0.0.1 port 0; every line
// of the ten loghub files (record mode) and of one of them again in a block-mode pool,
// read in MultiGet(64) calls with server-side and with client-side decoding
// (ReadOptions::decode_locally, MultiGetFrames packed and per result), and scanned pool
// by pool both ways (Scan with frames): identical results, byte for byte and error for
// error, before and after a retrain, a re-compression and a dictionary gc. The packed
// MultiGetFrames answers exactly the per-result one.
#include <cstdlib>
#include <filesystem>

#include "absl/time/clock.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "tests/e2e/server_process.h"
#include "training/files.h"

namespace dictlog {
namespace {

std::map<std::string, std::vector<std::string>> LoadLoghub() {
  std::map<std::string, std::vector<std::string>> files;
  absl::StatusOr<std::vector<trainer::LogFile>> logs =
      trainer::ReadLogFiles(testing::RunfilePath("../loghub"));
  if (!logs.ok()) return files;
  for (trainer::LogFile& log : *logs) files[log.name] = std::move(log.lines);
  return files;
}

// A result as comparable bytes: the record, or the error's code and message.
// The record's bytes without its append time: MultiGetFrames (what local decoding
// reads) does not carry append times (docs/api.md), MultiGet does.
std::string Bytes(const absl::StatusOr<v1::Record>& result) {
  if (!result.ok()) return result.status().ToString();
  v1::Record record = *result;
  record.clear_append_time_unix_ms();
  return "record " + record.SerializeAsString();
}

// A MultiGetFrames result as comparable bytes.
std::string FrameBytes(const absl::StatusOr<v1::RecordFrame>& result) {
  if (!result.ok()) return result.status().ToString();
  return "frame " + result->SerializeAsString();
}

class LocalDecodeE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    files_ = LoadLoghub();
    ASSERT_EQ(files_.size(), 10u) << "expected the ten loghub samples";
    const std::string data_dir = std::string(std::getenv("TEST_TMPDIR")) + "/data";
    std::filesystem::remove_all(data_dir);
    server_ = std::make_unique<testing::ServerProcess>(
        testing::RunfilePath("server/daemon/dictlogd"), data_dir);
    absl::StatusOr<std::string> address = server_->Start();
    ASSERT_TRUE(address.ok()) << address.status();
    options_.server = *address;
    client_ = std::make_unique<client::Client>(options_);
  }

  void TearDown() override {
    if (server_ != nullptr) {
      EXPECT_TRUE(server_->Stop().ok());
    }
  }

  void Append(const std::string& category, const std::vector<std::string>& lines) {
    for (size_t start = 0; start < lines.size(); start += 500) {
      std::vector<v1::RecordToAppend> batch;
      for (size_t i = start; i < std::min(lines.size(), start + 500); ++i) {
        batch.emplace_back();
        batch.back().set_category(category);
        batch.back().set_payload(lines[i]);
      }
      auto ids = client_->AppendBatch(batch);
      ASSERT_TRUE(ids.ok()) << ids.status();
      ids_.insert(ids_.end(), ids->begin(), ids->end());
    }
  }

  // Every id (and a few bad ones), 64 a call, both ways, with a fresh client each
  // time (a cold dictionary cache) and with the long-lived one (a warm one); the
  // long-lived one also through per-result MultiGetFrames responses.
  void ExpectLocalEqualsServer() {
    std::vector<std::string> ids = ids_;
    ids.insert(ids.end(), {"bad", "HDFS/999999", "nopool/1", "HDFS/01"});
    client::Client fresh(options_);
    client::ReadOptions local;
    local.decode_locally = true;
    client::ReadOptions per_result = local;
    per_result.packed = false;
    size_t frames = 0;
    for (size_t start = 0; start < ids.size(); start += 64) {
      std::vector<std::string> some(ids.begin() + start,
                                    ids.begin() + std::min(ids.size(), start + 64));
      auto server = client_->MultiGet(some);
      auto warm = client_->MultiGet(some, local);
      auto cold = fresh.MultiGet(some, local);
      auto unpacked = client_->MultiGet(some, per_result);
      ASSERT_TRUE(server.ok() && warm.ok() && cold.ok() && unpacked.ok())
          << server.status() << warm.status() << unpacked.status();
      for (size_t k = 0; k < some.size(); ++k) {
        ASSERT_EQ(Bytes((*warm)[k]), Bytes((*server)[k])) << some[k];
        ASSERT_EQ(Bytes((*cold)[k]), Bytes((*server)[k])) << some[k];
        ASSERT_EQ(Bytes((*unpacked)[k]), Bytes((*server)[k])) << some[k];
      }
      // Frames are what travels (not payloads); packed, the very same frames. The
      // auto trainer may re-encode a record between two calls (pools whose first
      // dictionary came after their appends): a frame that differs must then equal
      // the packed form asked again after the per-result call.
      auto raw = client_->MultiGetFrames(some);
      auto raw_per_result = client_->MultiGetFrames(some, per_result);
      auto raw_after = client_->MultiGetFrames(some);
      ASSERT_TRUE(raw.ok() && raw_per_result.ok() && raw_after.ok()) << raw.status();
      ASSERT_EQ(raw->size(), raw_per_result->size());
      ASSERT_EQ(raw_after->size(), raw_per_result->size());
      for (size_t k = 0; k < some.size(); ++k) {
        const std::string unpacked_frame = FrameBytes((*raw_per_result)[k]);
        if (FrameBytes((*raw)[k]) != unpacked_frame) {
          ASSERT_EQ(FrameBytes((*raw_after)[k]), unpacked_frame) << some[k];
        }
        frames += (*raw)[k].ok() && (*raw)[k]->content_case() == v1::RecordFrame::kFrame;
      }
    }
    EXPECT_GT(frames, 0u);
    EXPECT_GT(client_->DictionaryCacheStats().entries, 0u);
  }

  // The records (or the error) a scan visits, as comparable bytes.
  std::vector<std::string> Scanned(const client::Client& client,
                                   const v1::ScanRequest& request, bool local) {
    std::vector<std::string> out;
    client::ReadOptions options;
    options.decode_locally = local;
    const absl::Status status = client.Scan(
        request,
        [&](const v1::Record& record) {
          out.push_back(Bytes(record));
          return absl::OkStatus();
        },
        options);
    out.push_back(status.ToString());
    return out;
  }

  // Every pool scanned whole, one category from an id with a limit, and a scan that
  // fails: the same records and errors both ways, cold and warm.
  void ExpectScanLocalEqualsServer() {
    auto pools = client_->ListPools();
    ASSERT_TRUE(pools.ok()) << pools.status();
    std::vector<v1::ScanRequest> requests;
    for (const v1::PoolInfo& pool : *pools) {
      requests.emplace_back();
      requests.back().set_pool(pool.name());
    }
    requests.emplace_back();
    requests.back().set_category("HDFS");
    requests.back().set_from_id("HDFS/100");
    requests.back().set_limit(700);
    requests.emplace_back();
    requests.back().set_pool("HDFS");
    requests.back().set_from_id("Spark/1");  // INVALID_ARGUMENT.
    client::Client fresh(options_);
    size_t records = 0;
    for (const v1::ScanRequest& request : requests) {
      const std::vector<std::string> server = Scanned(*client_, request, false);
      ASSERT_EQ(Scanned(*client_, request, true), server) << request.ShortDebugString();
      ASSERT_EQ(Scanned(fresh, request, true), server) << request.ShortDebugString();
      records += server.size() - 1;
    }
    EXPECT_GE(records, ids_.size() + 700);
    EXPECT_EQ(Scanned(*client_, requests.back(), true).back().substr(0, 16),
              "INVALID_ARGUMENT");
  }

  void WaitForRecompress(const std::string& pool) {
    v1::RecompressRequest request;
    request.set_pool(pool);
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      auto status = client_->GetRecompressStatus(request);
      ASSERT_TRUE(status.ok()) << status.status();
      if (status->state() == v1::RecompressStatus::DONE) return;
      ASSERT_NE(status->state(), v1::RecompressStatus::FAILED);
      absl::SleepFor(absl::Milliseconds(20));  // Polls the job's state (no event to wait on).
    }
    FAIL() << "re-compression of " << pool << " did not finish";
  }

  // Automatic training runs in the background: waits until some pool has activated a
  // dictionary and re-encoded its earlier records with it, so that dictionary frames
  // exist to be decoded locally. Returns that pool.
  std::string WaitForADictionaryInUse() {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      auto pools = client_->ListPools();
      EXPECT_TRUE(pools.ok()) << pools.status();
      if (!pools.ok()) return "";
      for (const v1::PoolInfo& pool : *pools) {
        if (pool.active_dictionary_id() != 0) {
          WaitForRecompress(pool.name());
          return pool.name();
        }
      }
      absl::SleepFor(absl::Milliseconds(20));  // Polls (no event to wait on).
    }
    ADD_FAILURE() << "no pool activated a dictionary";
    return "";
  }

  std::map<std::string, std::vector<std::string>> files_;
  std::vector<std::string> ids_;
  client::ClientOptions options_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(LocalDecodeE2eTest, EveryLoghubRecordDecodesLocallyAsOnTheServer) {
  v1::PoolOptions block;
  block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
  ASSERT_TRUE(client_->CreatePool("blocks", block).ok());
  for (const auto& [name, lines] : files_) Append(name, lines);
  Append("blocks", files_["HDFS"]);
  ASSERT_FALSE(WaitForADictionaryInUse().empty());
  ExpectLocalEqualsServer();
  ExpectScanLocalEqualsServer();

  // Retrain HDFS: old records keep the old dictionary, new ones get the new one.
  v1::TrainDictionaryRequest train;
  train.set_pool("HDFS");
  train.set_dictionary_bytes(8192);
  auto trained = client_->TrainDictionary(train);
  ASSERT_TRUE(trained.ok()) << trained.status();
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("HDFS");
  activate.set_id(trained->dictionary().id());
  ASSERT_TRUE(client_->ActivateDictionary(activate).ok());
  Append("HDFS", files_["HDFS"]);
  ExpectLocalEqualsServer();
  ExpectScanLocalEqualsServer();

  // Re-encode HDFS with the new dictionary, then gc the old one.
  v1::RecompressRequest recompress;
  recompress.set_pool("HDFS");
  ASSERT_TRUE(client_->Recompress(recompress).ok());
  WaitForRecompress("HDFS");
  auto deleted = client_->GcDictionaries({});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  ASSERT_FALSE(deleted->deleted().empty());
  ExpectLocalEqualsServer();
  ExpectScanLocalEqualsServer();
  // A dictionary gc deleted is refused cleanly.
  v1::GetDictionaryRequest gone;
  gone.set_id(deleted->deleted(0).id());
  EXPECT_EQ(client_->GetDictionary(gone).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dictlog
