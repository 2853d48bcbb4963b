// End to end: backups. The real dictlogd on 127.0.0.1 port 0 holds the ten loghub
// files (two pools in block mode, three with trained dictionaries, one of them in
// block mode); `Backup` runs while a writer keeps appending. A second dictlogd started
// on the copy returns every record acknowledged before the backup began byte-identical
// (and any later one it holds, too), and Verify finds nothing corrupt. A client that
// decodes locally and spans a restore decodes what the restored store holds, though
// that store gives again the dictionary id the live one gave after the backup.
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/time/clock.h"
#include "client/client.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "tests/e2e/server_process.h"
#include "training/files.h"

namespace dictlog {
namespace {

using IdPayload = std::pair<std::string, std::string>;

using Category = trainer::LogFile;  // A loghub file: its name and lines.

// Sorted by name; none if the samples cannot be read.
std::vector<Category> LoadLoghub() {
  absl::StatusOr<std::vector<Category>> logs =
      trainer::ReadLogFiles(testing::RunfilePath("../loghub"));
  return logs.ok() ? *std::move(logs) : std::vector<Category>();
}

client::Client ClientFor(const std::string& address) {
  client::ClientOptions options;
  options.server = address;
  return client::Client(options);
}

// Appends lines [start, start + count) of `category` in one batch; adds the acknowledged
// (id, payload) pairs to `acked`.
absl::Status AppendLines(const client::Client& client, const Category& category,
                         size_t start, size_t count, std::vector<IdPayload>* acked) {
  std::vector<v1::RecordToAppend> batch;
  for (size_t i = start; i < std::min(category.lines.size(), start + count); ++i) {
    batch.emplace_back();
    batch.back().set_category(category.name);
    batch.back().set_payload(category.lines[i]);
  }
  absl::StatusOr<std::vector<std::string>> ids = client.AppendBatch(batch);
  if (!ids.ok()) return ids.status();
  for (size_t i = 0; i < ids->size(); ++i) acked->emplace_back((*ids)[i], batch[i].payload());
  return absl::OkStatus();
}

// Appends loghub batches until `stop` (or 2,000 batches or 20 s), recording acks.
class Writer {
 public:
  Writer(const client::Client& client, const std::vector<Category>& categories)
      : thread_([this, client, &categories] { Run(client, categories); }) {}
  ~Writer() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  size_t batches() const { return batches_; }
  std::vector<IdPayload> Acked() {
    std::lock_guard<std::mutex> lock(mu_);
    return acked_;
  }
  absl::Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  void Run(const client::Client& client, const std::vector<Category>& categories) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    for (size_t n = 0; !stop_ && n < 2000 && absl::Now() < deadline; ++n) {
      const Category& category = categories[n % categories.size()];
      std::vector<IdPayload> acked;
      absl::Status s = AppendLines(client, category, (n * 50) % category.lines.size(), 50,
                                   &acked);
      std::lock_guard<std::mutex> lock(mu_);
      if (!s.ok()) {
        status_ = s;
        return;
      }
      acked_.insert(acked_.end(), acked.begin(), acked.end());
      ++batches_;
    }
  }

  std::atomic<bool> stop_{false};
  std::atomic<size_t> batches_{0};
  std::mutex mu_;
  std::vector<IdPayload> acked_;
  absl::Status status_;
  std::thread thread_;
};

class BackupE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    categories_ = LoadLoghub();
    ASSERT_EQ(categories_.size(), 10u) << "expected the ten loghub samples";
    work_ = std::string(std::getenv("TEST_TMPDIR")) + "/backup";
    std::filesystem::remove_all(work_);
    std::filesystem::create_directories(work_);
    work_ = std::filesystem::canonical(work_).string();  // As the server resolves it.
    root_flag_ = "--backup_root=" + work_;
  }

  // Block-mode pools Apache (with a dictionary) and Zookeeper; dictionaries for HDFS,
  // Spark and Apache; every loghub line appended once.
  void Load(const client::Client& client) {
    v1::PoolOptions block;
    block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
    block.set_block_bytes(2048);
    ASSERT_TRUE(client.CreatePool("Apache", block).ok());
    ASSERT_TRUE(client.CreatePool("Zookeeper", block).ok());
    for (const Category& category : categories_) {
      for (size_t start = 0; start < category.lines.size(); start += 500) {
        ASSERT_TRUE(AppendLines(client, category, start, 500, &loaded_).ok());
      }
    }
    for (const char* pool : {"HDFS", "Spark", "Apache"}) {
      v1::TrainDictionaryRequest train;
      train.set_pool(pool);
      train.set_activate(true);
      absl::StatusOr<v1::TrainDictionaryResponse> trained = client.TrainDictionary(train);
      ASSERT_TRUE(trained.ok()) << pool << ": " << trained.status();
      ASSERT_TRUE(trained->activated()) << pool;
    }
  }

  // Every pair must read back byte-identical from `client`, unless `may_be_missing`
  // and the record is absent. Returns how many were found.
  size_t CheckRecords(const client::Client& client, const std::vector<IdPayload>& records,
                      bool may_be_missing) {
    size_t found = 0;
    for (size_t start = 0; start < records.size(); start += 1000) {
      std::vector<std::string> ids;
      for (size_t i = start; i < std::min(records.size(), start + 1000); ++i) {
        ids.push_back(records[i].first);
      }
      auto results = client.MultiGet(ids);
      EXPECT_TRUE(results.ok()) << results.status();
      if (!results.ok()) return found;
      for (size_t i = 0; i < ids.size(); ++i) {
        const absl::StatusOr<v1::Record>& result = (*results)[i];
        if (may_be_missing && absl::IsNotFound(result.status())) continue;
        EXPECT_TRUE(result.ok()) << ids[i] << ": " << result.status();
        if (!result.ok()) continue;
        EXPECT_EQ(result->payload(), records[start + i].second) << ids[i];
        ++found;
      }
    }
    return found;
  }

  std::vector<Category> categories_;
  std::string work_;
  std::string root_flag_;  // Backups go inside work_.
  std::vector<IdPayload> loaded_;
};

