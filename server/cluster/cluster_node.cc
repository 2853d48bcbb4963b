#include "server/cluster/cluster_node.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/cluster/topics.h"

namespace dictlog::cluster {

absl::StatusOr<std::unique_ptr<ClusterNode>> ClusterNode::Connect(
    const ClusterOptions& options) {
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
  log_ = std::make_unique<ClusterLog>(
      log, [producer = producer_.get()](const std::string& topic, int32_t partition,
                                        absl::string_view key, absl::string_view value) {
        return producer->Produce(topic, partition, key, value);
      });
}

ClusterNode::~ClusterNode() { StopMaterializer(); }

absl::Status ClusterNode::StartMaterializer(engine::LogEngine* engine) {
  ASSIGN_OR_RETURN(materializer_, Materializer::Start(options_.bootstrap, engine, log_.get()));
  return absl::OkStatus();
}

}  // namespace dictlog::cluster
