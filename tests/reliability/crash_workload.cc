#include "tests/reliability/crash_workload.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "training/files.h"

namespace dictlog::crash {

absl::StatusOr<Corpus> Corpus::Load(const std::string& dir,
                                    const std::vector<std::string>& categories,
                                    size_t max_lines) {
  Corpus corpus;
  for (const std::string& category : categories) {
    const std::string path = absl::StrCat(dir, "/", category, ".log");
    trainer::LineOptions line_options;
    line_options.skip_empty = true;
    absl::StatusOr<std::vector<std::string>> read = trainer::ReadLines(path, line_options);
    std::vector<std::string> lines = read.ok() ? *std::move(read) : std::vector<std::string>();
    if (lines.size() > max_lines) lines.resize(max_lines);
    if (lines.empty()) return absl::NotFoundError(absl::StrCat("no lines in ", path));
    corpus.categories_.push_back(category);
    corpus.lines_.push_back(std::move(lines));
  }
  return corpus;
}

Writer::Writer(const client::ClientOptions& client, const Corpus* corpus,
               CrashModel* model, const std::atomic<bool>* killed, WriterOptions options)
    : client_(client),
      corpus_(corpus),
      model_(model),
      killed_(killed),
      options_(options),
      rng_(options.seed) {}

WriterResult Writer::Run() {
  WriterResult result;
  const absl::Time deadline = absl::Now() + options_.max_time;
  for (uint32_t batch = 0; batch < options_.max_calls; ++batch) {
    if (stop_.load() || absl::Now() > deadline) break;
    if (!CallOnce(batch, &result)) break;
  }
  return result;
}

std::vector<SentRecord> Writer::MakeBatch(uint32_t batch, uint32_t size) {
  std::vector<SentRecord> records(size);
  std::uniform_int_distribution<size_t> pick_category(0, corpus_->categories().size() - 1);
  for (uint32_t i = 0; i < size; ++i) {
    const size_t category = pick_category(rng_);
    const std::vector<std::string>& lines = corpus_->lines(category);
    const std::string& text =
        lines[std::uniform_int_distribution<size_t>(0, lines.size() - 1)(rng_)];
    const PayloadHeader header{{options_.cycle, options_.writer, batch}, i, size};
    records[i].category = options_.categories.empty() ? corpus_->categories()[category]
                                                      : options_.categories[category];
    records[i].payload = MakePayload(header, text);
  }
  return records;
}

bool Writer::CallOnce(uint32_t batch, WriterResult* result) {
  const bool single = std::bernoulli_distribution(options_.append_fraction)(rng_);
  const uint32_t size =
      single ? 1 : std::uniform_int_distribution<uint32_t>(1, options_.max_batch)(rng_);
  std::vector<SentRecord> records = MakeBatch(batch, size);
  const BatchKey key{options_.cycle, options_.writer, batch};
  model_->Sent(key, records);
  ++result->calls;
  absl::StatusOr<std::vector<std::string>> ids = Send(records, single);
  absl::Status status = ids.status();
  if (ids.ok()) {
    result->acked_records += ids->size();
    status = model_->Acked(key, *std::move(ids));
    if (status.ok()) return true;
  } else if (killed_->load()) {
    return false;  // The server is gone: the call's fate is decided after the restart.
  }
  ++result->unexpected_errors;
  if (result->first_error.empty()) result->first_error = status.ToString();
  return false;
}

absl::StatusOr<std::vector<std::string>> Writer::Send(const std::vector<SentRecord>& records,
                                                      bool single) const {
  if (single) {
    absl::StatusOr<std::string> id = client_.Append(records[0].category, records[0].payload);
    if (!id.ok()) return id.status();
    return std::vector<std::string>{*std::move(id)};
  }
  std::vector<v1::RecordToAppend> request(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    request[i].set_category(records[i].category);
    request[i].set_payload(records[i].payload);
  }
  return client_.AppendBatch(request);
}

LifecycleResult RunLifecycle(const client::ClientOptions& options, const std::string& pool,
                             const std::atomic<bool>* killed) {
  const client::Client client(options);
  LifecycleResult result;
  result.pool = pool;
  absl::StatusOr<v1::GcDictionariesResponse> gc =
      client.GcDictionaries(v1::GcDictionariesRequest());
  if (!gc.ok()) {
    if (!killed->load()) result.unexpected_error = gc.status().ToString();
    return result;
  }
  result.gc_answered = true;
  result.gc_deleted = gc->deleted_size();
  v1::TrainDictionaryRequest train;
  train.set_pool(pool);
  train.set_activate(true);
  absl::StatusOr<v1::TrainDictionaryResponse> trained = client.TrainDictionary(train);
  if (absl::IsFailedPrecondition(trained.status())) {
    result.too_little_data = true;
    return result;
  }
  if (!trained.ok()) {
    if (!killed->load()) result.unexpected_error = trained.status().ToString();
    return result;
  }
  result.dictionary_id = trained->dictionary().id();
  result.activated = trained->activated();
  v1::RecompressRequest recompress;
  recompress.set_pool(pool);
  absl::StatusOr<v1::RecompressStatus> started = client.Recompress(recompress);
  if (started.ok()) {
    result.recompress_started = true;
  } else if (!killed->load()) {
    result.unexpected_error = started.status().ToString();
  }
  return result;
}

}  // namespace dictlog::crash
