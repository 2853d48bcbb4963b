// LookupHook: a DictionaryLookup that calls a test's function with the ids of each
// lookup before passing it on. LogEngine reads through one when a test installs a hook
// (LogEngine::SetLookupHookForTest): the pause point between "the stored values are
// read" and "their dictionaries are looked up", where a test interleaves a
// re-compression and a gc deterministically.
//
// Thread safety: as the wrapped lookup; `hook` is called on the reading thread and
// must be safe to call from every thread that reads.
#ifndef DICTLOG_SERVER_ENGINE_LOOKUP_HOOK_H_
#define DICTLOG_SERVER_ENGINE_LOOKUP_HOOK_H_

#include <functional>
#include <memory>
#include <utility>

#include "absl/types/span.h"
#include "codec/dictionary.h"

namespace dictlog::engine {

class LookupHook : public codec::DictionaryLookup {
 public:
  using Hook = std::function<void(absl::Span<const uint32_t> ids)>;

  // `lookup` is borrowed and must outlive this.
  LookupHook(const codec::DictionaryLookup* lookup, Hook hook)
      : lookup_(lookup), hook_(std::move(hook)) {}

  std::shared_ptr<const codec::DecoderDictionary> Find(uint32_t id) const override {
    hook_({&id, 1});
    return lookup_->Find(id);
  }
  void FindMany(absl::Span<const uint32_t> ids,
                absl::FunctionRef<void(Dictionaries)> use) const override {
    hook_(ids);
    lookup_->FindMany(ids, use);
  }

 private:
  const codec::DictionaryLookup* const lookup_;
  const Hook hook_;
};

}  // namespace dictlog::engine

#endif  // DICTLOG_SERVER_ENGINE_LOOKUP_HOOK_H_
