#include "server/store/catalog_convert.h"

namespace dictlog::store {
namespace {

// PoolOptions' fields are optional (unset: the default applies); the same in both.
template <typename To, typename From>
To ConvertPoolOptions(const From& from) {
  To to;
  if (from.has_compression_level()) to.set_compression_level(from.compression_level());
  if (from.has_dictionary_bytes()) to.set_dictionary_bytes(from.dictionary_bytes());
  if (from.has_storage_mode()) {
    to.set_storage_mode(static_cast<decltype(to.storage_mode())>(from.storage_mode()));
  }
  if (from.has_dictionary_mode()) {
    to.set_dictionary_mode(
        static_cast<decltype(to.dictionary_mode())>(from.dictionary_mode()));
  }
  if (from.has_block_bytes()) to.set_block_bytes(from.block_bytes());
  if (from.has_compact_compression_level()) {
    to.set_compact_compression_level(from.compact_compression_level());
  }
  if (from.has_max_age_seconds()) to.set_max_age_seconds(from.max_age_seconds());
  if (from.has_max_bytes()) to.set_max_bytes(from.max_bytes());
  if (from.has_drift_threshold_percent()) {
    to.set_drift_threshold_percent(from.drift_threshold_percent());
  }
  if (from.has_auto_upkeep()) to.set_auto_upkeep(from.auto_upkeep());
  if (from.has_upkeep_min_gain_percent()) {
    to.set_upkeep_min_gain_percent(from.upkeep_min_gain_percent());
  }
  return to;
}

template <typename To, typename From>
To ConvertEvaluation(const From& from) {
  To to;
  to.set_records(from.records());
  to.set_raw_bytes(from.raw_bytes());
  to.set_ratio(from.ratio());
  to.set_baseline_dictionary_id(from.baseline_dictionary_id());
  to.set_baseline_ratio(from.baseline_ratio());
  to.set_gain(from.gain());
  to.set_compress_mb_per_s(from.compress_mb_per_s());
  to.set_decompress_mb_per_s(from.decompress_mb_per_s());
  to.set_samples_used(from.samples_used());
  to.set_samples_excluded(from.samples_excluded());
  to.set_train_seconds(from.train_seconds());
  return to;
}

template <typename To, typename From>
To ConvertRecompressStatus(const From& from) {
  To to;
  to.set_pool(from.pool());
  to.set_state(static_cast<decltype(to.state())>(from.state()));
  to.set_target_dictionary_id(from.target_dictionary_id());
  to.set_records_done(from.records_done());
  to.set_records_total(from.records_total());
  to.set_records_rewritten(from.records_rewritten());
  to.set_bytes_before(from.bytes_before());
  to.set_bytes_after(from.bytes_after());
  to.set_error(from.error());
  to.set_unreadable(from.unreadable());
  *to.mutable_unreadable_seqs() = from.unreadable_seqs();
  to.set_records_kept(from.records_kept());
  return to;
}

}  // namespace

storage::PoolOptions ToCatalog(const v1::PoolOptions& options) {
  return ConvertPoolOptions<storage::PoolOptions>(options);
}
v1::PoolOptions FromCatalog(const storage::PoolOptions& options) {
  return ConvertPoolOptions<v1::PoolOptions>(options);
}

storage::DictionaryEvaluation ToCatalog(const v1::DictionaryEvaluation& evaluation) {
  return ConvertEvaluation<storage::DictionaryEvaluation>(evaluation);
}
v1::DictionaryEvaluation FromCatalog(const storage::DictionaryEvaluation& evaluation) {
  return ConvertEvaluation<v1::DictionaryEvaluation>(evaluation);
}

storage::RecompressStatus ToCatalog(const v1::RecompressStatus& status) {
  return ConvertRecompressStatus<storage::RecompressStatus>(status);
}
v1::RecompressStatus FromCatalog(const storage::RecompressStatus& status) {
  return ConvertRecompressStatus<v1::RecompressStatus>(status);
}

}  // namespace dictlog::store
