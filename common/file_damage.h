// Test-only: damage files the way a bad disk or a torn write would, for recovery tests
// (a RocksDB write-ahead log or table file flipped or cut). Call from the test thread.
#ifndef DICTLOG_COMMON_FILE_DAMAGE_H_
#define DICTLOG_COMMON_FILE_DAMAGE_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace dictlog {

// The largest file named *`extension` (".sst") in `dir`; empty if there is none.
inline std::string LargestFile(const std::string& dir, const std::string& extension) {
  std::string file;
  uintmax_t largest = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == extension && entry.file_size() >= largest) {
      largest = entry.file_size();
      file = entry.path().string();
    }
  }
  return file;
}

// The largest write-ahead log (*.log) in `dir`; empty if there is none.
inline std::string LargestWal(const std::string& dir) { return LargestFile(dir, ".log"); }

// XORs the byte at `offset` of `file` with `mask` (not 0).
inline void FlipByte(const std::string& file, uint64_t offset, uint8_t mask = 0x5a) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  const char c = static_cast<char>(f.get());
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ static_cast<char>(mask)));
}

}  // namespace dictlog

#endif  // DICTLOG_COMMON_FILE_DAMAGE_H_
