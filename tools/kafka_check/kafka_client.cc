#include "tools/kafka_check/kafka_client.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace dictlog::kafka_check {
namespace {

using Clock = std::chrono::steady_clock;

// The one place librdkafka's error codes become absl codes.
absl::Status ToStatus(rd_kafka_resp_err_t err, const std::string& what) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  std::string message = absl::StrCat(what, ": ", rd_kafka_err2name(err), ": ",
                                     rd_kafka_err2str(err));
  switch (err) {
    case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS:
      return absl::AlreadyExistsError(message);
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
      return absl::NotFoundError(message);
    case RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR:
    case RD_KAFKA_RESP_ERR_INVALID_PARTITIONS:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
      return absl::InvalidArgumentError(message);
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
      return absl::DeadlineExceededError(message);
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
      return absl::FailedPreconditionError(message);
    default:
      return absl::UnavailableError(message);
  }
}

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;

// Client errors (e.g. a broker that refuses our protocol versions) go to stderr.
void PrintError(rd_kafka_t*, int err, const char* reason, void*) {
  std::fprintf(stderr, "kafka_check: librdkafka error %s: %s\n",
               rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
}

// A client handle of the given type; `settings` are librdkafka configuration pairs.
absl::StatusOr<Handle> NewHandle(rd_kafka_type_t type, const std::string& bootstrap,
                                 const std::vector<std::pair<std::string, std::string>>&
                                     settings,
                                 rd_kafka_conf_t* conf = nullptr) {
  if (conf == nullptr) conf = rd_kafka_conf_new();
  char errstr[512];
  std::vector<std::pair<std::string, std::string>> all = {{"bootstrap.servers", bootstrap}};
  all.insert(all.end(), settings.begin(), settings.end());
  for (const auto& [key, value] : all) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(absl::StrCat(key, "=", value, ": ", errstr));
    }
  }
  rd_kafka_conf_set_error_cb(conf, PrintError);
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {  // conf is still ours
    rd_kafka_conf_destroy(conf);
    return absl::InvalidArgumentError(absl::StrCat("rd_kafka_new: ", errstr));
  }
  return Handle(rk);
}

}  // namespace

absl::Status CreateTopic(const std::string& bootstrap, const TopicSpec& spec,
                         int timeout_ms) {
  auto rk = NewHandle(RD_KAFKA_PRODUCER, bootstrap, {});
  if (!rk.ok()) return rk.status();
  char errstr[512];
  rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(
      spec.name.c_str(), spec.partitions, spec.replication_factor, errstr, sizeof(errstr));
  if (topic == nullptr) return absl::InvalidArgumentError(errstr);
  rd_kafka_NewTopic_set_config(topic, "min.insync.replicas",
                               std::to_string(spec.min_insync_replicas).c_str());
  rd_kafka_NewTopic_set_config(topic, "unclean.leader.election.enable", "false");
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk->get());
  rd_kafka_AdminOptions_t* options =
      rd_kafka_AdminOptions_new(rk->get(), RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, errstr, sizeof(errstr));
  rd_kafka_CreateTopics(rk->get(), &topic, 1, options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, timeout_ms + 1000);
  absl::Status status = absl::DeadlineExceededError("CreateTopics: no answer");
  if (event != nullptr) {
    status = ToStatus(rd_kafka_event_error(event), "CreateTopics");
    const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event);
    size_t count = 0;
    const rd_kafka_topic_result_t** topics =
        result == nullptr ? nullptr : rd_kafka_CreateTopics_result_topics(result, &count);
    if (status.ok() && count == 1) {
      status = ToStatus(rd_kafka_topic_result_error(topics[0]),
                        absl::StrCat("CreateTopics ", spec.name));
    }
    rd_kafka_event_destroy(event);
  }
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy(topic);
  rd_kafka_queue_destroy(queue);
  return status;
}

