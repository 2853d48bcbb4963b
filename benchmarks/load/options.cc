#include "benchmarks/load/options.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace dictlog::bench {
namespace {

absl::Status Invalid(absl::string_view flag, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, " ", why));
}

// host:port with a non-empty host and a port 1..65535 (or 0 is refused: it means
// "any port" to a server, not an address to call).
absl::Status ValidateServer(absl::string_view server) {
  const size_t colon = server.rfind(':');
  if (server.empty()) return Invalid("server", "is required (HOST:PORT)");
  int port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(server.substr(colon + 1), &port) || port < 1 || port > 65535) {
    return Invalid("server", absl::StrCat("must be HOST:PORT with a port 1..65535, got \"",
                                          server, "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ReadOp> ParseReadOp(absl::string_view text) {
  if (text == "get") return ReadOp::kGet;
  if (text == "multiget") return ReadOp::kMultiGet;
  return Invalid("op", absl::StrCat("must be get or multiget, got \"", text, "\""));
}

absl::StatusOr<Distribution> ParseDistribution(absl::string_view text) {
  Distribution dist;
  if (text == "uniform") return dist;
  absl::string_view exponent = text;
  double s = 0;
  if (!absl::ConsumePrefix(&exponent, "zipf:") || !absl::SimpleAtod(exponent, &s) ||
      !(s > 0 && s <= 10)) {
    return Invalid("dist", absl::StrCat("must be uniform or zipf:S with 0 < S <= 10 "
                                        "(e.g. zipf:0.99), got \"", text, "\""));
  }
  dist.kind = Distribution::Kind::kZipf;
  dist.zipf_s = s;
  return dist;
}

absl::StatusOr<Mix> ParseMix(absl::string_view text) {
  Mix mix{0, 0};
  const absl::Status bad = Invalid(
      "mix", absl::StrCat("must be like read:95,append:5 (weights 0..1000000, not all 0), "
                          "got \"", text, "\""));
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, ':');
    int weight = 0;
    if (!absl::SimpleAtoi(kv.second, &weight) || weight < 0 || weight > 1'000'000) return bad;
    if (kv.first == "read") {
      mix.read = weight;
    } else if (kv.first == "append") {
      mix.append = weight;
    } else {
      return bad;
    }
  }
  if (mix.read + mix.append == 0) return bad;
  return mix;
}

std::string MixName(const Mix& mix) {
  return absl::StrCat("read:", mix.read, ",append:", mix.append);
}

std::string ReadOpName(ReadOp op) { return op == ReadOp::kGet ? "get" : "multiget"; }

std::string DistributionName(const Distribution& dist) {
  if (dist.kind == Distribution::Kind::kUniform) return "uniform";
  return absl::StrCat("zipf:", dist.zipf_s);
}

absl::Status ValidateLoadOptions(const LoadOptions& options) {
  if (absl::Status status = ValidateServer(options.server); !status.ok()) return status;
  if (options.dir.empty()) return Invalid("dir", "is required (a directory of *.log files)");
  if (options.copies < 1 || options.copies > 1000) {
    return Invalid("copies", absl::StrCat("must be 1..1000, got ", options.copies));
  }
  if (options.ids_out.empty()) return Invalid("ids_out", "must not be empty");
  if (options.batch_records < 1) return Invalid("batch_records", "must be positive");
  if (options.batch_bytes < 1) return Invalid("batch_bytes", "must be positive");
  if (options.timeout <= absl::ZeroDuration()) return Invalid("timeout", "must be positive");
  return absl::OkStatus();
}

absl::Status ValidateReadOptions(const ReadOptions& options) {
  if (absl::Status status = ValidateServer(options.server); !status.ok()) return status;
  if (options.ids_file.empty()) {
    return Invalid("ids", "is required (a file of record ids, as `load` writes)");
  }
  if (options.duration <= absl::ZeroDuration() || options.duration > absl::Hours(24)) {
    return Invalid("duration", absl::StrCat("must be in (0, 24h], got ",
                                            absl::FormatDuration(options.duration)));
  }
  if (options.max_ops < 0) return Invalid("max_ops", "must be >= 0 (0: no limit)");
  if (options.concurrency < 1 || options.concurrency > 1024) {
    return Invalid("concurrency", absl::StrCat("must be 1..1024, got ", options.concurrency));
  }
  if (options.connections < 1 || options.connections > 1024) {
    return Invalid("connections", absl::StrCat("must be 1..1024, got ", options.connections));
  }
  if (options.batch < 1 || options.batch > 10000) {
    return Invalid("batch", absl::StrCat("must be 1..10000, got ", options.batch));
  }
  if (options.mix.read < 0 || options.mix.append < 0 ||
      options.mix.read + options.mix.append <= 0) {
    return Invalid("mix", "needs a positive weight");
  }
  if (options.mix.append > 0 &&
      (options.append_category.empty() || options.append_category.size() > 128)) {
    return Invalid("append_category", "must be 1..128 characters");
  }
  if (options.timeout <= absl::ZeroDuration()) return Invalid("timeout", "must be positive");
  return absl::OkStatus();
}

}  // namespace dictlog::bench
