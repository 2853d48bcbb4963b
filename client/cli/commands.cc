#include "client/cli/commands.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/cli/line_batcher.h"
#include "client/cli/output.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"

namespace dictlog::cli {
namespace {

constexpr size_t kGetChunk = 1000;
constexpr char kUsagePayload[] = "dictlog.cli/usage";
constexpr char kReportedPayload[] = "dictlog.cli/reported";

absl::Status Usage(absl::string_view message) { return UsageError(message); }

absl::Status AppendStream(const client::Client& client, std::istream& in,
                          const CommandOptions& options, std::ostream& out) {
  LineBatcher batcher(in, options.batch_records, options.batch_bytes, options.keep_cr);
  std::vector<std::string> lines;
  std::vector<v1::RecordToAppend> records;
  while (batcher.Next(&lines)) {
    records.resize(lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      records[i].set_category(options.category);
      records[i].set_payload(std::move(lines[i]));
    }
    ASSIGN_OR_RETURN(std::vector<std::string> ids, client.AppendBatch(records));
    for (const std::string& id : ids) out << id << '\n';
    out.flush();  // Printed ids are exactly the acknowledged ones.
  }
  if (in.bad()) return absl::DataLossError("error reading the input");
  return absl::OkStatus();
}

absl::Status Append(const client::Client& client, const std::vector<std::string>& args,
                    const CommandOptions& options, CommandIo io) {
  if (options.category.empty()) return Usage("append needs --category=C");
  if (args.size() > 2) return Usage("append takes one input: FILE or - (stdin)");
  const std::string input = args.size() == 2 ? args[1] : "-";
  if (input == "-") return AppendStream(client, io.in, options, io.out);
  std::ifstream file(input, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open ", input));
  return AppendStream(client, file, options, io.out);
}

void PrintRecord(const v1::Record& record, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kJson) {
    out << RecordJson(record) << '\n';
  } else {
    out << record.payload() << '\n';
  }
}

absl::Status GetFrame(const client::Client& client, const std::vector<std::string>& args,
                      const CommandOptions& options, CommandIo io) {
  if (args.size() != 2) return Usage("get --frame takes exactly one record id");
  ASSIGN_OR_RETURN(v1::GetFrameResponse frame, client.GetFrame(args[1]));
  io.err << "frame of " << frame.id() << ": " << frame.frame().size() << " bytes, "
         << (frame.dictionary_id() == 0
                 ? std::string("no dictionary")
                 : absl::StrCat("dictionary ", frame.dictionary_id(),
                                " (dictlog dict export --id=", frame.dictionary_id(), ")"))
         << '\n';
  if (!options.out.empty()) return WriteFileAtomically(options.out, frame.frame());
  io.out << frame.frame();
  io.out.flush();
  return absl::OkStatus();
}

absl::Status Get(const client::Client& client, const std::vector<std::string>& args,
                 const CommandOptions& options, CommandIo io) {
  if (options.frame) return GetFrame(client, args, options, io);
  if (args.size() < 2) return Usage("get needs at least one record id");
  absl::Status first_error;
  for (size_t start = 1; start < args.size(); start += kGetChunk) {
    const size_t end = std::min(args.size(), start + kGetChunk);
    std::vector<std::string> ids(args.begin() + start, args.begin() + end);
    client::ReadOptions read;
    read.decode_locally = options.decode_locally;
    ASSIGN_OR_RETURN(auto results, client.MultiGet(ids, read));
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok()) {
        PrintRecord(*results[i], options.format, io.out);
        continue;
      }
      io.err << "dictlog: " << ids[i] << ": " << results[i].status() << '\n';
      if (first_error.ok()) first_error = Reported(results[i].status());
    }
  }
  return first_error;
}

absl::Status Scan(const client::Client& client, const std::vector<std::string>& args,
                  const CommandOptions& options, CommandIo io) {
  if (args.size() != 1) return Usage("scan takes no arguments, only flags");
  if (options.category.empty() == options.pool.empty()) {
    return Usage("scan needs exactly one of --category=C and --pool=P");
  }
  v1::ScanRequest request;
  if (!options.category.empty()) request.set_category(options.category);
  if (!options.pool.empty()) request.set_pool(options.pool);
  request.set_from_id(options.from);
  request.set_limit(options.limit);
  if (options.since_ms) request.set_since_unix_ms(*options.since_ms);
  if (options.until_ms) request.set_until_unix_ms(*options.until_ms);
  client::ReadOptions read;
  read.decode_locally = options.decode_locally;
  return client.Scan(
      request,
      [&](const v1::Record& record) {
        PrintRecord(record, options.format, io.out);
        return io.out ? absl::OkStatus() : absl::UnavailableError("output closed");
      },
      read);
}

