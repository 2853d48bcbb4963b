// The dictionary commands of the dictlog CLI: dict train|list|activate|export|import|gc
// and recompress.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "client/cli/commands.h"
#include "common/atomic_file.h"
#include "client/cli/output.h"
#include "common/status_macros.h"

namespace dictlog::cli {
namespace {

absl::Status Print(const v1::DictionaryInfo& info, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::kJson) {
    out << DictionaryJson(info) << '\n';
  } else {
    out << DictionariesTable({info});
  }
  return absl::OkStatus();
}

absl::Status Train(const client::Client& client, const CommandOptions& options,
                   CommandIo io) {
  if (options.pool.empty()) return UsageError("dict train needs --pool=P");
  v1::TrainDictionaryRequest request;
  request.set_pool(options.pool);
  request.set_dictionary_bytes(options.size);
  request.set_activate(options.activate);
  io.err << "training a dictionary for pool " << options.pool << "...\n";
  ASSIGN_OR_RETURN(v1::TrainDictionaryResponse response, client.TrainDictionary(request));
  RETURN_IF_ERROR(Print(response.dictionary(), options.format, io.out));
  io.err << response.activation_note() << '\n';
  return absl::OkStatus();
}

absl::Status List(const client::Client& client, const CommandOptions& options,
                  CommandIo io) {
  v1::ListDictionariesRequest request;
  request.set_pool(options.pool);
  ASSIGN_OR_RETURN(v1::ListDictionariesResponse response, client.ListDictionaries(request));
  std::vector<v1::DictionaryInfo> infos(response.dictionaries().begin(),
                                        response.dictionaries().end());
  if (options.format == OutputFormat::kText) {
    io.out << DictionariesTable(infos);
    return absl::OkStatus();
  }
  for (const v1::DictionaryInfo& info : infos) io.out << DictionaryJson(info) << '\n';
  return absl::OkStatus();
}

absl::Status Activate(const client::Client& client, const CommandOptions& options,
                      CommandIo io) {
  if (options.pool.empty() || options.id == 0) {
    return UsageError("dict activate needs --pool=P and --id=N");
  }
  v1::ActivateDictionaryRequest request;
  request.set_pool(options.pool);
  request.set_id(options.id);
  ASSIGN_OR_RETURN(v1::DictionaryInfo info, client.ActivateDictionary(request));
  return Print(info, options.format, io.out);
}

absl::Status Export(const client::Client& client, const CommandOptions& options,
                    CommandIo io) {
  if (options.id == 0 || options.out.empty()) {
    return UsageError("dict export needs --id=N and --out=FILE");
  }
  v1::GetDictionaryRequest request;
  request.set_id(options.id);
  ASSIGN_OR_RETURN(v1::GetDictionaryResponse response, client.GetDictionary(request));
  RETURN_IF_ERROR(WriteFileAtomically(options.out, response.content()));
  io.err << "wrote dictionary " << options.id << " (" << response.content().size()
         << " bytes, standard zstd format) to " << options.out << '\n';
  return absl::OkStatus();
}

absl::Status Import(const client::Client& client, const std::vector<std::string>& args,
                    const CommandOptions& options, CommandIo io) {
  if (options.pool.empty() || args.size() != 3) {
    return UsageError("usage: dict import --pool=P FILE [--activate]");
  }
  std::ifstream file(args[2], std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open ", args[2]));
  std::stringstream content;
  content << file.rdbuf();
  v1::ImportDictionaryRequest request;
  request.set_pool(options.pool);
  request.set_content(content.str());
  request.set_activate(options.activate);
  ASSIGN_OR_RETURN(v1::DictionaryInfo info, client.ImportDictionary(request));
  // What became of the file's id (reassigned, or an identical dictionary returned).
  if (!info.import_note().empty()) io.err << info.import_note() << '\n';
  return Print(info, options.format, io.out);
}

absl::Status Gc(const client::Client& client, const CommandOptions& options, CommandIo io) {
  v1::GcDictionariesRequest request;
  request.set_dry_run(options.dry_run);
  ASSIGN_OR_RETURN(v1::GcDictionariesResponse response, client.GcDictionaries(request));
  io.err << (options.dry_run ? "would delete " : "deleted ")
         << response.deleted_size() << " unreferenced dictionaries\n";
  std::vector<v1::DictionaryInfo> infos(response.deleted().begin(),
                                        response.deleted().end());
  if (options.format == OutputFormat::kText) {
    if (!infos.empty()) io.out << DictionariesTable(infos);
    return absl::OkStatus();
  }
  for (const v1::DictionaryInfo& info : infos) io.out << DictionaryJson(info) << '\n';
  return absl::OkStatus();
}

}  // namespace

absl::Status RunDictCommand(const client::Client& client,
                            const std::vector<std::string>& args,
                            const CommandOptions& options, CommandIo io) {
  if (args.size() < 2) {
    return UsageError("usage: dict train|list|activate|export|import|gc [flags]");
  }
  const std::string& sub = args[1];
  if (sub == "import") return Import(client, args, options, io);
  if (args.size() != 2) return UsageError(absl::StrCat("dict ", sub, " takes only flags"));
  if (sub == "train") return Train(client, options, io);
  if (sub == "list") return List(client, options, io);
  if (sub == "activate") return Activate(client, options, io);
  if (sub == "export") return Export(client, options, io);
  if (sub == "gc") return Gc(client, options, io);
  return UsageError(absl::StrCat("unknown dict subcommand '", sub, "'"));
}

absl::Status RunRecompress(const client::Client& client,
                           const std::vector<std::string>& args,
                           const CommandOptions& options, CommandIo io) {
  if (args.size() != 1 || options.pool.empty()) {
    return UsageError("usage: recompress --pool=P [--detach | --status]");
  }
  v1::RecompressRequest request;
  request.set_pool(options.pool);
  if (options.status) {
    ASSIGN_OR_RETURN(v1::RecompressStatus status, client.GetRecompressStatus(request));
    io.out << RecompressLine(status) << '\n';
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(v1::RecompressStatus status, client.Recompress(request));
  // Polls from 5 ms up, doubling to 250 ms: a job with little to do (a pool whose
  // records all use its dictionary) ends in tens of milliseconds, and a fixed 250 ms
  // made a script that re-compresses every pool wait 250 ms a pool.
  absl::Duration poll = absl::Milliseconds(5);
  while (!options.detach && status.state() == v1::RecompressStatus::RUNNING) {
    if (options.progress) io.err << '\r' << RecompressLine(status) << "\x1b[K" << std::flush;
    absl::SleepFor(poll);
    poll = std::min(2 * poll, absl::Milliseconds(250));
    ASSIGN_OR_RETURN(status, client.GetRecompressStatus(request));
  }
  if (options.progress && !options.detach) io.err << "\r\x1b[K";
  io.out << RecompressLine(status) << '\n';
  if (status.state() == v1::RecompressStatus::FAILED) {
    return absl::InternalError(absl::StrCat("re-compression failed: ", status.error()));
  }
  if (status.unreadable() > 0) {  // Printed in the line above: exit 1 without more.
    return Reported(absl::DataLossError("re-compression left unreadable records"));
  }
  return absl::OkStatus();
}

absl::Status RunVerify(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io) {
  if (args.size() != 1) return UsageError("usage: verify [--pool=P]");
  v1::VerifyRequest request;
  request.set_pool(options.pool);
  ASSIGN_OR_RETURN(v1::VerifyResponse response, client.Verify(request));
  for (const v1::VerifyResponse::Corrupt& corrupt : response.corrupt()) {
    io.out << corrupt.id() << '\t' << corrupt.error() << '\n';
  }
  for (const std::string& error : response.pool_errors()) {
    io.out << "pool error\t" << error << '\n';
  }
  for (const v1::VerifyResponse::LostRange& lost : response.lost()) {
    io.out << "lost\t" << lost.first_id() << " to " << lost.last_id()
           << "\tlost when this store was salvaged (reads: DATA_LOSS)\n";
  }
  io.out << absl::StrFormat("verified %d records in %d pools: %d corrupt%s%s\n",
                            response.records_checked(), response.pools_checked(),
                            response.corrupt_records(),
                            response.pool_errors_size() > 0 ? ", pools unreadable" : "",
                            response.lost_ranges() > 0
                                ? absl::StrFormat("; %d id range(s) lost in a salvage "
                                                  "(known, not corrupt)",
                                                  response.lost_ranges())
                                : "");
  if (response.corrupt_records() > 0 || response.pool_errors_size() > 0) {
    return absl::DataLossError(absl::StrFormat("%d corrupt records, %d unreadable pools",
                                               response.corrupt_records(),
                                               response.pool_errors_size()));
  }
  return absl::OkStatus();
}

absl::Status RunBackup(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io) {
  if (args.size() != 1 || options.out.empty()) {
    return UsageError("usage: backup --out=DIR (absolute path on the server's machine)");
  }
  if (options.out[0] != '/') {
    return UsageError("backup --out must be an absolute path: the directory is created "
                      "on the server's machine");
  }
  v1::BackupRequest request;
  request.set_dir(options.out);
  ASSIGN_OR_RETURN(v1::BackupResponse response, client.Backup(request));
  io.out << absl::StrFormat("backup in %s: %d files, %d bytes, sequence %d, %d ms\n",
                            response.dir(), response.files(), response.bytes(),
                            response.sequence_number(), response.duration_ms());
  return absl::OkStatus();
}

absl::Status RunFlush(const client::Client& client, const std::vector<std::string>& args,
                      const CommandOptions& options, CommandIo io) {
  if (args.size() != 1) return UsageError("usage: flush (no arguments)");
  ASSIGN_OR_RETURN(v1::FlushResponse response, client.Flush(v1::FlushRequest()));
  if (options.format == OutputFormat::kJson) {
    io.out << absl::StrFormat("{\"table_file_bytes\":%d}\n", response.table_file_bytes());
  } else {
    io.out << absl::StrFormat("flushed: %d bytes of table files\n",
                              response.table_file_bytes());
  }
  return absl::OkStatus();
}

}  // namespace dictlog::cli
