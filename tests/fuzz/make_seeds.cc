// make_seeds: writes the fuzz fixtures and seed corpora from the loghub samples.
//   data/<category>.lines        40 real lines (every 40th of the file)
//   data/*.dict                  real 4 KiB dictionaries (ids 40001-40003; Apache compact)
//   seeds/record_decode/         stored records: raw, framed with each dictionary and
//                                without, with category indexes, block records and
//                                block entries, a frame naming an unknown dictionary
//   seeds/block_content/         block contents of real lines
//   seeds/service/               real request messages, one method byte first
//   seeds/dictionary_import/     real dictionaries, full and compact, 1-8 KiB
// The seeds are then minimized into corpus/ with libFuzzer (tests/fuzz/README.md).
//
// Usage: make_seeds LOGHUB_DIR OUT_DIR (OUT_DIR: tests/fuzz)
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "training/compact.h"
#include "training/files.h"
#include "codec/block_format.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"
#include "codec/test_dictionary.h"
#include "tests/fuzz/fuzz_data.h"
#include "tests/fuzz/service_methods.h"

namespace dictlog::fuzz {
namespace {

std::string g_loghub;
std::string g_out;

void Write(const std::string& path, absl::string_view bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<std::string> LoghubLines(absl::string_view category) {
  trainer::LineOptions line_options;
  line_options.skip_empty = true;
  absl::StatusOr<std::vector<std::string>> read =
      trainer::ReadLines(absl::StrCat(g_loghub, "/", category, ".log"), line_options);
  std::vector<std::string> lines = read.ok() ? *std::move(read) : std::vector<std::string>();
  if (lines.empty()) {
    std::fprintf(stderr, "no lines for %s in %s\n", std::string(category).c_str(),
                 g_loghub.c_str());
    std::exit(1);
  }
  return lines;
}

std::vector<std::string> Every(const std::vector<std::string>& lines, size_t step) {
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); i += step) out.push_back(lines[i]);
  return out;
}

std::string Dictionary(absl::string_view category, size_t bytes, uint32_t id, bool compact) {
  std::string dict = codec::TrainDictionaryForTest(LoghubLines(category), bytes, id);
  if (!compact) return dict;
  absl::StatusOr<std::string> small = trainer::MakeCompact(dict, {});
  if (!small.ok()) std::exit(1);
  return *small;
}

void WriteData() {
  for (const FixtureDictionary& fixture : kFixtureDictionaries) {
    Write(absl::StrCat(g_out, "/data/", fixture.category, ".lines"),
          absl::StrJoin(Every(LoghubLines(fixture.category), 40), "\n"));
    Write(absl::StrCat(g_out, "/data/", fixture.file),
          Dictionary(fixture.category, 4096, fixture.id, fixture.compact));
  }
}

void WriteRecordSeeds() {
  const std::string dir = absl::StrCat(g_out, "/seeds/record_decode/");
  std::vector<std::shared_ptr<const codec::EncoderDictionary>> dicts = {nullptr};
  for (const FixtureDictionary& fixture : kFixtureDictionaries) {
    dicts.push_back(*codec::EncoderDictionary::Create(ReadDataFile(fixture.file), 3));
  }
  // Unknown to the decoder: frames naming it must fail with DATA_LOSS.
  dicts.push_back(*codec::EncoderDictionary::Create(Dictionary("Linux", 2048, 40009, false), 3));
  int n = 0;
  for (const char* category : {"HDFS", "Apache", "OpenSSH", "Zookeeper", "Linux"}) {
    const std::vector<std::string> lines = Every(LoghubLines(category), 250);
    for (size_t i = 0; i < lines.size(); ++i) {
      codec::EncodeOptions options;
      options.dictionary = dicts[i % dicts.size()].get();
      options.category_index = i % 3 == 0 ? 3 : 0;
      std::string value;
      if (!codec::EncodeRecord(lines[i], options, &value).ok()) std::exit(1);
      Write(absl::StrCat(dir, "record-", n++), value);
    }
    // A block: several lines packed, framed with the HDFS dictionary.
    std::vector<absl::string_view> packed(lines.begin(), lines.begin() + 6);
    codec::EncodeOptions options;
    options.dictionary = dicts[1].get();
    std::string block;
    if (!codec::EncodeRecord(codec::EncodeBlockContent(packed), options, &block).ok()) {
      std::exit(1);
    }
    Write(absl::StrCat(dir, "block-", n++), block);
  }
  for (uint32_t entry : {0u, 5u}) {
    std::string value;
    if (!codec::EncodeBlockEntry(entry % 2, 3 + entry, entry, &value).ok()) std::exit(1);
    Write(absl::StrCat(dir, "entry-", n++), value);
  }
}

void WriteBlockSeeds() {
  const std::vector<std::string> lines = Every(LoghubLines("OpenSSH"), 100);
  for (size_t i = 0; i + 4 <= lines.size(); i += 4) {
    std::vector<absl::string_view> packed(lines.begin() + i, lines.begin() + i + 1 + i % 4);
    Write(absl::StrCat(g_out, "/seeds/block_content/block-", i),
          codec::EncodeBlockContent(packed));
  }
}

void WriteDictionarySeeds() {
  int n = 0;
  for (const char* category : {"Zookeeper", "Spark", "Android"}) {
    for (size_t bytes : {1024, 8192}) {
      for (bool compact : {false, true}) {
        const uint32_t id = 40100 + n;
        Write(absl::StrCat(g_out, "/seeds/dictionary_import/dict-", n++),
              Dictionary(category, bytes, id, compact));
      }
    }
  }
  for (const FixtureDictionary& fixture : kFixtureDictionaries) {
    Write(absl::StrCat(g_out, "/seeds/dictionary_import/", fixture.file),
          ReadDataFile(fixture.file));
  }
}

void Request(absl::string_view method, const google::protobuf::Message& request, int n) {
  std::string bytes(1, static_cast<char>(ServiceMethodIndex(method)));
  bytes += request.SerializeAsString();
  Write(absl::StrCat(g_out, "/seeds/service/", method, "-", n), bytes);
}

void WriteServiceSeeds() {
  int n = 0;
  const std::vector<std::string> lines = Every(LoghubLines("HDFS"), 200);
  for (const char* category : {"HDFS", "Apache", "OpenSSH", "Spark"}) {
    v1::AppendRequest append;
    append.set_category(category);
    append.set_payload(LoghubLines(category)[7]);
    Request("Append", append, n++);
  }
  v1::AppendBatchRequest batch;
  for (size_t i = 0; i < 6; ++i) {
    v1::RecordToAppend* record = batch.add_records();
    record->set_category(i % 2 ? "OpenSSH" : "HDFS");
    record->set_payload(lines[i]);
  }
  Request("AppendBatch", batch, n++);
  for (const char* id : {"HDFS/1", "HDFS/12", "Apache/3", "blocks/2", "blocks/29"}) {
    v1::GetRequest get;
    get.set_id(id);
    Request("Get", get, n++);
    Request("GetFrame", get, n++);
  }
  v1::MultiGetRequest multi;
  for (const char* id : {"HDFS/2", "Apache/20", "blocks/7", "blocks/30", "nope/1"}) {
    multi.add_ids(id);
  }
  Request("MultiGet", multi, n++);
  v1::ScanRequest scan;
  scan.set_category("HDFS");
  Request("Scan", scan, n++);
  scan.Clear();
  scan.set_pool("blocks");
  scan.set_from_id("blocks/4");
  scan.set_limit(7);
  Request("Scan", scan, n++);
  Request("ListPools", v1::ListPoolsRequest(), n++);
  v1::GetPoolRequest get_pool;
  get_pool.set_name("blocks");
  Request("GetPool", get_pool, n++);
  v1::CreatePoolRequest create;
  create.set_name("web");
  create.mutable_options()->set_compression_level(9);
  create.mutable_options()->set_storage_mode(v1::STORAGE_MODE_BLOCK);
  create.mutable_options()->set_block_bytes(2048);
  Request("CreatePool", create, n++);
  v1::UpdatePoolRequest update;
  update.set_name("Apache");
  update.mutable_options()->set_dictionary_mode(v1::DICTIONARY_MODE_FULL);
  update.mutable_options()->set_compression_level(-5);
  Request("UpdatePool", update, n++);
  v1::TrainDictionaryRequest train;
  train.set_pool("Apache");
  train.set_dictionary_bytes(1024);
  train.set_activate(true);
  Request("TrainDictionary", train, n++);
  v1::ListDictionariesRequest list;
  list.set_pool("HDFS");
  Request("ListDictionaries", list, n++);
  v1::ActivateDictionaryRequest activate;
  activate.set_pool("HDFS");
  activate.set_id(32768);
  Request("ActivateDictionary", activate, n++);
  v1::GetDictionaryRequest get_dict;
  get_dict.set_id(32769);
  Request("GetDictionary", get_dict, n++);
  v1::ImportDictionaryRequest import;
  import.set_pool("Apache");
  import.set_content(ReadDataFile(kFixtureDictionaries[1].file));
  import.set_activate(true);
  Request("ImportDictionary", import, n++);
  v1::GcDictionariesRequest gc;
  gc.set_dry_run(true);
  Request("GcDictionaries", gc, n++);
  v1::VerifyRequest verify;
  Request("Verify", verify, n++);
  verify.set_pool("blocks");
  verify.set_max_listed(3);
  Request("Verify", verify, n++);
  v1::RecompressRequest recompress;
  recompress.set_pool("HDFS");
  Request("Recompress", recompress, n++);
  Request("GetRecompressStatus", recompress, n++);
}

}  // namespace
}  // namespace dictlog::fuzz

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s LOGHUB_DIR OUT_DIR\n", argv[0]);
    return 2;
  }
  dictlog::fuzz::g_loghub = argv[1];
  dictlog::fuzz::g_out = argv[2];
  setenv("DICTLOG_FUZZ_DATA", (std::string(argv[2]) + "/data").c_str(), 1);
  dictlog::fuzz::WriteData();
  dictlog::fuzz::WriteRecordSeeds();
  dictlog::fuzz::WriteBlockSeeds();
  dictlog::fuzz::WriteDictionarySeeds();
  dictlog::fuzz::WriteServiceSeeds();
  std::printf("fixtures and seeds written under %s\n", argv[2]);
  return 0;
}
