// Output formats of the dictlog CLI: one JSON object per line (records, pools) and
// the human-readable pools table. Stateless and thread-safe.
#ifndef DICTLOG_CLIENT_CLI_OUTPUT_H_
#define DICTLOG_CLIENT_CLI_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/dictlog.pb.h"

namespace dictlog::cli {

// `text` as a JSON string literal, quotes included. `text` must be valid UTF-8.
std::string JsonString(absl::string_view text);
bool IsValidUtf8(absl::string_view text);

// {"id":..,"category":..,"append_time_unix_ms":..,"payload":..} (the time only when
// the record has one); a payload that is not valid UTF-8 is written as
// "payload_base64" instead.
std::string RecordJson(const v1::Record& record);

// {"pool":..,"records":..,"raw_bytes":..,"stored_bytes":..,"ratio":..,
//  "active_dictionary_id":..,"compression_level":..,"dictionary_bytes":..,...,
//  "max_age_seconds":..,"max_bytes":..,"oldest_retained_id":..,
//  "oldest_retained_time_unix_ms":..,"drift_recent_ratio":..,"drift_activation_ratio":..,
//  "drift_degraded_percent":..,"drift_retrains":..,"drift_threshold_percent":..,
//  "auto_upkeep":..,"upkeep_min_gain_percent":..,"drift_window_full":..,
//  "drift_reactivations":..,"damaged_at_open":..} (damaged_at_open: "" unless the
//  pool's newest records were unreadable when the store opened)
std::string PoolJson(const v1::PoolInfo& pool);

// Columns POOL RECORDS RAW_BYTES STORED_BYTES RATIO STORAGE DICT DRIFT (how many
// percent recent appends compress worse than the active dictionary's evaluation;
// "filling" while its window holds too little to judge) OLDEST
// (the oldest retained id and its append time), one row a pool, then TOTAL, then a
// warning line for each pool found damaged at open (PoolInfo.damaged_at_open).
std::string PoolsTable(const std::vector<v1::PoolInfo>& pools);

// {"id":..,"pool":..,"mode":..,"size_bytes":..,"content_check":..,"created_unix_ms":..,
//  "active":..,"records":..,
//  "source":..,"evaluated_ratio":..,"baseline_ratio":..,"gain":..,"samples_used":..,
//  "samples_excluded":..,"train_seconds":..,"recent_ratio":..,"recent_raw_bytes":..,
//  "degraded_percent":..,"recent_window_full":..} (the last four: the active
//  dictionary's drift signal)
std::string DictionaryJson(const v1::DictionaryInfo& info);
// Columns ID POOL SIZE CREATED ACTIVE RECORDS SOURCE RATIO GAIN RECENT DRIFT, one row
// each (RECENT and DRIFT for the active dictionary once measured).
std::string DictionariesTable(const std::vector<v1::DictionaryInfo>& infos);
// "dictionary cache: 12 decoded (10 pinned), 0.5 of 256.0 MB, 9912 hits, 14 misses, ..."
std::string CacheLine(const v1::DictionaryCacheStats& stats);
// "recompress POOL: RUNNING 1200/2000 records, 800 re-encoded, 93.1 KB -> 41.0 KB".
std::string RecompressLine(const v1::RecompressStatus& status);

}  // namespace dictlog::cli

#endif  // DICTLOG_CLIENT_CLI_OUTPUT_H_
