#include "server/cluster/cluster_node.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/thread_name.h"
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
  if (options.advertise_address.empty()) {
    return absl::InvalidArgumentError(
        "cluster mode needs the address clients reach this node at (--advertise_address)");
  }
  if (options.replicas < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cluster_replicas must be 0 or more, not ", options.replicas));
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
  DirectoryOptions directory;
  directory.node_name = options_.node_name;
  directory.address = options_.advertise_address;
  directory.partitions = options_.partitions;
  directory.nodes = options_.nodes;
  directory.replicas = options_.replicas;
  directory.announce_interval = options_.announce_interval;
  directory_ = std::make_unique<ShardDirectory>(directory);
  log.trains_partition = [directory = directory_.get()](int32_t partition) {
    return directory->FirstReplicaHere(partition);
  };
  if (options_.drop_unheld_after > absl::ZeroDuration()) {
    DropperOptions dropper;
    dropper.grace = options_.drop_unheld_after;
    dropper_ = std::make_unique<PartitionDropper>(
        dropper, directory_.get(), [this](int32_t partition) { return DropUnheld(partition); });
  }
  log_ = std::make_unique<ClusterLog>(
      log, [producer = producer_.get()](const std::string& topic, int32_t partition,
                                        absl::string_view key, absl::string_view value) {
        return producer->Produce(topic, partition, key, value);
      });
}

ClusterNode::~ClusterNode() { StopMaterializer(); }

void ClusterNode::SetReadinessListener(std::function<void(bool)> listener) {
  directory_->SetReadinessListener(std::move(listener));
}

absl::Status ClusterNode::StartMaterializer(engine::LogEngine* engine) {
  Producer* producer = producer_.get();
  ASSIGN_OR_RETURN(
      watcher_,
      MetaWatcher::Start(
          options_.bootstrap, directory_.get(),
          [producer](const std::string& topic, int32_t partition, absl::string_view key,
                     absl::string_view value) {
            return producer->Produce(topic, partition, key, value);
          },
          options_.announce_interval, options_.topic_timeout, [this] { Reassign(); },
          [directory = directory_.get()] { return directory->FlagHeldServing(); }));
  absl::MutexLock lock(&mu_);
  engine_ = engine;
  RETURN_IF_ERROR(StartMaterializerLocked());
  if (dropper_ != nullptr) dropper_thread_ = std::thread([this] { RunDropper(); });
  return absl::OkStatus();
}

absl::Status ClusterNode::StartMaterializerLocked() {
  held_ = directory_->Materialized();
  UpdateUnheldLocked();  // Before anything applies: a partition held again is kept.
  std::printf("dictlogd: node %s applies partitions [%s] of %d (assignment epoch %llu)\n",
              options_.node_name.c_str(), absl::StrJoin(held_, ",").c_str(),
              options_.partitions,
              static_cast<unsigned long long>(directory_->Current().epoch()));
  std::fflush(stdout);
  ASSIGN_OR_RETURN(materializer_, Materializer::Start(options_.bootstrap, engine_, log_.get(),
                                                      held_, directory_.get(),
                                                      options_.materializer));
  return absl::OkStatus();
}

void ClusterNode::UpdateUnheldLocked() {
  if (dropper_ == nullptr) return;
  absl::StatusOr<std::vector<store::LogPosition>> stored = engine_->LogPositions();
  if (!stored.ok()) {
    std::fprintf(stderr, "dictlogd: reading applied offsets: %s\n",
                 stored.status().ToString().c_str());
    return;
  }
  std::map<int32_t, int64_t> unheld;
  for (const store::LogPosition& position : *stored) {
    const int32_t partition = static_cast<int32_t>(position.partition);
    if (std::find(held_.begin(), held_.end(), partition) == held_.end()) {
      unheld[partition] = position.offset;
    }
  }
  dropper_->SetUnheld(unheld);
}

absl::StatusOr<DroppedPartition> ClusterNode::DropUnheld(int32_t partition) {
  engine::LogEngine* engine = nullptr;
  engine::LogEngine::PartitionDrop drop;
  {
    // Under mu_: Reassign cannot start a materializer applying it meanwhile.
    absl::MutexLock lock(&mu_);
    if (stopped_ || engine_ == nullptr) return absl::AbortedError("stopping");
    if (std::find(held_.begin(), held_.end(), partition) != held_.end()) {
      return absl::AbortedError(absl::StrCat("partition ", partition, " is held again"));
    }
    engine = engine_;
    ASSIGN_OR_RETURN(drop, engine->DropPartition(
                               static_cast<uint32_t>(partition),
                               [this, partition](absl::string_view pool) {
                                 return directory_->PartitionOfPool(pool) == partition;
                               }));
    log_->ForgetApplied(partition);
  }
  // StopMaterializer joins this thread before the engine may go.
  engine->CompactDroppedPartition(drop);
  return DroppedPartition{static_cast<uint32_t>(drop.pool_ids.size()), drop.records,
                          drop.stored_bytes};
}

void ClusterNode::RunDropper() {
  NameThisThread("dl-drop");
  do {
    dropper_->Check();
  } while (!stop_dropper_.WaitForNotificationWithTimeout(options_.drop_check_interval));
}

DropperStats ClusterNode::DropStatistics() const {
  return dropper_ == nullptr ? DropperStats() : dropper_->Stats();
}

void ClusterNode::Reassign() {
  absl::MutexLock lock(&mu_);
  if (stopped_ || engine_ == nullptr || directory_->Materialized() == held_) return;
  materializer_.reset();  // Partitions no longer held stop here (the dropper's then).
  directory_->SetLocal({});
  const absl::Status status = StartMaterializerLocked();
  if (!status.ok()) {
    std::fprintf(stderr, "dictlogd: restarting the materializer: %s\n",
                 status.ToString().c_str());
  }
}

void ClusterNode::StopMaterializer() {
  if (!stop_dropper_.HasBeenNotified()) stop_dropper_.Notify();
  if (dropper_thread_.joinable()) dropper_thread_.join();
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
  }
  watcher_.reset();  // Announces the stop; its thread may wait for mu_ in Reassign.
  absl::MutexLock lock(&mu_);
  materializer_.reset();
  log_->StopWaiting();  // Nothing is applied any more: do not wait for it.
}

MaterializerStats ClusterNode::MaterializerStatistics() const {
  absl::MutexLock lock(&mu_);
  return materializer_ == nullptr ? MaterializerStats() : materializer_->Stats();
}

}  // namespace dictlog::cluster
