// The crash test's load: log-like text from the loghub samples; writer threads that
// append it to dictlogd (Append and AppendBatch, 1-50 records a call, categories mixed
// within a batch) while recording every call in a CrashModel; and the dictionary
// lifecycle step (train + activate, re-compress) run just before some kills.
//
// Thread safety: a Corpus is immutable after Load() and may be shared by any number of
// threads. A Writer is driven by one thread (Run); Stop() may be called from any
// thread.
#ifndef DICTLOG_TESTS_RELIABILITY_CRASH_WORKLOAD_H_
#define DICTLOG_TESTS_RELIABILITY_CRASH_WORKLOAD_H_

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "tests/reliability/crash_model.h"

namespace dictlog::crash {

// Lines of some loghub files, one category per file (named after the file).
class Corpus {
 public:
  // Reads up to `max_lines` non-empty lines of `<dir>/<category>.log` for each
  // category. NOT_FOUND if a file is missing or empty.
  static absl::StatusOr<Corpus> Load(const std::string& dir,
                                     const std::vector<std::string>& categories,
                                     size_t max_lines);

  const std::vector<std::string>& categories() const { return categories_; }
  const std::vector<std::string>& lines(size_t category) const { return lines_[category]; }

 private:
  std::vector<std::string> categories_;
  std::vector<std::vector<std::string>> lines_;
};

struct WriterOptions {
  uint32_t cycle = 0;
  uint32_t writer = 0;
  uint64_t seed = 0;
  // The category to append each corpus file's lines under (empty: the corpus's names).
  std::vector<std::string> categories;
  // Fraction of calls that are Append (one record); the rest are AppendBatch of
  // 1..max_batch records. Default 0.3, 50.
  double append_fraction = 0.3;
  uint32_t max_batch = 50;
  // Bounds of one Run, whatever happens. Default 1,000,000 calls, 120 s.
  uint64_t max_calls = 1000000;
  absl::Duration max_time = absl::Seconds(120);
};

// What a writer saw; errors are only expected once the server was killed.
struct WriterResult {
  uint64_t calls = 0;
  uint64_t acked_records = 0;
  // Calls that failed before the kill, or acknowledgements the model rejected.
  uint64_t unexpected_errors = 0;
  std::string first_error;
};

class Writer {
 public:
  // `corpus`, `model` and `killed` are borrowed and must outlive the writer. `killed`
  // is set by the thread that kills the server, before the kill.
  Writer(const client::ClientOptions& client, const Corpus* corpus, CrashModel* model,
         const std::atomic<bool>* killed, WriterOptions options);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Appends until a call fails, Stop() is called or a bound is reached.
  WriterResult Run();
  void Stop() { stop_.store(true); }

 private:
  std::vector<SentRecord> MakeBatch(uint32_t batch, uint32_t size);
  // One call; false when the writer should stop.
  bool CallOnce(uint32_t batch, WriterResult* result);
  absl::StatusOr<std::vector<std::string>> Send(const std::vector<SentRecord>& records,
                                                bool single) const;

  const client::Client client_;
  const Corpus* const corpus_;
  CrashModel* const model_;
  const std::atomic<bool>* const killed_;
  const WriterOptions options_;
  std::mt19937_64 rng_;
  std::atomic<bool> stop_{false};
};

// One dictionary-lifecycle step on one pool, as an operator would run it: delete the
// dictionaries nothing references any more (server-wide gc), train and activate a new
// one, then start re-encoding the pool's records with it.
struct LifecycleResult {
  std::string pool;
  // The GcDictionaries call was answered, deleting this many.
  bool gc_answered = false;
  uint64_t gc_deleted = 0;
  // Of an answered TrainDictionary (0: none answered).
  uint32_t dictionary_id = 0;
  bool activated = false;
  // The Recompress call was answered.
  bool recompress_started = false;
  // TrainDictionary answered FAILED_PRECONDITION (the pool holds too little data).
  bool too_little_data = false;
  // A call that failed before the kill.
  std::string unexpected_error;
};

// Runs the step through its own client; blocks until every call is answered or one
// fails. `killed` (borrowed) as for Writer. Safe to run on any thread.
LifecycleResult RunLifecycle(const client::ClientOptions& client, const std::string& pool,
                             const std::atomic<bool>* killed);

}  // namespace dictlog::crash

#endif  // DICTLOG_TESTS_RELIABILITY_CRASH_WORKLOAD_H_