TEST_F(BackupE2eTest, BackupWhileAppendingRestoresEveryAcknowledgedRecord) {
  testing::ServerProcess source(testing::RunfilePath("server/daemon/dictlogd"),
                                work_ + "/data", {"--auto_train=false", root_flag_});
  absl::StatusOr<std::string> address = source.Start();
  ASSERT_TRUE(address.ok()) << address.status();
  const client::Client client = ClientFor(*address);
  Load(client);
  ASSERT_FALSE(HasFatalFailure());

  Writer writer(client, categories_);
  const absl::Time wait_until = absl::Now() + absl::Seconds(10);
  while (writer.batches() < 5 && absl::Now() < wait_until) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_GE(writer.batches(), 5u) << writer.status();
  std::vector<IdPayload> before = loaded_;
  const std::vector<IdPayload> written_before = writer.Acked();
  before.insert(before.end(), written_before.begin(), written_before.end());
  v1::BackupRequest request;
  request.set_dir(work_ + "/copy");
  absl::StatusOr<v1::BackupResponse> backup = client.Backup(request);
  ASSERT_TRUE(backup.ok()) << backup.status();
  const size_t batches_at_backup = writer.batches();
  while (writer.batches() < batches_at_backup + 5 && absl::Now() < wait_until) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  writer.Stop();
  ASSERT_TRUE(writer.status().ok()) << writer.status();
  EXPECT_EQ(backup->dir(), work_ + "/copy");
  EXPECT_GT(backup->files(), 0u);
  EXPECT_GT(backup->bytes(), 0u);
  EXPECT_GT(backup->sequence_number(), 0u);
  ASSERT_EQ(source.Stop().value_or(-1), 0);

  testing::ServerProcess restored(testing::RunfilePath("server/daemon/dictlogd"),
                                  work_ + "/copy", {"--auto_train=false"});
  address = restored.Start();
  ASSERT_TRUE(address.ok()) << address.status();
  const client::Client restored_client = ClientFor(*address);
  EXPECT_EQ(CheckRecords(restored_client, before, false), before.size());
  // Records acknowledged while the backup ran may or may not be in it; those that
  // are must be intact.
  const std::vector<IdPayload> all_written = writer.Acked();
  const std::vector<IdPayload> later(all_written.begin() + written_before.size(),
                                     all_written.end());
  ASSERT_FALSE(later.empty());
  CheckRecords(restored_client, later, true);

  absl::StatusOr<v1::VerifyResponse> verify = restored_client.Verify({});
  ASSERT_TRUE(verify.ok()) << verify.status();
  EXPECT_EQ(verify->corrupt_records(), 0u);
  EXPECT_EQ(verify->pool_errors_size(), 0);
  EXPECT_GE(verify->records_checked(), before.size());
  for (const char* pool : {"HDFS", "Spark", "Apache"}) {
    absl::StatusOr<v1::PoolInfo> info = restored_client.GetPool(pool);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_NE(info->active_dictionary_id(), 0u) << pool;
  }
  absl::StatusOr<v1::PoolInfo> apache = restored_client.GetPool("Apache");
  ASSERT_TRUE(apache.ok());
  EXPECT_EQ(apache->options().storage_mode(), v1::STORAGE_MODE_BLOCK);
  // The restored server takes appends that continue the pools' sequences.
  absl::StatusOr<std::string> id = restored_client.Append("HDFS", "after restore");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(restored_client.Get(*id).ok());
  EXPECT_EQ(restored.Stop().value_or(-1), 0);
}

