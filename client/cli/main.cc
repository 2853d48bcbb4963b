// dictlog: the command-line client of a dictlog server.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/cli/commands.h"
#include "client/client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7070", "host:port of the dictlog server");
ABSL_FLAG(std::string, format, "text", "output: text or json (one object per line)");
ABSL_FLAG(std::string, category, "", "append: category of the records; scan: only "
          "this category's records (routed like an append)");
ABSL_FLAG(std::string, pool, "", "scan: every record of this pool");
ABSL_FLAG(std::string, from, "", "scan: start at this record id (inclusive)");
ABSL_FLAG(uint64_t, limit, 0, "scan: at most this many records (0: all)");
ABSL_FLAG(int64_t, batch_records, 1000, "append: records per AppendBatch call");
ABSL_FLAG(int64_t, batch_bytes, 4 << 20, "append: payload bytes per AppendBatch call");
ABSL_FLAG(int, level, 0, "pool create/update: zstd compression level (0: unchanged)");
ABSL_FLAG(uint32_t, dictionary_bytes, 0,
          "pool create/update: dictionary size in bytes (0: unchanged)");
ABSL_FLAG(int, timeout_seconds, 30, "deadline of each unary call");

namespace {

constexpr char kUsage[] = R"(dictlog: command-line client of a dictlog server.

Usage: dictlog [--server=HOST:PORT] COMMAND [ARGS] [FLAGS]

Commands:
  append --category=C [FILE|-]   append each line of FILE (or stdin) as one record;
                                 prints each record's id as soon as it is stored
  get ID...                      print the payloads of records (--format=json for
                                 id, category and payload)
  scan --category=C|--pool=P [--from=ID] [--limit=N]
                                 print records in append order
  pools [--format=json]          per pool: records, raw and stored bytes, ratio,
                                 active dictionary
  pool create|update|show NAME [--level=N] [--dictionary_bytes=N]

Exit status: 0 success, 1 an operation failed, 2 usage error.
Examples:
  dictlog append --category=HDFS ../shared/data/loghub/HDFS.log
  dictlog get HDFS/1 HDFS/2
  dictlog scan --category=HDFS --limit=10 --format=json)";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());

  dictlog::cli::CommandOptions options;
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "text" && format != "json") {
    std::cerr << "dictlog: --format must be text or json\n";
    return 2;
  }
  options.format =
      format == "json" ? dictlog::cli::OutputFormat::kJson : dictlog::cli::OutputFormat::kText;
  options.category = absl::GetFlag(FLAGS_category);
  options.pool = absl::GetFlag(FLAGS_pool);
  options.from = absl::GetFlag(FLAGS_from);
  options.limit = absl::GetFlag(FLAGS_limit);
  if (absl::GetFlag(FLAGS_batch_records) <= 0 || absl::GetFlag(FLAGS_batch_bytes) <= 0) {
    std::cerr << "dictlog: --batch_records and --batch_bytes must be positive\n";
    return 2;
  }
  options.batch_records = static_cast<size_t>(absl::GetFlag(FLAGS_batch_records));
  options.batch_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_batch_bytes));
  if (absl::GetFlag(FLAGS_level) != 0) options.compression_level = absl::GetFlag(FLAGS_level);
  if (absl::GetFlag(FLAGS_dictionary_bytes) != 0) {
    options.dictionary_bytes = absl::GetFlag(FLAGS_dictionary_bytes);
  }

  dictlog::client::ClientOptions client_options;
  client_options.server = absl::GetFlag(FLAGS_server);
  client_options.timeout = absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds));
  const dictlog::client::Client client(client_options);

  std::ios::sync_with_stdio(false);
  const absl::Status status = dictlog::cli::RunCommand(
      client, args, options, {std::cin, std::cout, std::cerr});
  std::cout.flush();
  if (status.ok()) return 0;
  if (dictlog::cli::IsUsageError(status)) {
    std::cerr << "dictlog: " << status.message() << "\n";
    return 2;
  }
  std::cerr << "dictlog: " << status << '\n';
  return 1;
}
