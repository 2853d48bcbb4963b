#include "server/dictionary/dictionary_set.h"

#include "absl/strings/str_cat.h"

namespace dictlog::dictionary {

absl::Status DictionarySet::Add(std::shared_ptr<const codec::DecoderDictionary> dictionary) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = by_id_.emplace(dictionary->id(), dictionary);
  if (!inserted && it->second->content() != dictionary->content()) {
    return absl::AlreadyExistsError(absl::StrCat(
        "a different dictionary with id ", dictionary->id(), " is already loaded"));
  }
  return absl::OkStatus();
}

std::shared_ptr<const codec::DecoderDictionary> DictionarySet::Find(uint32_t id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

void DictionarySet::Remove(uint32_t id) {
  absl::MutexLock lock(&mu_);
  by_id_.erase(id);
}

size_t DictionarySet::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return by_id_.size();
}

}  // namespace dictlog::dictionary