TEST_F(BackupE2eTest, RefusesRelativeMissingParentAndNonEmptyDirectories) {
  testing::ServerProcess server(testing::RunfilePath("server/daemon/dictlogd"),
                                work_ + "/data", {root_flag_});
  absl::StatusOr<std::string> address = server.Start();
  ASSERT_TRUE(address.ok()) << address.status();
  const client::Client client = ClientFor(*address);
  ASSERT_TRUE(client.Append("HDFS", "one record").ok());
  v1::BackupRequest request;
  request.set_dir("relative/copy");
  EXPECT_EQ(client.Backup(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_dir("");
  EXPECT_EQ(client.Backup(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_dir(work_ + "/no/such/parent");
  EXPECT_EQ(client.Backup(request).status().code(),
            absl::StatusCode::kFailedPrecondition);
  std::filesystem::create_directories(work_ + "/full");
  std::ofstream(work_ + "/full/keep") << "operator's file";
  request.set_dir(work_ + "/full");
  EXPECT_EQ(client.Backup(request).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(std::filesystem::exists(work_ + "/full/keep"));
  // An existing empty directory is accepted; a second backup into it is refused.
  std::filesystem::create_directories(work_ + "/empty");
  request.set_dir(work_ + "/empty");
  EXPECT_TRUE(client.Backup(request).ok());
  EXPECT_EQ(client.Backup(request).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(server.Stop().value_or(-1), 0);
}

// --backup_root confines backups: a directory outside it (directly, through "..", or
// through a symbolic link inside it) is PERMISSION_DENIED and nothing is created or
// cleared there; without the flag backups are off.
TEST_F(BackupE2eTest, RefusesDirectoriesOutsideTheBackupRoot) {
  const std::string root = work_ + "/backups", outside = work_ + "/outside";
  std::filesystem::create_directories(root);
  std::filesystem::create_directories(outside + "/victim.tmp");
  std::ofstream(outside + "/victim.tmp/keep") << "operator's file";
  std::filesystem::create_directory_symlink(outside, root + "/escape");
  std::filesystem::create_directory_symlink(outside + "/victim.tmp", root + "/copy.tmp");
  testing::ServerProcess server(testing::RunfilePath("server/daemon/dictlogd"),
                                work_ + "/data", {"--backup_root=" + root});
  absl::StatusOr<std::string> address = server.Start();
  ASSERT_TRUE(address.ok()) << address.status();
  const client::Client client = ClientFor(*address);
  ASSERT_TRUE(client.Append("HDFS", "one record").ok());
  v1::BackupRequest request;
  for (const std::string& dir : {outside + "/copy", root + "/../outside/copy",
                                 root + "/escape/copy", root + "/copy", root}) {
    request.set_dir(dir);
    EXPECT_EQ(client.Backup(request).status().code(), absl::StatusCode::kPermissionDenied)
        << dir;
  }
  EXPECT_FALSE(std::filesystem::exists(outside + "/copy"));
  EXPECT_TRUE(std::filesystem::exists(outside + "/victim.tmp/keep"));
  request.set_dir(root + "/today");
  absl::StatusOr<v1::BackupResponse> backup = client.Backup(request);
  ASSERT_TRUE(backup.ok()) << backup.status();
  EXPECT_EQ(backup->dir(), root + "/today");
  EXPECT_EQ(server.Stop().value_or(-1), 0);

  testing::ServerProcess off(testing::RunfilePath("server/daemon/dictlogd"),
                             work_ + "/data");
  address = off.Start();
  ASSERT_TRUE(address.ok()) << address.status();
  request.set_dir(root + "/tomorrow");
  absl::StatusOr<v1::BackupResponse> refused = ClientFor(*address).Backup(request);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--backup_root"), std::string::npos)
      << refused.status();
  EXPECT_FALSE(std::filesystem::exists(root + "/tomorrow"));
  EXPECT_EQ(off.Stop().value_or(-1), 0);
}

}  // namespace
}  // namespace dictlog

namespace dictlog {
namespace {

// Appends every line of `category` to `client` and trains and activates a dictionary
// on them, then appends the first 300 lines again (frames naming that dictionary).
// Returns the dictionary's id; the second appends go to `framed`.
absl::StatusOr<uint32_t> TrainedAndFramed(const client::Client& client,
                                          const Category& category,
                                          std::vector<IdPayload>* framed) {
  std::vector<IdPayload> first;
  for (size_t start = 0; start < category.lines.size(); start += 500) {
    RETURN_IF_ERROR(AppendLines(client, category, start, 500, &first));
  }
  v1::TrainDictionaryRequest train;
  train.set_pool(category.name);
  train.set_activate(true);
  absl::StatusOr<v1::TrainDictionaryResponse> trained = client.TrainDictionary(train);
  if (!trained.ok()) return trained.status();
  if (!trained->activated()) return absl::InternalError("the dictionary was not activated");
  RETURN_IF_ERROR(AppendLines(client, category, 0, 300, framed));
  return trained->dictionary().id();
}

// `records` read by `reader` decoding locally, packed and per result, byte-identical.
void ExpectDecodedLocally(const client::Client& reader, const std::vector<IdPayload>& records) {
  std::vector<std::string> ids;
  for (const IdPayload& record : records) ids.push_back(record.first);
  for (bool packed : {true, false}) {
    client::ReadOptions options;
    options.decode_locally = true;
    options.packed = packed;
    auto results = reader.MultiGet(ids, options);
    ASSERT_TRUE(results.ok()) << results.status();
    ASSERT_EQ(results->size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE((*results)[i].ok()) << ids[i] << ": " << (*results)[i].status();
      EXPECT_EQ((*results)[i]->payload(), records[i].second) << ids[i];
    }
  }
}

TEST_F(BackupE2eTest, ALocallyDecodingClientSpanningARestoreUsesTheRestoredDictionaries) {
  const auto by_name = [this](const std::string& name) {
    for (const Category& category : categories_) {
      if (category.name == name) return category;
    }
    return Category();
  };
  testing::ServerProcess live(testing::RunfilePath("server/daemon/dictlogd"),
                              work_ + "/live", {"--auto_train=false", root_flag_});
  absl::StatusOr<std::string> address = live.Start();
  ASSERT_TRUE(address.ok()) << address.status();
  // One client throughout, as an application that reads on while its operators
  // restore the server: it caches the dictionaries it decodes with.
  const client::Client reader = ClientFor(*address);
  std::vector<IdPayload> hdfs, spark, linux_lines;
  absl::StatusOr<uint32_t> hdfs_dictionary = TrainedAndFramed(reader, by_name("HDFS"), &hdfs);
  ASSERT_TRUE(hdfs_dictionary.ok()) << hdfs_dictionary.status();
  v1::BackupRequest request;
  request.set_dir(work_ + "/copy");
  ASSERT_TRUE(reader.Backup(request).ok());
  // After the backup, the live store gives the next dictionary id to Spark's.
  absl::StatusOr<uint32_t> spark_dictionary =
      TrainedAndFramed(reader, by_name("Spark"), &spark);
  ASSERT_TRUE(spark_dictionary.ok()) << spark_dictionary.status();
  ExpectDecodedLocally(reader, spark);  // Caches Spark's dictionary under its id.
  ExpectDecodedLocally(reader, hdfs);
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t entries_before = reader.DictionaryCacheStats().entries;
  EXPECT_EQ(entries_before, 2u);
  ASSERT_EQ(live.Stop().value_or(-1), 0);

  // The restore, at the same address (operations.md "Backups").
  const std::string port = address->substr(address->rfind(':') + 1);
  testing::ServerProcess restored(testing::RunfilePath("server/daemon/dictlogd"),
                                  work_ + "/copy",
                                  {"--auto_train=false", "--listen=127.0.0.1:" + port});
  absl::StatusOr<std::string> restored_address = restored.Start();
  ASSERT_TRUE(restored_address.ok()) << restored_address.status();
  ASSERT_EQ(*restored_address, *address);
  // The reader's connection comes back (gRPC reconnects, with backoff if a first
  // attempt fails): wait for it.
  const absl::Status connected = reader.WaitForConnected(absl::Seconds(30));
  ASSERT_TRUE(connected.ok()) << connected;
  const absl::Status reached = reader.Get(hdfs.front().first).status();
  ASSERT_TRUE(reached.ok()) << reached;
  // The restored store gives Linux's dictionary the id the live one gave Spark's.
  absl::StatusOr<uint32_t> linux_dict_id =
      TrainedAndFramed(reader, by_name("Linux"), &linux_lines);
  ASSERT_TRUE(linux_dict_id.ok()) << linux_dict_id.status();
  ASSERT_EQ(*linux_dict_id, *spark_dictionary) << "the scenario needs the id given again";
  // The frames name that id with the content check of Linux's dictionary: the cached
  // Spark one is replaced, not used (which decoded them wrong or failed before checks).
  ExpectDecodedLocally(reader, linux_lines);
  ExpectDecodedLocally(reader, hdfs);  // Its dictionary, from the backup, still cached.
  const client::DdictCacheStats stats = reader.DictionaryCacheStats();
  EXPECT_EQ(stats.replaced, 1u);
  EXPECT_EQ(stats.entries, 2u);
  // Spark's records were appended after the backup: the restored store has none.
  auto gone = reader.MultiGet({spark.front().first});
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_TRUE(absl::IsNotFound((*gone)[0].status())) << (*gone)[0].status();
  EXPECT_EQ(restored.Stop().value_or(-1), 0);
}

}  // namespace
}  // namespace dictlog
