// End to end: who gets frames and dictionaries (MultiGetFrames, Scan with frames,
// GetDictionary) against
// the real dictlogd with tokens. A reader whose scope covers every category of a pool
// gets its frames and its dictionaries; a reader limited to part of a pool gets the
// payloads of its own categories decoded by the server (frame sizes and dictionaries
// would reveal the others'), NOT_FOUND for the others, and PERMISSION_DENIED for the
// pool's dictionary; client-side decoding gives every token MultiGet's answers.
#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "client/client.h"
#include "tests/e2e/server_process.h"

namespace dictlog {
namespace {

constexpr char kAdmin[] = "admin-token-0123456789";
constexpr char kReader[] = "reader-all-0123456789";
constexpr char kWebReader[] = "reader-web-0123456789";
constexpr char kWebAReader[] = "reader-weba-0123456789";

class FramesScopeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/frames_scope";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/tokens") << kAdmin << " admin\n"
                                   << kReader << " reader\n"
                                   << kWebReader << " reader web*\n"
                                   << kWebAReader << " reader web-a\n";
    server_ = new testing::ServerProcess(
        testing::RunfilePath("server/daemon/dictlogd"), dir + "/data",
        {"--tokens_file=" + dir + "/tokens", "--auto_train=false", "--route=web*=web"});
    absl::StatusOr<std::string> address = server_->Start();
    ASSERT_TRUE(address.ok()) << address.status();
    client::Client admin = Connect(kAdmin);
    for (int round = 0; round < 2; ++round) {  // Before and after a dictionary.
      std::vector<v1::RecordToAppend> batch;
      for (int i = 0; i < 2000; ++i) {
        batch.emplace_back();
        batch.back().set_category(i % 2 == 0 ? "web-a" : "web-b");
        batch.back().set_payload("GET /static/img/" + std::to_string(i * 7919 % 1000) +
                                 ".png HTTP/1.1 200 " + std::to_string(i) +
                                 " \"Mozilla/5.0 (X11; Linux x86_64)\" host=10.0.0." +
                                 std::to_string(i % 250));
      }
      auto ids = admin.AppendBatch(batch);
      ASSERT_TRUE(ids.ok()) << ids.status();
      ids_->insert(ids_->end(), ids->begin(), ids->end());
      v1::TrainDictionaryRequest train;
      train.set_pool("web");
      train.set_activate(true);
      if (round == 0) {
        ASSERT_TRUE(admin.TrainDictionary(train).ok());
      }
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static client::Client Connect(const std::string& token) {
    client::ClientOptions options;
    options.server = server_->address();
    options.timeout = absl::Seconds(20);
    options.security.token = token;
    return client::Client(options);
  }

  // The last 64 ids: web-a, web-b alternately, compressed with the dictionary.
  static std::vector<std::string> LastIds() {
    return std::vector<std::string>(ids_->end() - 64, ids_->end());
  }

  // MultiGet with client-side decoding answers as MultiGet does, for `token`.
  static void ExpectLocalEqualsServer(const std::string& token) {
    client::ReadOptions local;
    local.decode_locally = true;
    client::Client client = Connect(token);
    auto server = client.MultiGet(LastIds());
    auto decoded = client.MultiGet(LastIds(), local);
    ASSERT_TRUE(server.ok() && decoded.ok()) << server.status() << decoded.status();
    for (size_t i = 0; i < server->size(); ++i) {
      ASSERT_EQ((*decoded)[i].status(), (*server)[i].status());
      if ((*server)[i].ok()) {
        // MultiGetFrames carries no append times (docs/api.md); MultiGet does.
        v1::Record expected = *(*server)[i];
        EXPECT_TRUE(expected.has_append_time_unix_ms());
        expected.clear_append_time_unix_ms();
        EXPECT_EQ((*decoded)[i]->SerializeAsString(), expected.SerializeAsString());
      }
    }
  }

  // What a frames scan of `category` from the last 64 ids streams to `token`: the kinds
  // of its results, and the records a Scan with local decoding visits equal Scan's.
  static std::set<v1::RecordFrame::ContentCase> ScanKinds(const std::string& token,
                                                          const std::string& category) {
    auto stub = v1::LogStore::NewStub(
        grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    v1::ScanRequest request;
    request.set_category(category);
    request.set_from_id(LastIds()[0]);
    request.set_frames(true);
    std::set<v1::RecordFrame::ContentCase> kinds;
    auto reader = stub->Scan(&context, request);
    v1::ScanResponse response;
    size_t frames = 0;
    while (reader->Read(&response)) {
      EXPECT_EQ(response.records_size(), 0);
      for (const v1::RecordFrame& frame : response.frames()) {
        EXPECT_EQ(frame.category(), category);
        kinds.insert(frame.content_case());
        ++frames;
      }
    }
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(frames, 32u);
    std::vector<std::string> server, local;
    client::ReadOptions decode_locally;
    decode_locally.decode_locally = true;
    request.set_frames(false);
    client::Client client = Connect(token);
    // Frames carry no append time (docs/api.md): compare without it, after checking the
    // server-decoded records have one.
    auto collect = [](std::vector<std::string>* out) {
      return [out](v1::Record record) {
        EXPECT_EQ(record.has_append_time_unix_ms(), false);
        out->push_back(record.SerializeAsString());
        return absl::OkStatus();
      };
    };
    size_t timed = 0;
    auto collect_timed = [&timed](std::vector<std::string>* out) {
      return [out, &timed](v1::Record record) {
        timed += record.has_append_time_unix_ms();
        record.clear_append_time_unix_ms();
        out->push_back(record.SerializeAsString());
        return absl::OkStatus();
      };
    };
    EXPECT_TRUE(client.Scan(request, collect_timed(&server)).ok());
    EXPECT_TRUE(client.Scan(request, collect(&local), decode_locally).ok());
    EXPECT_EQ(timed, server.size());
    EXPECT_EQ(local, server);
    return kinds;
  }

  static testing::ServerProcess* server_;
  static std::vector<std::string>* ids_;
};

testing::ServerProcess* FramesScopeTest::server_ = nullptr;
std::vector<std::string>* FramesScopeTest::ids_ = new std::vector<std::string>;

TEST_F(FramesScopeTest, ReadersOfTheWholePoolGetFramesAndDictionaries) {
  for (const char* token : {kAdmin, kReader, kWebReader}) {
    SCOPED_TRACE(token);
    client::Client client = Connect(token);
    auto frames = client.MultiGetFrames(LastIds());
    ASSERT_TRUE(frames.ok()) << frames.status();
    uint32_t dictionary = 0;
    for (const auto& frame : *frames) {
      ASSERT_TRUE(frame.ok()) << frame.status();
      ASSERT_EQ(frame->content_case(), v1::RecordFrame::kFrame);
      dictionary = frame->dictionary_id();
    }
    ASSERT_NE(dictionary, 0u);
    v1::GetDictionaryRequest request;
    request.set_id(dictionary);
    EXPECT_TRUE(client.GetDictionary(request).ok());
    ExpectLocalEqualsServer(token);
  }
}

TEST_F(FramesScopeTest, AReaderOfPartOfAPoolGetsPayloadsAndNoDictionary) {
  client::Client client = Connect(kWebAReader);
  auto frames = client.MultiGetFrames(LastIds());
  ASSERT_TRUE(frames.ok()) << frames.status();
  for (size_t i = 0; i < frames->size(); ++i) {
    const auto& frame = (*frames)[i];
    if (i % 2 == 1) {  // web-b: as if absent.
      EXPECT_EQ(frame.status().code(), absl::StatusCode::kNotFound);
      EXPECT_EQ(frame.status().message(), "no record " + LastIds()[i]);
      continue;
    }
    ASSERT_TRUE(frame.ok()) << frame.status();
    EXPECT_EQ(frame->category(), "web-a");
    EXPECT_EQ(frame->content_case(), v1::RecordFrame::kPayload);
  }
  auto admin_frames = Connect(kAdmin).MultiGetFrames(LastIds());
  ASSERT_TRUE(admin_frames.ok());
  v1::GetDictionaryRequest request;
  request.set_id((*admin_frames)[0]->dictionary_id());
  EXPECT_EQ(client.GetDictionary(request).status().code(),
            absl::StatusCode::kPermissionDenied);
  ExpectLocalEqualsServer(kWebAReader);
}

TEST_F(FramesScopeTest, ScanWithFramesFollowsTheSameRule) {
  using Kinds = std::set<v1::RecordFrame::ContentCase>;
  EXPECT_EQ(ScanKinds(kWebReader, "web-a"), Kinds{v1::RecordFrame::kFrame});
  EXPECT_EQ(ScanKinds(kAdmin, "web-b"), Kinds{v1::RecordFrame::kFrame});
  EXPECT_EQ(ScanKinds(kWebAReader, "web-a"), Kinds{v1::RecordFrame::kPayload});
}

TEST_F(FramesScopeTest, GetDictionaryOfAnAbsentIdIsNotFound) {
  v1::GetDictionaryRequest request;
  request.set_id(99999);
  EXPECT_EQ(Connect(kReader).GetDictionary(request).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dictlog
