// zstd dictionaries in the two forms the codec uses: DecoderDictionary (a ZSTD_DDict)
// and EncoderDictionary (a ZSTD_CDict at one compression level), plus the lookup
// interface through which decoding finds the dictionary a frame names.
//
// Dictionary ids are unique across a server and lie in [kMinDictionaryId,
// kMaxDictionaryId]; the zstd format reserves the others. Both classes are immutable
// after Create and safe to share between threads (hold them by shared_ptr).
#ifndef DICTLOG_CODEC_DICTIONARY_H_
#define DICTLOG_CODEC_DICTIONARY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

struct ZSTD_DDict_s;
struct ZSTD_CDict_s;

namespace dictlog::codec {

inline constexpr uint32_t kMinDictionaryId = 32768;
inline constexpr uint32_t kMaxDictionaryId = 0x7fffffff;

// A compact dictionary (docs/adr/0005) has all three sequence tables at an accuracy log
// of at most this; zstd's trainer writes 8 and 9. Frames compressed with a compact
// dictionary store their literals raw, so decoding one never touches the dictionary's
// 8 KB Huffman decoding table: a cold compact dictionary costs a few cache lines.
inline constexpr int kCompactMaxAccuracyLog = 6;

// Whether formatted dictionary bytes are compact (false if they do not parse).
bool IsCompactDictionary(absl::string_view content);

// Reads the dictionary id from standard zstd dictionary bytes. INVALID_ARGUMENT if the
// bytes are not a zstd dictionary or the id lies outside the allowed range.
absl::StatusOr<uint32_t> DictionaryIdOf(absl::string_view content);

class DecoderDictionary {
 public:
  // INVALID_ARGUMENT if `content` is not a valid zstd dictionary with an allowed id.
  static absl::StatusOr<std::shared_ptr<const DecoderDictionary>> Create(
      std::string content);

  DecoderDictionary(const DecoderDictionary&) = delete;
  DecoderDictionary& operator=(const DecoderDictionary&) = delete;
  ~DecoderDictionary();

  uint32_t id() const { return id_; }
  bool compact() const { return compact_; }
  const ZSTD_DDict_s* ddict() const { return ddict_; }
  // sizeof the ZSTD_DDict object, kept here so that prefetching its lines does not
  // first read its (cold) header.
  size_t ddict_bytes() const { return ddict_bytes_; }
  // The dictionary bytes (the copy that follows the tables in the arena block).
  absl::string_view content() const { return content_; }
  // Bytes held: the arena block (decoded tables plus the content).
  size_t memory_bytes() const;

 private:
  explicit DecoderDictionary(uint32_t id) : id_(id) {}

  const uint32_t id_;
  // One DictionaryArena block: the ZSTD_DDict (built in place, referencing the copy of
  // the dictionary bytes placed right after it). Freed with the object.
  void* block_ = nullptr;
  size_t block_request_ = 0;
  const ZSTD_DDict_s* ddict_ = nullptr;
  absl::string_view content_;
  bool compact_ = false;
  size_t ddict_bytes_ = 0;
};

class EncoderDictionary {
 public:
  // INVALID_ARGUMENT if `content` is not a valid zstd dictionary with an allowed id.
  static absl::StatusOr<std::shared_ptr<const EncoderDictionary>> Create(
      absl::string_view content, int compression_level);

  EncoderDictionary(const EncoderDictionary&) = delete;
  EncoderDictionary& operator=(const EncoderDictionary&) = delete;
  ~EncoderDictionary();

  uint32_t id() const { return id_; }
  int compression_level() const { return level_; }
  // Frames made with a compact dictionary keep their literals raw (see above).
  bool compact() const { return compact_; }
  const ZSTD_CDict_s* cdict() const { return cdict_; }

 private:
  EncoderDictionary(uint32_t id, int level) : id_(id), level_(level) {}

  const uint32_t id_;
  const int level_;
  bool compact_ = false;
  ZSTD_CDict_s* cdict_ = nullptr;
};

// Finds decoder dictionaries by id. Implementations are thread-safe.
class DictionaryLookup {
 public:
  using Dictionaries = absl::Span<const DecoderDictionary* const>;

  virtual ~DictionaryLookup() = default;
  // The dictionary with this id, or nullptr if none is known.
  virtual std::shared_ptr<const DecoderDictionary> Find(uint32_t id) const = 0;
  // Calls `use` once with the dictionary of each id (nullptr for id 0 and unknown ids),
  // valid only during the call. The batch path's lookup: an implementation may keep
  // its dictionaries alive by holding a lock during `use` rather than by a reference
  // count per id (DictionaryCache does), so `use` must not call into this lookup.
  // This default calls Find for each run of equal ids.
  virtual void FindMany(absl::Span<const uint32_t> ids,
                        absl::FunctionRef<void(Dictionaries)> use) const;
};

}  // namespace dictlog::codec

#endif  // DICTLOG_CODEC_DICTIONARY_H_
