#include "server/store/keys.h"

namespace dictlog::store {

void PutFixed32BE(uint32_t value, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

void PutFixed64BE(uint64_t value, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

uint32_t GetFixed32BE(const char* p) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(p[i]);
  return value;
}

uint64_t GetFixed64BE(const char* p) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | static_cast<unsigned char>(p[i]);
  return value;
}

std::string RecordKey(uint32_t pool_id, uint64_t seq) {
  std::string key;
  key.reserve(kRecordKeyBytes);
  PutFixed32BE(pool_id, &key);
  PutFixed64BE(seq, &key);
  return key;
}

bool ParseRecordKey(absl::string_view key, uint32_t* pool_id, uint64_t* seq) {
  if (key.size() != kRecordKeyBytes) return false;
  *pool_id = GetFixed32BE(key.data());
  *seq = GetFixed64BE(key.data() + 4);
  return true;
}

std::string IndexedBlockKey(uint32_t pool_id, uint64_t first_seq, uint64_t last_seq) {
  std::string key;
  key.reserve(kIndexedBlockKeyBytes);
  PutFixed32BE(pool_id, &key);
  PutFixed64BE(first_seq, &key);
  PutFixed64BE(last_seq, &key);
  return key;
}

bool ParseIndexedBlockKey(absl::string_view key, uint32_t* pool_id, uint64_t* first_seq,
                          uint64_t* last_seq) {
  if (key.size() != kIndexedBlockKeyBytes) return false;
  *pool_id = GetFixed32BE(key.data());
  *first_seq = GetFixed64BE(key.data() + 4);
  *last_seq = GetFixed64BE(key.data() + 12);
  return true;
}

std::string PoolKey(absl::string_view pool_name) {
  std::string key(1, kPoolPrefix);
  key.append(pool_name.data(), pool_name.size());
  return key;
}

std::string CategoryKeyPrefix(uint32_t pool_id) {
  std::string key(1, kCategoryPrefix);
  PutFixed32BE(pool_id, &key);
  return key;
}

std::string CategoryKey(uint32_t pool_id, absl::string_view category) {
  std::string key = CategoryKeyPrefix(pool_id);
  key.append(category.data(), category.size());
  return key;
}

std::string LogPositionKey(uint32_t partition) {
  std::string key(1, kLogPositionPrefix);
  PutFixed32BE(partition, &key);
  return key;
}

std::string CounterKey(uint32_t pool_id) {
  std::string key;
  PutFixed32BE(pool_id, &key);
  return key;
}

std::string DictionaryCounterKey(uint32_t dictionary_id) {
  std::string key(1, kDictionaryCounterPrefix);
  PutFixed32BE(dictionary_id, &key);
  return key;
}

std::string SeqCeilingKey(uint32_t pool_id) {
  std::string key(1, kSeqCeilingPrefix);
  PutFixed32BE(pool_id, &key);
  return key;
}

std::string LostSeqsPrefix(uint32_t pool_id) {
  std::string key(1, kLostSeqsPrefix);
  PutFixed32BE(pool_id, &key);
  return key;
}

std::string LostSeqsKey(uint32_t pool_id, uint64_t first_seq) {
  std::string key = LostSeqsPrefix(pool_id);
  PutFixed64BE(first_seq, &key);
  return key;
}

std::string DeletedPoolKey(absl::string_view pool_name) {
  std::string key(1, kDeletedPoolPrefix);
  key.append(pool_name.data(), pool_name.size());
  return key;
}

std::string RecompressKey(uint32_t pool_id) {
  std::string key(1, kRecompressPrefix);
  PutFixed32BE(pool_id, &key);
  return key;
}

std::string DictionaryKey(uint32_t dictionary_id) {
  std::string key;
  PutFixed32BE(dictionary_id, &key);
  return key;
}

std::string RequestKey(absl::string_view principal, absl::string_view request_id) {
  if (principal.empty()) return std::string(request_id);
  std::string key;
  key.reserve(2 + principal.size() + request_id.size());
  key.push_back(kScopedRequestPrefix);
  key.push_back(static_cast<char>(principal.size()));
  key.append(principal.data(), principal.size());
  key.append(request_id.data(), request_id.size());
  return key;
}

}  // namespace dictlog::store
