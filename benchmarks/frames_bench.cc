// frames_bench: MultiGet(64) with server-side decoding (MultiGet) against client-side
// decoding (ReadOptions::decode_locally: MultiGetFrames + cached dictionaries), its
// response per result and packed (ReadOptions::packed), in record mode and block mode,
// on a real dictlogd this binary starts on 127.0.0.1:0.
//
// Per case it reports records/s, the server's CPU seconds per million records served
// (utime + stime from /proc/<pid>/stat: the load generator shares the machine, so wall
// time would mislead), the client's CPU microseconds per record (getrusage of this
// process: the load generator's own cost, decoding included), and the response bytes
// per record (the serialized response messages of 200 calls outside the timed loop,
// over the records they returned; gRPC adds 5 bytes of framing per message, no
// compression).
//
//   bazel run -c opt //benchmarks:frames_bench -- --copies=100 --duration=20s
//     --csv=$PWD/benchmarks/results/frames_bench.csv   (one command line)
//
// Writes a CSV (one row per case); benchmarks/plot_frames_bench.py draws it.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/algorithm/container.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/client.h"
#include "proto/dictlog.grpc.pb.h"
#include "training/files.h"

ABSL_FLAG(std::string, dictlogd, "server/daemon/dictlogd", "the dictlogd binary");
ABSL_FLAG(std::string, dir, "../shared/data/loghub", "directory of *.log files");
ABSL_FLAG(int, copies, 5, "append every file this many times per storage mode");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(5), "timed reads per case");
ABSL_FLAG(int, threads, 8, "client threads, each one MultiGet in flight");
ABSL_FLAG(int, batch, 64, "ids per MultiGet");
ABSL_FLAG(std::string, work_dir, "", "the server's data directory (default: a temp one)");
ABSL_FLAG(std::string, csv, "", "also write the results as CSV to this file");
ABSL_FLAG(absl::Duration, dictionary_wait, absl::Minutes(10),
          "before timing, wait at most this long for every pool's first dictionary");
ABSL_FLAG(std::string, modes, "record,block",
          "storage modes to load and time, comma-separated: record, block or both");

namespace dictlog::bench {
namespace {

// dictlogd started on 127.0.0.1:0; stopped (SIGTERM, then waited for) by its pid.
struct Server {
  pid_t pid = -1;
  std::string address;
  void Stop() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
    pid = -1;
  }
  ~Server() { Stop(); }
};

// Waits until no pool has a re-compression running (the first dictionary of a pool
// re-encodes what it stored before, in the background): it would use the server's
// CPU during the measurement.
// Waits (up to --dictionary_wait) until every pool has an active dictionary: the
// automatic trainer trains pools one at a time, and training or re-compressing during a
// timed case would be counted as that case's server CPU.
void WaitForDictionaries(const client::Client& client) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + absl::GetFlag(FLAGS_dictionary_wait);
  while (absl::Now() < deadline) {
    auto pools = client.ListPools();
    size_t without = 0;
    for (const v1::PoolInfo& pool : pools.value_or(std::vector<v1::PoolInfo>{})) {
      without += pool.active_dictionary_id() == 0;
    }
    if (pools.ok() && without == 0) {
      std::printf("every pool has a dictionary after %.0f s more\n",
                  absl::ToDoubleSeconds(absl::Now() - start));
      return;
    }
    absl::SleepFor(absl::Milliseconds(500));
  }
  std::printf("frames_bench: some pools have no dictionary after --dictionary_wait\n");
}

