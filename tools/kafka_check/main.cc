// kafka_check: checks that Debian's librdkafka and a Kafka cluster work together with
// the settings dictlog's cluster mode uses (docs/cluster.md, ADR 0013): creates a
// topic, reports a partition's leader, produces numbered messages with an idempotent
// acks=all producer and reads them back. deploy/local-cluster's test drives it.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "common/command_line.h"
#include "tools/kafka_check/kafka_client.h"
#include <librdkafka/rdkafka.h>

ABSL_FLAG(std::string, bootstrap, "127.0.0.1:9092", "Kafka bootstrap servers host:port,...");
ABSL_FLAG(std::string, topic, "dictlog.check", "topic");
ABSL_FLAG(int, partitions, 1, "create-topic: partitions");
ABSL_FLAG(int, replication_factor, 3, "create-topic: replication factor");
ABSL_FLAG(int, min_insync_replicas, 2, "create-topic: min.insync.replicas");
ABSL_FLAG(int64_t, count, 1000, "produce: messages to produce");
ABSL_FLAG(int64_t, first, 0, "produce: number of the first message (msg-NNNNNNNN)");
ABSL_FLAG(std::string, acked, "",
          "produce: write each acknowledged message to this file, one a line");
ABSL_FLAG(int64_t, pause_after, -1,
          "produce: after this many acknowledgements, create PAUSE_DIR/paused and wait "
          "until PAUSE_DIR/resume exists (-1: never)");
ABSL_FLAG(std::string, pause_dir, "", "produce: directory of --pause_after's files");
ABSL_FLAG(int, timeout_ms, 60000,
          "produce: message.timeout.ms; other commands: how long to wait for the cluster");
ABSL_FLAG(bool, wait_in_sync, false,
          "leader: wait until every replica of partition 0 is in sync");

namespace dictlog::kafka_check {
namespace {

constexpr char kUsage[] =
    "kafka_check [flags] COMMAND\n"
    "  create-topic  create --topic (unclean leader election off)\n"
    "  leader        print the broker id leading partition 0 of --topic\n"
    "  produce       produce --count messages (idempotent, acks=all) to partition 0;\n"
    "                prints 'acked N failed M'; exit 1 if any failed\n"
    "  consume       print every message of partition 0 up to its high watermark\n";

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Waits for DIR/resume after creating DIR/paused (the test kills a broker meanwhile).
void PauseForTest(const std::string& dir) {
  std::ofstream(dir + "/paused") << "paused\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (!Exists(dir + "/resume") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int Fail(const absl::Status& status) {
  std::cerr << "kafka_check: " << status << "\n";
  return 1;
}

int RunLeader(const std::string& bootstrap, const std::string& topic) {
  const int timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  absl::StatusOr<PartitionState> state;
  while (true) {
    state = DescribePartition(bootstrap, topic, 0, 5000);
    bool ready = state.ok() && state->leader >= 0 &&
                 (!absl::GetFlag(FLAGS_wait_in_sync) || state->in_sync == state->replicas);
    if (ready) break;
    if (std::chrono::steady_clock::now() > deadline) {
      return Fail(state.ok() ? absl::DeadlineExceededError("no leader / replicas not in sync")
                             : state.status());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::cout << state->leader << "\n";
  return 0;
}

int RunProduce(const std::string& bootstrap, const std::string& topic) {
  ProduceOptions options;
  options.topic = topic;
  options.count = absl::GetFlag(FLAGS_count);
  options.first = absl::GetFlag(FLAGS_first);
  options.pause_after = absl::GetFlag(FLAGS_pause_after);
  options.message_timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  const std::string pause_dir = absl::GetFlag(FLAGS_pause_dir);
  if (options.pause_after >= 0 && pause_dir.empty()) {
    std::cerr << "kafka_check: --pause_after needs --pause_dir\n";
    return 2;
  }
  auto result = Produce(bootstrap, options, [&] { PauseForTest(pause_dir); });
  if (!result.ok()) return Fail(result.status());
  if (!absl::GetFlag(FLAGS_acked).empty()) {
    std::ofstream out(absl::GetFlag(FLAGS_acked));
    for (const std::string& message : result->acknowledged) out << message << "\n";
    if (!out.flush()) return Fail(absl::InternalError("cannot write --acked"));
  }
  std::cout << "acked " << result->acknowledged.size() << " failed " << result->failed
            << "\n";
  if (result->failed > 0) std::cerr << "first failure: " << result->first_error << "\n";
  return result->failed > 0 ? 1 : 0;
}

int Run(const std::string& command) {
  const std::string bootstrap = absl::GetFlag(FLAGS_bootstrap);
  const std::string topic = absl::GetFlag(FLAGS_topic);
  const int timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  if (command == "create-topic") {
    TopicSpec spec{topic, absl::GetFlag(FLAGS_partitions),
                   absl::GetFlag(FLAGS_replication_factor),
                   absl::GetFlag(FLAGS_min_insync_replicas)};
    absl::Status status = CreateTopic(bootstrap, spec, timeout_ms);
    return status.ok() ? 0 : Fail(status);
  }
  if (command == "leader") return RunLeader(bootstrap, topic);
  if (command == "produce") return RunProduce(bootstrap, topic);
  if (command == "consume") {
    auto messages = ConsumeAll(bootstrap, topic, timeout_ms);
    if (!messages.ok()) return Fail(messages.status());
    for (const std::string& message : *messages) std::cout << message << "\n";
    return 0;
  }
  std::cerr << "kafka_check: unknown command " << command << "\n" << kUsage;
  return 2;
}

}  // namespace
}  // namespace dictlog::kafka_check

int main(int argc, char** argv) {
  dictlog::ProgramInfo program{"tools/kafka_check/main.cc",
                               dictlog::kafka_check::kUsage,
                               {{"librdkafka", rd_kafka_version_str()}}};
  std::vector<char*> args = dictlog::ParseCommandLine(argc, argv, program);
  if (args.size() != 2) {
    std::cerr << dictlog::kafka_check::kUsage;
    return 2;
  }
  return dictlog::kafka_check::Run(args[1]);
}
