// `dictlog tail -f`: the records of a category or a pool as they are appended (a
// LogStore.Follow stream, resumed by the client after it fell behind), printed as
// `scan` prints them and flushed one by one, until Ctrl-C / SIGTERM (main.cc cancels
// options.follow_cancel: exit 0) or the server ends the stream (exit 1).
#include <ostream>

#include "absl/status/status.h"
#include "client/cli/commands.h"
#include "client/cli/output.h"

namespace dictlog::cli {

absl::Status RunTail(const client::Client& client, const std::vector<std::string>& args,
                     const CommandOptions& options, CommandIo io) {
  if (args.size() != 1) return UsageError("tail takes no arguments, only flags");
  if (!options.follow) {
    return UsageError("tail needs -f (printing the last N records is not supported; "
                      "use scan --from=ID)");
  }
  if (options.category.empty() == options.pool.empty()) {
    return UsageError("tail needs exactly one of --category=C and --pool=P");
  }
  if (options.from_start && !options.after_id.empty()) {
    return UsageError("tail takes --after_id or --from_start, not both");
  }
  v1::FollowRequest request;
  if (!options.category.empty()) request.set_category(options.category);
  if (!options.pool.empty()) request.set_pool(options.pool);
  request.set_after_id(options.after_id);
  request.set_from_start(options.from_start);
  return client.Follow(
      request,
      [&](const v1::Record& record) {
        // As scan prints records.
        if (options.format == OutputFormat::kJson) {
          io.out << RecordJson(record) << '\n';
        } else {
          io.out << record.payload() << '\n';
        }
        io.out.flush();
        return io.out ? absl::OkStatus() : absl::UnavailableError("output closed");
      },
      options.follow_cancel);
}

}  // namespace dictlog::cli
