// The dictlog CLI's commands, separated from flag parsing (main.cc) so that they can
// be run against any Client and any streams. Not thread-safe (one command at a time).
#ifndef DICTLOG_CLIENT_CLI_COMMANDS_H_
#define DICTLOG_CLIENT_CLI_COMMANDS_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/client.h"

namespace dictlog::cli {

enum class OutputFormat { kText, kJson };

struct CommandOptions {
  OutputFormat format = OutputFormat::kText;
  std::string category;          // append, scan
  std::string pool;              // scan
  std::string from;              // scan: first id
  uint64_t limit = 0;            // scan: 0 = all
  std::optional<int64_t> since_ms;  // scan: only records appended at or after (ms)
  std::optional<int64_t> until_ms;  // scan: and before (ms)
  size_t batch_records = 1000;   // append
  size_t batch_bytes = 4 << 20;  // append
  std::optional<int> compression_level;        // pool create/update
  std::optional<int> compact_compression_level;  // pool create/update
  std::optional<uint32_t> dictionary_bytes;    // pool create/update
  std::optional<v1::DictionaryMode> dictionary_mode;  // pool create/update
  std::optional<v1::StorageMode> storage_mode;        // pool create/update
  std::optional<uint32_t> block_bytes;                // pool create/update
  std::optional<uint64_t> max_age_seconds;            // pool create/update: retention
  std::optional<uint64_t> max_bytes;                  // pool create/update: retention
  std::optional<uint32_t> drift_threshold_percent;    // pool create/update: drift
  std::optional<bool> auto_upkeep;                    // pool create/update: upkeep
  std::optional<uint32_t> upkeep_min_gain_percent;    // pool create/update: upkeep
  uint32_t size = 0;        // dict train: dictionary bytes (0: the pool's option)
  bool activate = false;    // dict train, dict import
  uint32_t id = 0;          // dict activate, dict export
  std::string out;          // dict export, get --frame: output file; backup: directory
  bool frame = false;       // get: write the stored frame instead of the payload
  bool decode_locally = false;  // get, scan: fetch frames and decode them here
  bool dry_run = false;     // dict gc
  bool detach = false;      // recompress: start and return without waiting
  bool status = false;      // recompress: only print the job's status
  bool progress = false;    // show a live progress line on io.err (a terminal)
  bool keep_cr = false;     // append: keep a line's trailing '\r' (CRLF input)
  bool follow = false;      // tail: -f (required)
  std::string after_id;     // tail: start after this id (exclusive)
  bool from_start = false;  // tail: start with the pool's first record
  // tail: ends the stream when cancelled (Ctrl-C); borrowed, may be null.
  client::FollowCancel* follow_cancel = nullptr;
};

struct CommandIo {
  std::istream& in;   // stdin, for `append -`
  std::ostream& out;  // results
  std::ostream& err;  // per-item errors, progress
};

// Runs `args` (command name first). Returns a usage error (see IsUsageError) for bad
// arguments; otherwise the first error met (after reporting per-item errors on io.err).
absl::Status RunCommand(const client::Client& client, const std::vector<std::string>& args,
                        const CommandOptions& options, CommandIo io);

// True for the INVALID_ARGUMENT errors that RunCommand returns for bad command-line
// usage (as opposed to errors from the server).
bool IsUsageError(const absl::Status& status);
// An INVALID_ARGUMENT that IsUsageError recognises.
absl::Status UsageError(absl::string_view message);
// True for errors RunCommand has already reported on io.err (e.g. per id): the caller
// only sets the exit status, without printing them again.
bool IsReported(const absl::Status& status);
// `status`, marked for IsReported.
absl::Status Reported(absl::Status status);

// `dict ...`, `recompress` and `verify` (dict_commands.cc).
absl::Status RunDictCommand(const client::Client& client,
                            const std::vector<std::string>& args,
                            const CommandOptions& options, CommandIo io);
absl::Status RunRecompress(const client::Client& client,
                           const std::vector<std::string>& args,
                           const CommandOptions& options, CommandIo io);
// Prints the records that do not decode; DATA_LOSS (exit 1) if there are any.
absl::Status RunVerify(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io);

// Asks the server for a consistent copy of its store in --out (an absolute path on
// the server's machine) and prints what was written.
absl::Status RunBackup(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io);

// Asks the server to write its memtables to table files and prints the store's table
// file bytes after it.
absl::Status RunFlush(const client::Client& client, const std::vector<std::string>& args,
                      const CommandOptions& options, CommandIo io);

// `tail -f`: prints the records of a category or pool as they are appended, until
// options.follow_cancel is cancelled (then OK) or the server ends the stream.
absl::Status RunTail(const client::Client& client, const std::vector<std::string>& args,
                     const CommandOptions& options, CommandIo io);

// Prints SERVING if the server's health check says so; UNAVAILABLE (exit 1) if it is
// NOT_SERVING (health_command.cc).
absl::Status RunHealth(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io);

// Prints the cluster's shard map (shard_map_output.h; shards_command.cc).
absl::Status RunShards(const client::Client& client, const std::vector<std::string>& args,
                       const CommandOptions& options, CommandIo io);

}  // namespace dictlog::cli

#endif  // DICTLOG_CLIENT_CLI_COMMANDS_H_
