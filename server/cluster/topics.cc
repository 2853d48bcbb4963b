#include "server/cluster/topics.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/cluster/kafka_handle.h"
#include "server/cluster/kafka_status.h"

namespace dictlog::cluster {
namespace {

int Ms(absl::Duration d) { return static_cast<int>(absl::ToInt64Milliseconds(d)); }

// Runs one admin request on `queue` and returns its result event (the caller
// destroys it), or the request's error.
absl::StatusOr<rd_kafka_event_t*> AwaitAdmin(rd_kafka_queue_t* queue, absl::Duration timeout,
                                             const std::string& what) {
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, Ms(timeout) + 1000);
  if (event == nullptr) return absl::DeadlineExceededError(what + ": no answer");
  absl::Status status = KafkaStatus(rd_kafka_event_error(event), what);
  if (!status.ok()) {
    rd_kafka_event_destroy(event);
    return status;
  }
  return event;
}

rd_kafka_AdminOptions_t* AdminOptions(rd_kafka_t* rk, rd_kafka_admin_op_t op,
                                      absl::Duration timeout) {
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, op);
  char errstr[256];
  rd_kafka_AdminOptions_set_request_timeout(options, Ms(timeout), errstr, sizeof(errstr));
  return options;
}

absl::Status Create(rd_kafka_t* rk, const TopicSpec& spec, absl::Duration timeout) {
  char errstr[512];
  rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(
      spec.name.c_str(), spec.partitions, spec.replication_factor, errstr, sizeof(errstr));
  if (topic == nullptr) return absl::InvalidArgumentError(errstr);
  rd_kafka_NewTopic_set_config(topic, "min.insync.replicas",
                               std::to_string(spec.min_insync_replicas).c_str());
  rd_kafka_NewTopic_set_config(topic, "unclean.leader.election.enable", "false");
  rd_kafka_NewTopic_set_config(topic, "cleanup.policy", spec.compacted ? "compact" : "delete");
  if (!spec.compacted) {
    rd_kafka_NewTopic_set_config(topic, "retention.ms", std::to_string(spec.retention_ms).c_str());
    rd_kafka_NewTopic_set_config(topic, "retention.bytes",
                                 std::to_string(spec.retention_bytes).c_str());
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* options = AdminOptions(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, timeout);
  rd_kafka_CreateTopics(rk, &topic, 1, options, queue);
  const std::string what = "create topic " + spec.name;
  absl::StatusOr<rd_kafka_event_t*> event = AwaitAdmin(queue, timeout, what);
  absl::Status status = event.status();
  if (event.ok()) {
    size_t count = 0;
    const rd_kafka_topic_result_t** topics = rd_kafka_CreateTopics_result_topics(
        rd_kafka_event_CreateTopics_result(*event), &count);
    if (count == 1) status = KafkaStatus(rd_kafka_topic_result_error(topics[0]), what);
    rd_kafka_event_destroy(*event);
  }
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy(topic);
  rd_kafka_queue_destroy(queue);
  return status;
}

absl::Status CheckLayout(rd_kafka_t* rk, const TopicSpec& spec, absl::Duration timeout) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, spec.name.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &metadata, Ms(timeout));
  rd_kafka_topic_destroy(rkt);
  RETURN_IF_ERROR(KafkaStatus(err, "metadata of " + spec.name));
  absl::Status status = absl::NotFoundError("no topic " + spec.name);
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& topic = metadata->topics[t];
    if (spec.name != topic.topic) continue;
    status = KafkaStatus(topic.err, "metadata of " + spec.name);
    if (!status.ok()) break;
    int replicas = topic.partition_cnt > 0 ? topic.partitions[0].replica_cnt : 0;
    if (topic.partition_cnt == 0 || replicas == 0) {
      status = absl::UnavailableError("topic " + spec.name + ": no partitions known yet");
      break;
    }
    if (topic.partition_cnt != spec.partitions || replicas != spec.replication_factor) {
      status = absl::FailedPreconditionError(absl::StrCat(
          "topic ", spec.name, " has ", topic.partition_cnt, " partitions of ", replicas,
          " replicas; this dictlogd expects ", spec.partitions, " of ",
          spec.replication_factor));
    }
  }
  rd_kafka_metadata_destroy(metadata);
  return status;
}