absl::StatusOr<PartitionState> DescribePartition(const std::string& bootstrap,
                                                 const std::string& topic, int partition,
                                                 int timeout_ms) {
  auto rk = NewHandle(RD_KAFKA_PRODUCER, bootstrap, {});
  if (!rk.ok()) return rk.status();
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk->get(), topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk->get(), 0, rkt, &metadata, timeout_ms);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return ToStatus(err, "Metadata");
  absl::StatusOr<PartitionState> result =
      absl::NotFoundError(absl::StrCat(topic, "/", partition, ": no such partition"));
  for (int t = 0; t < metadata->topic_cnt; ++t) {
    const rd_kafka_metadata_topic_t& md_topic = metadata->topics[t];
    if (topic != md_topic.topic) continue;
    if (md_topic.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      result = ToStatus(md_topic.err, absl::StrCat("Metadata ", topic));
    }
    for (int p = 0; p < md_topic.partition_cnt; ++p) {
      const rd_kafka_metadata_partition_t& md = md_topic.partitions[p];
      if (md.id != partition) continue;
      result = PartitionState{md.leader, md.replica_cnt, md.isr_cnt};
    }
  }
  rd_kafka_metadata_destroy(metadata);
  return result;
}

namespace {

struct ProduceState {
  ProduceResult result;
  int64_t in_flight = 0;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* state = static_cast<ProduceState*>(opaque);
  --state->in_flight;
  std::string payload(static_cast<const char*>(message->payload), message->len);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    state->result.acknowledged.push_back(std::move(payload));
    return;
  }
  if (state->result.failed++ == 0) {
    state->result.first_error = absl::StrCat(payload, ": ", rd_kafka_err2name(message->err),
                                             ": ", rd_kafka_err2str(message->err));
  }
}

constexpr int64_t kMaxInFlight = 16;

}  // namespace

absl::StatusOr<ProduceResult> Produce(const std::string& bootstrap,
                                      const ProduceOptions& options,
                                      const std::function<void()>& on_pause) {
  ProduceState state;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_opaque(conf, &state);
  auto rk = NewHandle(RD_KAFKA_PRODUCER, bootstrap,
                      {{"enable.idempotence", "true"},
                       {"acks", "all"},
                       {"linger.ms", "1"},
                       {"message.timeout.ms", std::to_string(options.message_timeout_ms)}},
                      conf);
  if (!rk.ok()) return rk.status();
  bool paused = options.pause_after < 0;
  for (int64_t i = options.first; i < options.first + options.count; ++i) {
    while (state.in_flight >= kMaxInFlight) rd_kafka_poll(rk->get(), 100);
    if (!paused && static_cast<int64_t>(state.result.acknowledged.size()) +
                           state.in_flight >= options.pause_after) {
      rd_kafka_flush(rk->get(), options.message_timeout_ms);
      paused = true;
      if (on_pause) on_pause();
    }
    std::string payload = absl::StrFormat("msg-%08d", i);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk->get(), RD_KAFKA_V_TOPIC(options.topic.c_str()), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(payload.data(), payload.size()), RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return ToStatus(err, "produce");
    ++state.in_flight;
    rd_kafka_poll(rk->get(), 0);
  }
  rd_kafka_resp_err_t err = rd_kafka_flush(rk->get(), options.message_timeout_ms + 5000);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return ToStatus(err, "flush");
  return std::move(state.result);
}

absl::StatusOr<std::vector<std::string>> ConsumeAll(const std::string& bootstrap,
                                                    const std::string& topic,
                                                    int timeout_ms) {
  auto rk = NewHandle(RD_KAFKA_CONSUMER, bootstrap,
                      {{"group.id", "kafka_check"},
                       {"enable.auto.commit", "false"},
                       {"enable.partition.eof", "true"}});
  if (!rk.ok()) return rk.status();
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
      rk->get(), topic.c_str(), 0, &low, &high, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return ToStatus(err, "watermarks");
  std::vector<std::string> messages;
  if (high <= low) return messages;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), 0)->offset = low;
  err = rd_kafka_assign(rk->get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return ToStatus(err, "assign");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  int64_t next = low;
  while (next < high) {
    if (Clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("consume: at offset ", next, " of ", high));
    }
    rd_kafka_message_t* message = rd_kafka_consumer_poll(rk->get(), 200);
    if (message == nullptr) continue;
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      messages.emplace_back(static_cast<const char*>(message->payload), message->len);
      next = message->offset + 1;
    } else if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      next = std::max(next, message->offset);  // nothing more up to here
    } else {
      std::fprintf(stderr, "kafka_check: consume: %s\n", rd_kafka_message_errstr(message));
    }
    rd_kafka_message_destroy(message);
  }
  rd_kafka_consumer_close(rk->get());
  return messages;
}

}  // namespace dictlog::kafka_check
