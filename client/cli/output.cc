#include "client/cli/output.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace dictlog::cli {
namespace {

double Ratio(uint64_t raw, uint64_t stored) {
  return stored == 0 ? 0.0 : static_cast<double>(raw) / static_cast<double>(stored);
}

// Length of the UTF-8 sequence starting with `lead`, 0 if `lead` cannot start one.
int SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

// "full", "compact", "auto" ("-" for unspecified).
std::string ModeName(v1::DictionaryMode mode) {
  if (mode == v1::DICTIONARY_MODE_UNSPECIFIED) return "-";
  return absl::AsciiStrToLower(absl::StripPrefix(v1::DictionaryMode_Name(mode),
                                                 "DICTIONARY_MODE_"));
}

std::string StorageName(v1::StorageMode mode) {
  return mode == v1::STORAGE_MODE_BLOCK ? "block" : "record";
}

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const int n = SequenceLength(lead);
    if (n == 0 || i + n > text.size()) return false;
    uint32_t cp = n == 1 ? lead : lead & (0x7f >> n);
    for (int k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

std::string JsonString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string RecordJson(const v1::Record& record) {
  std::string out = absl::StrCat("{\"id\":", JsonString(record.id()),
                                 ",\"category\":", JsonString(record.category()));
  if (record.has_append_time_unix_ms()) {
    absl::StrAppend(&out, ",\"append_time_unix_ms\":", record.append_time_unix_ms());
  }
  if (IsValidUtf8(record.payload())) {
    absl::StrAppend(&out, ",\"payload\":", JsonString(record.payload()), "}");
  } else {
    absl::StrAppend(&out, ",\"payload_base64\":\"", absl::Base64Escape(record.payload()),
                    "\"}");
  }
  return out;
}

std::string PoolJson(const v1::PoolInfo& pool) {
  const v1::PoolStats& s = pool.stats();
  return absl::StrFormat(
      "{\"pool\":%s,\"records\":%d,\"raw_bytes\":%d,\"stored_bytes\":%d,\"ratio\":%.4f,"
      "\"reads\":%d,\"active_dictionary_id\":%d,\"active_dictionary_mode\":%s,"
      "\"next_dictionary_mode\":%s,\"dictionary_mode_reason\":%s,"
      "\"compression_level\":%d,\"compact_compression_level\":%d,"
      "\"dictionary_bytes\":%d,\"dictionary_mode\":%s,"
      "\"storage_mode\":%s,\"block_bytes\":%d,\"max_age_seconds\":%d,\"max_bytes\":%d,"
      "\"oldest_retained_id\":%s,\"oldest_retained_time_unix_ms\":%d,"
      "\"drift_recent_ratio\":%.4f,\"drift_activation_ratio\":%.4f,"
      "\"drift_degraded_percent\":%.2f,\"drift_retrains\":%d,"
      "\"drift_threshold_percent\":%d,\"auto_upkeep\":%s,\"upkeep_min_gain_percent\":%d,"
      "\"drift_window_full\":%s,\"drift_reactivations\":%d,\"damaged_at_open\":%s}",
      JsonString(pool.name()), s.records(), s.raw_bytes(), s.stored_bytes(),
      Ratio(s.raw_bytes(), s.stored_bytes()), pool.reads(), pool.active_dictionary_id(),
      JsonString(ModeName(pool.active_dictionary_mode())),
      JsonString(ModeName(pool.next_dictionary_mode())),
      JsonString(pool.dictionary_mode_reason()), pool.options().compression_level(),
      pool.options().compact_compression_level(), pool.options().dictionary_bytes(),
      JsonString(ModeName(pool.options().dictionary_mode())),
      JsonString(StorageName(pool.options().storage_mode())),
      pool.options().storage_mode() == v1::STORAGE_MODE_BLOCK ? pool.options().block_bytes()
                                                              : 0,
      pool.options().max_age_seconds(), pool.options().max_bytes(),
      JsonString(pool.oldest_retained_id()), pool.oldest_retained_time_unix_ms(),
      pool.drift_recent_ratio(), pool.drift_activation_ratio(),
      pool.drift_degraded_percent(), pool.drift_retrains(),
      pool.options().drift_threshold_percent(),
      pool.options().auto_upkeep() ? "true" : "false",
      pool.options().upkeep_min_gain_percent(), pool.drift_window_full() ? "true" : "false",
      pool.drift_reactivations(), JsonString(pool.damaged_at_open()));
}

namespace {

// "web/12 2026-11-24T21:00:00Z", the id alone without a time, "-" without a record.
std::string OldestRetained(const v1::PoolInfo& pool) {
  if (pool.oldest_retained_id().empty()) return "-";
  if (pool.oldest_retained_time_unix_ms() == 0) return pool.oldest_retained_id();
  return absl::StrCat(pool.oldest_retained_id(), " ",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                       absl::FromUnixMillis(pool.oldest_retained_time_unix_ms()),
                                       absl::UTCTimeZone()));
}

// The drift signal: how many percent recent appends do worse than the active
// dictionary's evaluation ("+12.3%"), "filling" while the window holds too little to
// judge (after an activation or a restart), "-" while nothing is measured.
std::string Drift(double recent_ratio, double activation_ratio, bool full,
                  double degraded_percent) {
  if (recent_ratio == 0 || activation_ratio == 0) return "-";
  if (!full) return "filling";
  return absl::StrFormat("%+.1f%%", degraded_percent);
}

}  // namespace

std::string PoolsTable(const std::vector<v1::PoolInfo>& pools) {
  size_t width = 5;
  for (const v1::PoolInfo& pool : pools) width = std::max(width, pool.name().size());
  const auto row = [&](absl::string_view name, uint64_t records, uint64_t raw,
                       uint64_t stored, absl::string_view storage, absl::string_view dict,
                       absl::string_view drift, absl::string_view oldest) {
    return absl::StrFormat("%-*s %10d %13d %13d %6.2f  %-11s %-16s %7s %s\n", width, name,
                           records, raw, stored, Ratio(raw, stored), storage, dict, drift,
                           oldest);
  };
  std::string out = absl::StrFormat("%-*s %10s %13s %13s %6s  %-11s %-16s %7s %s\n", width,
                                    "POOL", "RECORDS", "RAW_BYTES", "STORED_BYTES", "RATIO",
                                    "STORAGE", "DICT", "DRIFT", "OLDEST");
  uint64_t records = 0, raw = 0, stored = 0;
  for (const v1::PoolInfo& pool : pools) {
    const v1::PoolStats& s = pool.stats();
    const uint32_t dict = pool.active_dictionary_id();
    const bool block = pool.options().storage_mode() == v1::STORAGE_MODE_BLOCK;
    out += row(pool.name(), s.records(), s.raw_bytes(), s.stored_bytes(),
               block ? absl::StrCat("block ", pool.options().block_bytes()) : "record",
               dict == 0 ? "-"
                         : absl::StrCat(dict, " (", ModeName(pool.active_dictionary_mode()),
                                        ")"),
               Drift(pool.drift_recent_ratio(), pool.drift_activation_ratio(),
                     pool.drift_window_full(), pool.drift_degraded_percent()),
               OldestRetained(pool));
    records += s.records();
    raw += s.raw_bytes();
    stored += s.stored_bytes();
  }
  out += row("TOTAL", records, raw, stored, "", "", "", "");
  for (const v1::PoolInfo& pool : pools) {
    if (pool.damaged_at_open().empty()) continue;
    absl::StrAppend(&out, "warning: pool '", pool.name(),
                    "' was found damaged when the store opened (", pool.damaged_at_open(),
                    "); reads of the damaged records are DATA_LOSS (docs/operations.md, "
                    "\"A pool damaged at open\")\n");
  }
  return out;
}

std::string DictionaryJson(const v1::DictionaryInfo& info) {
  const v1::DictionaryEvaluation& e = info.evaluation();
  std::string import;  // Only ImportDictionary's answer says what became of the id.
  if (!info.import_note().empty()) {
    import = absl::StrFormat(",\"imported_id\":%d,\"import_existing\":%s,\"import_note\":%s",
                             info.imported_id(), info.import_existing() ? "true" : "false",
                             JsonString(info.import_note()));
  }
  return absl::StrFormat(
      "{\"id\":%d,\"pool\":%s,\"mode\":%s,\"size_bytes\":%d,\"content_check\":%d,"
      "\"created_unix_ms\":%d,\"active\":%s,"
      "\"records\":%d,\"source\":%s,\"evaluated_ratio\":%.4f,\"baseline_ratio\":%.4f,"
      "\"gain\":%.4f,\"samples_used\":%d,\"samples_excluded\":%d,"
      "\"train_seconds\":%.3f,\"recent_ratio\":%.4f,\"recent_raw_bytes\":%d,"
      "\"degraded_percent\":%.2f,\"recent_window_full\":%s%s}",
      info.id(), JsonString(info.pool()), JsonString(ModeName(info.mode())),
      info.size_bytes(), info.content_check(), info.created_unix_ms(),
      info.active() ? "true" : "false", info.records(), JsonString(info.source()),
      e.ratio(), e.baseline_ratio(), e.gain(), e.samples_used(), e.samples_excluded(),
      e.train_seconds(), info.recent_ratio(), info.recent_raw_bytes(),
      info.degraded_percent(), info.recent_window_full() ? "true" : "false", import);
}

std::string DictionariesTable(const std::vector<v1::DictionaryInfo>& infos) {
  std::string out = absl::StrFormat(
      "%-8s %-16s %8s %-20s %-6s %10s %-7s %7s %8s %7s %7s\n", "ID", "POOL", "SIZE",
      "CREATED", "ACTIVE", "RECORDS", "SOURCE", "RATIO", "GAIN", "RECENT", "DRIFT");
  for (const v1::DictionaryInfo& info : infos) {
    const absl::Time created = absl::FromUnixMillis(info.created_unix_ms());
    const bool evaluated = info.has_evaluation();
    out += absl::StrFormat(
        "%-8d %-16s %8d %-20s %-6s %10d %-7s %7s %8s %7s %7s\n", info.id(), info.pool(),
        info.size_bytes(), absl::FormatTime("%Y-%m-%d %H:%M:%S", created, absl::UTCTimeZone()),
        info.active() ? "yes" : "no", info.records(), info.source(),
        evaluated ? absl::StrFormat("%.3f", info.evaluation().ratio()) : "-",
        evaluated ? absl::StrFormat("%+.1f%%", 100 * info.evaluation().gain()) : "-",
        info.recent_ratio() > 0 ? absl::StrFormat("%.3f", info.recent_ratio()) : "-",
        Drift(info.recent_ratio(), info.recent_ratio(), info.recent_window_full(),
              info.degraded_percent()));
  }
  return out;
}

std::string CacheLine(const v1::DictionaryCacheStats& s) {
  return absl::StrFormat(
      "dictionary cache: %d decoded (%d pinned), %.1f of %.1f MB, %d hits, %d misses, "
      "%d builds, %d evictions",
      s.entries(), s.pinned(), s.bytes() / 1e6, s.budget_bytes() / 1e6, s.hits(),
      s.misses(), s.builds(), s.evictions());
}

std::string RecompressLine(const v1::RecompressStatus& status) {
  std::string unreadable;
  if (status.unreadable() > 0) {
    std::vector<std::string> ids;
    for (uint64_t seq : status.unreadable_seqs()) ids.push_back(absl::StrCat(status.pool(), "/", seq));
    if (status.unreadable() > static_cast<uint64_t>(status.unreadable_seqs_size())) {
      ids.push_back("...");
    }
    unreadable = absl::StrCat(", ", status.unreadable(),
                              " unreadable (DATA_LOSS), left as stored: ", absl::StrJoin(ids, " "));
  }
  const std::string kept =
      status.records_kept() == 0
          ? ""
          : absl::StrCat(", ", status.records_kept(),
                         " kept (an earlier dictionary stores them smaller)");
  return absl::StrFormat(
      "recompress %s: %s %d/%d records, %d re-encoded, %.1f KB -> %.1f KB, dictionary %d%s%s%s",
      status.pool(), v1::RecompressStatus::State_Name(status.state()),
      status.records_done(), status.records_total(), status.records_rewritten(),
      status.bytes_before() / 1e3, status.bytes_after() / 1e3,
      status.target_dictionary_id(), kept, unreadable,
      status.error().empty() ? "" : absl::StrCat(" (", status.error(), ")"));
}

}  // namespace dictlog::cli
