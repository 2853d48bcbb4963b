// DictionarySet: the decoder dictionaries a server knows, by id. Decoding looks up the
// id stamped in each frame here (never zstd's refMultipleDDicts; see build notes).
//
// Thread safety: all methods may be called concurrently; readers do not block each
// other.
#ifndef DICTLOG_SERVER_DICTIONARY_DICTIONARY_SET_H_
#define DICTLOG_SERVER_DICTIONARY_DICTIONARY_SET_H_

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/codec/dictionary.h"

namespace dictlog::dictionary {

class DictionarySet : public codec::DictionaryLookup {
 public:
  DictionarySet() = default;
  DictionarySet(const DictionarySet&) = delete;
  DictionarySet& operator=(const DictionarySet&) = delete;

  // ALREADY_EXISTS if a different dictionary has the same id; adding the same bytes
  // again is a no-op.
  absl::Status Add(std::shared_ptr<const codec::DecoderDictionary> dictionary)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets the dictionary; holders of it keep their reference.
  void Remove(uint32_t id) ABSL_LOCKS_EXCLUDED(mu_);

  std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, std::shared_ptr<const codec::DecoderDictionary>> by_id_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace dictlog::dictionary

#endif  // DICTLOG_SERVER_DICTIONARY_DICTIONARY_SET_H_
