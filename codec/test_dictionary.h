// Test-only helpers: synthetic log lines and a real zstd dictionary trained on them
// with a chosen id. Thread-safe (no shared state).
#ifndef DICTLOG_CODEC_TEST_DICTIONARY_H_
#define DICTLOG_CODEC_TEST_DICTIONARY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codec/dictionary.h"

namespace dictlog::codec {

// `count` deterministic log-like lines of 60-200 bytes; `seed` varies their content.
std::vector<std::string> SyntheticLogLines(int count, uint32_t seed);

// Trains a dictionary of about `dict_bytes` on `samples` with id `dictionary_id`.
// Aborts the test binary if training fails (a broken fixture, not a test outcome).
std::string TrainDictionaryForTest(const std::vector<std::string>& samples,
                                   size_t dict_bytes, uint32_t dictionary_id);

// A DictionaryLookup over a map (a fake for tests; not thread-safe while adding).
class MapDictionaryLookup : public DictionaryLookup {
 public:
  void Add(std::shared_ptr<const DecoderDictionary> dict) { dicts_[dict->id()] = dict; }
  std::shared_ptr<const DecoderDictionary> Find(uint32_t id) const override {
    auto it = dicts_.find(id);
    return it == dicts_.end() ? nullptr : it->second;
  }

 private:
  std::map<uint32_t, std::shared_ptr<const DecoderDictionary>> dicts_;
};

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_TEST_DICTIONARY_H_
