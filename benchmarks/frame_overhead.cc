// frame_overhead: stored bytes per record for each frame-format choice on the loghub
// samples (docs/adr/0002-frame-format.md). Each category's first half trains a
// dictionary; its second half is compressed one record at a time in every variant.
//
//   bazel run -c opt //benchmarks:frame_overhead -- --dir=$PWD/../shared/data/loghub
#include <fstream>
#include <iostream>
#include <map>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "training/files.h"
#include "training/trainer.h"
#include "codec/dictionary.h"
#include "codec/record_codec.h"

ABSL_FLAG(std::string, dir, "../shared/data/loghub", "directory of *.log files");
ABSL_FLAG(int, level, 3, "zstd compression level");
ABSL_FLAG(int, dict_bytes, 16384, "dictionary size");
ABSL_FLAG(std::string, csv, "", "also write the table as CSV to this file");

namespace dictlog {
namespace {

struct Variant {
  std::string name;
  bool dictionary;
  bool magicless;
  bool checksum;
  bool dictlog_value;  // codec::EncodeRecord: header byte + magicless + raw fallback.
  bool short_frame;    // dictlog value: short frames (ADR 0049) where they apply.
};

const Variant kVariants[] = {
    {"zstd frame", false, false, false, false, false},
    {"magicless", false, true, false, false, false},
    {"dictlog value, whole frame", false, true, false, true, false},
    {"dictlog value", false, true, false, true, true},
    {"zstd frame + dict", true, false, false, false, false},
    {"magicless + dict", true, true, false, false, false},
    {"magicless + checksum + dict", true, true, true, false, false},
    {"dictlog value + dict, whole frame", true, true, false, true, false},
    {"dictlog value + dict", true, true, false, true, true},
};

size_t ZstdSize(const std::string& record, const Variant& v, int level,
                const ZSTD_CDict* cdict) {
  static ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_format,
                         v.magicless ? ZSTD_f_zstd1_magicless : ZSTD_f_zstd1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, v.checksum ? 1 : 0);
  if (v.dictionary) ZSTD_CCtx_refCDict(cctx, cdict);
  std::string out(ZSTD_compressBound(record.size()), '\0');
  const size_t n =
      ZSTD_compress2(cctx, out.data(), out.size(), record.data(), record.size());
  if (ZSTD_isError(n)) std::abort();
  return n;
}

int Run() {
  const int level = absl::GetFlag(FLAGS_level);
  const absl::StatusOr<std::vector<trainer::LogFile>> files =
      trainer::ReadLogFiles(absl::GetFlag(FLAGS_dir));
  if (!files.ok()) {
    std::cerr << files.status() << "\n";
    return 1;
  }
  if (files->empty()) {
    std::cerr << "no .log files in " << absl::GetFlag(FLAGS_dir) << "\n";
    return 1;
  }
  std::map<std::string, size_t> stored;  // Variant -> bytes, all categories.
  size_t raw = 0, records = 0;
  uint32_t next_id = codec::kMinDictionaryId;
  for (const trainer::LogFile& file : *files) {
    const std::vector<std::string>& lines = file.lines;
    const size_t half = lines.size() / 2;
    std::vector<std::string> train(lines.begin(), lines.begin() + half);
    auto dict = trainer::TrainDictionary(
        train, {static_cast<size_t>(absl::GetFlag(FLAGS_dict_bytes)), next_id++, level});
    if (!dict.ok()) {
      std::cerr << file.path << ": " << dict.status() << "\n";
      return 1;
    }
    auto encoder = codec::EncoderDictionary::Create(*dict, level);
    for (size_t i = half; i < lines.size(); ++i) {
      raw += lines[i].size();
      ++records;
      for (const Variant& v : kVariants) {
        if (v.dictlog_value) {
          codec::EncodeOptions options;
          options.compression_level = level;
          options.short_frame = v.short_frame;
          if (v.dictionary) options.dictionary = encoder->get();
          std::string value;
          if (!codec::EncodeRecord(lines[i], options, &value).ok()) return 1;
          stored[v.name] += value.size();
        } else {
          stored[v.name] += ZstdSize(lines[i], v, level, (*encoder)->cdict());
        }
      }
    }
  }
  std::string csv = "variant,records,raw_bytes,stored_bytes,bytes_per_record,ratio\n";
  std::cout << absl::StrFormat("loghub: %d files, %d held-out records, %.1f raw bytes/record, "
                               "level %d, %d-byte dictionaries\n\n",
                               files->size(), records, double(raw) / records, level,
                               absl::GetFlag(FLAGS_dict_bytes));
  std::cout << absl::StrFormat("%-34s %14s %12s %8s\n", "variant", "stored_bytes",
                               "bytes/rec", "ratio");
  for (const Variant& v : kVariants) {
    const size_t s = stored[v.name];
    std::cout << absl::StrFormat("%-34s %14d %12.2f %8.3f\n", v.name, s,
                                 double(s) / records, double(raw) / s);
    csv += absl::StrFormat("%s,%d,%d,%d,%.3f,%.4f\n", v.name, records, raw, s,
                           double(s) / records, double(raw) / s);
  }
  if (!absl::GetFlag(FLAGS_csv).empty()) std::ofstream(absl::GetFlag(FLAGS_csv)) << csv;
  return 0;
}

}  // namespace
}  // namespace dictlog

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::Run();
}