void WaitForRecompression(const client::Client& client) {
  WaitForDictionaries(client);
  auto pools = client.ListPools();
  for (const v1::PoolInfo& pool : pools.value_or(std::vector<v1::PoolInfo>{})) {
    v1::RecompressRequest request;
    request.set_pool(pool.name());
    while (true) {
      auto status = client.GetRecompressStatus(request);
      if (!status.ok() || status->state() != v1::RecompressStatus::RUNNING) break;
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
}

bool StartServer(const std::string& binary, const std::string& data_dir, Server* server) {
  const std::string port_file = data_dir + ".port";
  std::filesystem::remove(port_file);
  server->pid = fork();
  if (server->pid == 0) {
    const std::string data = "--data_dir=" + data_dir, port = "--port_file=" + port_file;
    execl(binary.c_str(), binary.c_str(), "--listen=127.0.0.1:0", data.c_str(),
          port.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 3000; ++i) {  // Up to 30 s for the port file.
    std::ifstream in(port_file);
    std::string port;
    if (in >> port && !port.empty()) {
      server->address = "127.0.0.1:" + port;
      return true;
    }
    if (waitpid(server->pid, nullptr, WNOHANG) == server->pid) {
      server->pid = -1;
      return false;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return false;
}

// CPU seconds (user + system) of process `pid` so far.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string skip;
  for (int i = 3; i < 14; ++i) fields >> skip;  // Fields 3..13.
  double utime = 0, stime = 0;
  fields >> utime >> stime;
  return (utime + stime) / sysconf(_SC_CLK_TCK);
}

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return absl::ToDoubleSeconds(absl::DurationFromTimeval(usage.ru_utime) +
                               absl::DurationFromTimeval(usage.ru_stime));
}

// Appends every line of `files` `copies` times, category prefix + file name.
std::vector<std::string> Load(const client::Client& client,
                              const std::vector<trainer::LogFile>& files,
                              const std::string& prefix, int copies) {
  std::vector<std::string> ids;
  for (const trainer::LogFile& file : files) {
    const std::vector<std::string>& lines = file.lines;
    const std::string category = prefix + file.name;
    for (int copy = 0; copy < copies; ++copy) {
      for (size_t start = 0; start < lines.size(); start += 1000) {
        std::vector<v1::RecordToAppend> batch;
        for (size_t i = start; i < std::min(lines.size(), start + 1000); ++i) {
          batch.emplace_back();
          batch.back().set_category(category);
          batch.back().set_payload(lines[i]);
        }
        auto appended = client.AppendBatch(batch);
        if (!appended.ok()) {
          std::fprintf(stderr, "frames_bench: append: %s\n", appended.status().ToString().c_str());
          std::exit(1);
        }
        ids.insert(ids.end(), appended->begin(), appended->end());
      }
    }
  }
  return ids;
}

struct Result {
  std::string mode, decoding;
  double records_per_s = 0, server_cpu_s_per_m = 0, client_cpu_us_per_record = 0;
  double bytes_per_record = 0;
  uint64_t records = 0, errors = 0;
};

std::vector<std::string> Sample(const std::vector<std::string>& ids, int n, std::mt19937_64* rng) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(ids[(*rng)() % ids.size()]);
  return out;
}

// How a case reads: server-side decoding, or client-side with the per-result or the
// packed MultiGetFrames response.
enum class Decoding { kServer, kClient, kClientPacked };

const char* Name(Decoding decoding) {
  switch (decoding) {
    case Decoding::kServer: return "server";
    case Decoding::kClient: return "client";
    case Decoding::kClientPacked: return "client-packed";
  }
  return "?";
}

// Serialized response bytes per record returned, over 200 calls of `batch` random ids.
double BytesPerRecord(const std::string& address, const std::vector<std::string>& ids,
                      Decoding decoding, int batch) {
  auto stub = v1::LogStore::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  std::mt19937_64 rng(7);
  uint64_t bytes = 0, records = 0;
  for (int call = 0; call < 200; ++call) {
    const std::vector<std::string> some = Sample(ids, batch, &rng);
    grpc::ClientContext context;
    if (decoding == Decoding::kServer) {
      v1::MultiGetRequest request;
      for (const std::string& id : some) request.add_ids(id);
      v1::MultiGetResponse response;
      if (!stub->MultiGet(&context, request, &response).ok()) continue;
      bytes += response.ByteSizeLong();
      for (const auto& r : response.results()) records += r.has_record();
    } else {
      v1::MultiGetFramesRequest request;
      for (const std::string& id : some) request.add_ids(id);
      request.set_packed(decoding == Decoding::kClientPacked);
      v1::MultiGetFramesResponse response;
      if (!stub->MultiGetFrames(&context, request, &response).ok()) continue;
      bytes += response.ByteSizeLong();
      for (const auto& r : response.results()) records += r.has_record();
      records += response.packed().sizes_size();
    }
  }
  return records == 0 ? 0 : static_cast<double>(bytes) / records;
}

Result Run(const Server& server, const std::vector<std::string>& ids, Decoding decoding,
           const std::string& mode) {
  const int threads = absl::GetFlag(FLAGS_threads), batch = absl::GetFlag(FLAGS_batch);
  client::ClientOptions options;
  options.server = server.address;
  client::Client client(options);
  client::ReadOptions read;
  read.decode_locally = decoding != Decoding::kServer;
  read.packed = decoding == Decoding::kClientPacked;
  std::mt19937_64 warm_rng(1);
  for (int i = 0; i < 20; ++i) (void)client.MultiGet(Sample(ids, batch, &warm_rng), read);
  std::atomic<uint64_t> records{0}, errors{0};
  const double server_before = ProcessCpuSeconds(server.pid), self_before = SelfCpuSeconds();
  const absl::Time start = absl::Now(), end = start + absl::GetFlag(FLAGS_duration);
  // For a profiler to attach to the timed part (RESULTS.md: perf per case).
  std::printf("timing %s %s\n", mode.c_str(), Name(decoding));
  std::fflush(stdout);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(100 + t);
      while (absl::Now() < end) {
        auto results = client.MultiGet(Sample(ids, batch, &rng), read);
        if (!results.ok()) {
          errors += batch;
          continue;
        }
        for (const auto& r : *results) (r.ok() ? records : errors) += 1;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  Result result;
  result.mode = mode;
  result.decoding = Name(decoding);
  result.records = records;
  result.errors = errors;
  result.records_per_s = records / seconds;
  result.server_cpu_s_per_m = (ProcessCpuSeconds(server.pid) - server_before) / records * 1e6;
  result.client_cpu_us_per_record = (SelfCpuSeconds() - self_before) / records * 1e6;
  result.bytes_per_record = BytesPerRecord(server.address, ids, decoding, batch);
  return result;
}

int Main() {
  const absl::StatusOr<std::vector<trainer::LogFile>> files =
      trainer::ReadLogFiles(absl::GetFlag(FLAGS_dir));
  if (!files.ok()) {
    std::fprintf(stderr, "frames_bench: %s\n", files.status().ToString().c_str());
    return 1;
  }
  std::string work = absl::GetFlag(FLAGS_work_dir);
  if (work.empty()) work = std::filesystem::temp_directory_path() / ("frames_bench." + std::to_string(getpid()));
  std::filesystem::remove_all(work);
  Server server;
  if (!StartServer(absl::GetFlag(FLAGS_dictlogd), work, &server)) {
    std::fprintf(stderr, "frames_bench: dictlogd did not start\n");
    return 1;
  }
  client::ClientOptions options;
  options.server = server.address;
  options.timeout = absl::Minutes(5);
  client::Client admin(options);
  const int copies = absl::GetFlag(FLAGS_copies);
  const absl::Time load_start = absl::Now();
  const std::vector<std::string> modes = absl::StrSplit(absl::GetFlag(FLAGS_modes), ',');
  const bool record_mode = absl::c_linear_search(modes, "record");
  const bool block_mode = absl::c_linear_search(modes, "block");
  std::vector<std::string> record_ids, block_ids;
  if (record_mode) record_ids = Load(admin, *files, "r-", copies);
  if (block_mode) {
    for (const trainer::LogFile& file : *files) {
      v1::PoolOptions block;
      block.set_storage_mode(v1::STORAGE_MODE_BLOCK);
      (void)admin.CreatePool("b-" + file.name, block);
    }
    block_ids = Load(admin, *files, "b-", copies);
  }
  std::printf("loaded %zu record-mode and %zu block-mode records in %.0f s (server %s, pid %d)\n",
              record_ids.size(), block_ids.size(),
              absl::ToDoubleSeconds(absl::Now() - load_start), server.address.c_str(),
              static_cast<int>(server.pid));
  WaitForRecompression(admin);
  std::vector<Result> results;
  for (const auto& [mode, ids] : {std::pair{"record", &record_ids}, {"block", &block_ids}}) {
    if (ids->empty()) continue;  // A mode not asked for.
    for (Decoding decoding : {Decoding::kServer, Decoding::kClient, Decoding::kClientPacked}) {
      results.push_back(Run(server, *ids, decoding, mode));
    }
  }
  std::printf("%-7s %-13s %12s %16s %18s %14s %8s\n", "mode", "decoding", "records/s",
              "server_cpu_s/M", "client_cpu_us/rec", "bytes/record", "errors");
  for (const Result& r : results) {
    std::printf("%-7s %-13s %12.0f %16.2f %18.2f %14.1f %8llu\n", r.mode.c_str(),
                r.decoding.c_str(), r.records_per_s, r.server_cpu_s_per_m,
                r.client_cpu_us_per_record, r.bytes_per_record,
                static_cast<unsigned long long>(r.errors));
  }
  if (!absl::GetFlag(FLAGS_csv).empty()) {
    std::ofstream csv(absl::GetFlag(FLAGS_csv));
    csv << "mode,decoding,records_per_mode,threads,batch,records_per_s,server_cpu_s_per_million,"
           "client_cpu_us_per_record,bytes_per_record,errors\n";
    for (const Result& r : results) {
      csv << r.mode << ',' << r.decoding << ','
          << (r.mode == "record" ? record_ids.size() : block_ids.size()) << ','
          << absl::GetFlag(FLAGS_threads) << ',' << absl::GetFlag(FLAGS_batch) << ','
          << r.records_per_s << ',' << r.server_cpu_s_per_m << ','
          << r.client_cpu_us_per_record << ',' << r.bytes_per_record << ',' << r.errors << '\n';
    }
  }
  server.Stop();
  std::filesystem::remove_all(work);
  std::filesystem::remove(work + ".port");
  return 0;
}

}  // namespace
}  // namespace dictlog::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return dictlog::bench::Main();
}