absl::Status Pools(const client::Client& client, const std::vector<std::string>& args,
                   const CommandOptions& options, CommandIo io) {
  if (args.size() != 1) return Usage("pools takes no arguments");
  ASSIGN_OR_RETURN(v1::ListPoolsResponse response, client.ListPoolsWithStats());
  std::vector<v1::PoolInfo> pools(response.pools().begin(), response.pools().end());
  if (options.format == OutputFormat::kText) {
    io.out << PoolsTable(pools) << CacheLine(response.dictionary_cache()) << '\n';
    return absl::OkStatus();
  }
  for (const v1::PoolInfo& pool : pools) io.out << PoolJson(pool) << '\n';
  return absl::OkStatus();
}

// `pool delete NAME`: asks nothing; prints what went.
absl::Status DeletePool(const client::Client& client, const std::string& name,
                        CommandIo io) {
  ASSIGN_OR_RETURN(v1::DeletePoolResponse deleted, client.DeletePool(name));
  io.out << "deleted pool " << deleted.name() << ": " << deleted.records() << " records, "
         << deleted.raw_bytes() << " raw bytes, " << deleted.stored_bytes()
         << " stored bytes, " << deleted.dictionaries() << " dictionaries, "
         << deleted.categories() << " other categories; a new pool of the name starts at "
         << deleted.next_id() << '\n';
  return absl::OkStatus();
}

absl::Status Pool(const client::Client& client, const std::vector<std::string>& args,
                  const CommandOptions& options, CommandIo io) {
  if (args.size() != 3) return Usage("usage: pool create|update|show|delete NAME [options]");
  if (args[1] == "delete") return DeletePool(client, args[2], io);
  v1::PoolOptions pool_options;
  if (options.compression_level) {
    pool_options.set_compression_level(*options.compression_level);
  }
  if (options.compact_compression_level) {
    pool_options.set_compact_compression_level(*options.compact_compression_level);
  }
  if (options.dictionary_bytes) pool_options.set_dictionary_bytes(*options.dictionary_bytes);
  if (options.dictionary_mode) pool_options.set_dictionary_mode(*options.dictionary_mode);
  if (options.storage_mode) pool_options.set_storage_mode(*options.storage_mode);
  if (options.block_bytes) pool_options.set_block_bytes(*options.block_bytes);
  if (options.max_age_seconds) pool_options.set_max_age_seconds(*options.max_age_seconds);
  if (options.max_bytes) pool_options.set_max_bytes(*options.max_bytes);
  if (options.drift_threshold_percent) {
    pool_options.set_drift_threshold_percent(*options.drift_threshold_percent);
  }
  if (options.auto_upkeep) pool_options.set_auto_upkeep(*options.auto_upkeep);
  if (options.upkeep_min_gain_percent) {
    pool_options.set_upkeep_min_gain_percent(*options.upkeep_min_gain_percent);
  }
  absl::StatusOr<v1::PoolInfo> info;
  if (args[1] == "create") {
    info = client.CreatePool(args[2], pool_options);
  } else if (args[1] == "update") {
    info = client.UpdatePool(args[2], pool_options);
  } else if (args[1] == "show") {
    info = client.GetPool(args[2]);
  } else {
    return Usage(absl::StrCat("unknown pool subcommand '", args[1], "'"));
  }
  RETURN_IF_ERROR(info.status());
  io.out << PoolJson(*info) << '\n';
  return absl::OkStatus();
}

}  // namespace

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

bool IsReported(const absl::Status& status) {
  return status.GetPayload(kReportedPayload).has_value();
}

absl::Status Reported(absl::Status status) {
  status.SetPayload(kReportedPayload, absl::Cord("1"));
  return status;
}

absl::Status RunCommand(const client::Client& client, const std::vector<std::string>& args,
                        const CommandOptions& options, CommandIo io) {
  if (args.empty()) return Usage("no command given (see --help)");
  const std::string& command = args[0];
  if (command == "append") return Append(client, args, options, io);
  if (command == "get") return Get(client, args, options, io);
  if (command == "scan") return Scan(client, args, options, io);
  if (command == "pools") return Pools(client, args, options, io);
  if (command == "pool") return Pool(client, args, options, io);
  if (command == "dict") return RunDictCommand(client, args, options, io);
  if (command == "recompress") return RunRecompress(client, args, options, io);
  if (command == "verify") return RunVerify(client, args, options, io);
  if (command == "backup") return RunBackup(client, args, options, io);
  if (command == "flush") return RunFlush(client, args, options, io);
  if (command == "health") return RunHealth(client, args, options, io);
  if (command == "tail") return RunTail(client, args, options, io);
  if (command == "shards") return RunShards(client, args, options, io);
  return Usage(absl::StrCat("unknown command '", command, "' (see --help)"));
}

}  // namespace dictlog::cli
