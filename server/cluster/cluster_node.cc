#include "server/cluster/cluster_node.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/cluster/dictionary_ids.h"
#include "server/cluster/topics.h"

namespace dictlog::cluster {

absl::StatusOr<std::unique_ptr<ClusterNode>> ClusterNode::Connect(
    const ClusterOptions& options) {
  if (!options.nodes.empty() &&
      std::find(options.nodes.begin(), options.nodes.end(), options.node_name) ==
          options.nodes.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node name '", options.node_name, "' is not in the cluster's node list"));
  }
  if (options.partitions > static_cast<int>(kMaxPartitionsWithIds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "at most ", kMaxPartitionsWithIds, " Kafka partitions (each one's dictionaries "
        "take their ids from a class of the two-byte ids), not ", options.partitions));
  }
  if (options.partitions < 1 || options.replication_factor < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Kafka partitions and replication factor must be positive, not ",
        options.partitions, " and ", options.replication_factor));
  }
  RETURN_IF_ERROR(EnsureTopic(options.bootstrap,
                              RecordsTopic(options.partitions, options.replication_factor),
                              options.topic_timeout));
  RETURN_IF_ERROR(EnsureTopic(options.bootstrap, MetaTopic(options.replication_factor),
                              options.topic_timeout));
  ProducerOptions producer;
  producer.bootstrap = options.bootstrap;
  producer.client_id = options.node_name;
  producer.delivery_timeout = options.delivery_timeout;
  ASSIGN_OR_RETURN(std::unique_ptr<Producer> opened, Producer::Open(producer));
  return std::unique_ptr<ClusterNode>(new ClusterNode(options, std::move(opened)));
}

ClusterNode::ClusterNode(ClusterOptions options, std::unique_ptr<Producer> producer)
    : options_(std::move(options)), producer_(std::move(producer)) {
  ClusterLogOptions log;
  log.partitions = options_.partitions;
  log.apply_wait = options_.apply_wait;
  log.dictionary_wait = std::max(options_.delivery_timeout, absl::Seconds(10));
  log.node_name = options_.node_name;
  log.nodes = options_.nodes;
  log_ = std::make_unique<ClusterLog>(
      log, [producer = producer_.get()](const std::string& topic, int32_t partition,
                                        absl::string_view key, absl::string_view value) {
        return producer->Produce(topic, partition, key, value);
      });
}

ClusterNode::~ClusterNode() { StopMaterializer(); }

absl::Status ClusterNode::StartMaterializer(engine::LogEngine* engine) {
  ASSIGN_OR_RETURN(std::unique_ptr<Materializer> started,
                   Materializer::Start(options_.bootstrap, engine, log_.get()));
  absl::MutexLock lock(&mu_);
  materializer_ = std::move(started);
  return absl::OkStatus();
}

void ClusterNode::StopMaterializer() {
  absl::MutexLock lock(&mu_);
  materializer_.reset();
  log_->StopWaiting();  // Nothing is applied any more: do not wait for it.
}

MaterializerStats ClusterNode::MaterializerStatistics() const {
  absl::MutexLock lock(&mu_);
  return materializer_ == nullptr ? MaterializerStats() : materializer_->Stats();
}

}  // namespace dictlog::cluster