// The topic's configuration entries that TopicSpec fixes.
absl::StatusOr<std::map<std::string, std::string>> DescribeConfig(rd_kafka_t* rk,
                                                                  const std::string& name,
                                                                  absl::Duration timeout) {
  rd_kafka_ConfigResource_t* resource =
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, name.c_str());
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* options =
      AdminOptions(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeout);
  rd_kafka_DescribeConfigs(rk, &resource, 1, options, queue);
  absl::StatusOr<rd_kafka_event_t*> event = AwaitAdmin(queue, timeout, "configs of " + name);
  absl::StatusOr<std::map<std::string, std::string>> config =
      absl::UnknownError("DescribeConfigs: no result");
  if (!event.ok()) {
    config = event.status();
  } else {
    size_t count = 0;
    const rd_kafka_ConfigResource_t** resources = rd_kafka_DescribeConfigs_result_resources(
        rd_kafka_event_DescribeConfigs_result(*event), &count);
    std::map<std::string, std::string> entries;
    for (size_t r = 0; r < count; ++r) {
      size_t n = 0;
      const rd_kafka_ConfigEntry_t** configs = rd_kafka_ConfigResource_configs(resources[r], &n);
      for (size_t i = 0; i < n; ++i) {
        const char* value = rd_kafka_ConfigEntry_value(configs[i]);
        entries[rd_kafka_ConfigEntry_name(configs[i])] = value == nullptr ? "" : value;
      }
    }
    config = std::move(entries);
    rd_kafka_event_destroy(*event);
  }
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_ConfigResource_destroy(resource);
  rd_kafka_queue_destroy(queue);
  return config;
}

// A topic nodes rebuild from must keep what the spec says (forever, for records).
absl::Status CheckRetention(const TopicSpec& spec, std::map<std::string, std::string>& config) {
  if (spec.compacted) return absl::OkStatus();
  const std::string ms = std::to_string(spec.retention_ms);
  const std::string bytes = std::to_string(spec.retention_bytes);
  if (config["retention.ms"] == ms && config["retention.bytes"] == bytes) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "topic ", spec.name, " has retention.ms=", config["retention.ms"],
      " retention.bytes=", config["retention.bytes"], "; this dictlogd expects ", ms, " and ",
      bytes, spec.retention_ms == -1 ? " (kept forever: a new or wiped node rebuilds its "
                                       "partitions from offset 0; set them with "
                                       "kafka-configs.sh --alter)"
                                     : ""));
}

absl::Status CheckConfig(rd_kafka_t* rk, const TopicSpec& spec, absl::Duration timeout) {
  ASSIGN_OR_RETURN(auto config, DescribeConfig(rk, spec.name, timeout));
  if (config["min.insync.replicas"].empty() || config["cleanup.policy"].empty()) {
    // A topic another node has just created: its configuration is not known yet.
    return absl::UnavailableError("topic " + spec.name + ": no configuration yet");
  }
  int min_isr = 0;
  const bool compacted = config["cleanup.policy"].find("compact") != std::string::npos;
  if (!absl::SimpleAtoi(config["min.insync.replicas"], &min_isr) ||
      min_isr < spec.min_insync_replicas || config["unclean.leader.election.enable"] != "false" ||
      compacted != spec.compacted) {
    return absl::FailedPreconditionError(absl::StrCat(
        "topic ", spec.name, " has min.insync.replicas=", config["min.insync.replicas"],
        " unclean.leader.election.enable=", config["unclean.leader.election.enable"],
        " cleanup.policy=", config["cleanup.policy"], "; this dictlogd expects ",
        spec.min_insync_replicas, ", false, ", spec.compacted ? "compact" : "delete"));
  }
  return CheckRetention(spec, config);
}

absl::Status Check(rd_kafka_t* rk, const TopicSpec& spec, absl::Duration timeout) {
  RETURN_IF_ERROR(CheckLayout(rk, spec, timeout));
  return CheckConfig(rk, spec, timeout);
}

}  // namespace

absl::Status EnsureTopic(const std::string& bootstrap, const TopicSpec& spec,
                         absl::Duration timeout) {
  ASSIGN_OR_RETURN(KafkaHandle rk, NewKafkaHandle(RD_KAFKA_PRODUCER, bootstrap, {}));
  absl::Status created = Create(rk.get(), spec, timeout);
  if (!created.ok() && !absl::IsAlreadyExists(created)) return created;
  // A topic just created may take a moment to reach every broker's metadata and
  // configuration: check it until it passes or the timeout. An existing one must pass
  // at once (or be still unknown to the broker asked).
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status checked = Check(rk.get(), spec, timeout);
  while (!checked.ok() && absl::Now() < deadline &&
         (created.ok() || absl::IsNotFound(checked) || absl::IsUnavailable(checked))) {
    absl::SleepFor(absl::Milliseconds(100));
    checked = Check(rk.get(), spec, timeout);
  }
  return checked;
}

TopicSpec RecordsTopic(int partitions, int replication) {
  return {kRecordsTopic, partitions, replication, std::min(2, replication), false, -1, -1};
}

TopicSpec MetaTopic(int replication) {
  return {kMetaTopic, 1, replication, std::min(2, replication), true};
}

}  // namespace dictlog::cluster
