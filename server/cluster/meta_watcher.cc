#include "server/cluster/meta_watcher.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/thread_name.h"
#include "server/cluster/cluster.pb.h"
#include "server/cluster/topics.h"

namespace dictlog::cluster {
namespace {

constexpr char kAssignmentKey[] = "assignment";
constexpr char kNodePrefix[] = "node/";
constexpr absl::Duration kPollWait = absl::Milliseconds(100);

std::string Describe(const AssignmentRecord& assignment) {
  return absl::StrCat("nodes [", absl::StrJoin(assignment.nodes(), ","), "], replicas ",
                      assignment.replicas(), ", epoch ", assignment.epoch());
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetaWatcher>> MetaWatcher::Start(
    const std::string& bootstrap, ShardDirectory* directory, ClusterLog::ProduceFn produce,
    absl::Duration announce_interval, absl::Duration timeout,
    std::function<void()> on_assignment, std::function<bool()> built) {
  ASSIGN_OR_RETURN(std::unique_ptr<Consumer> consumer,
                   Consumer::Open(bootstrap, kMetaTopic, {{0, kFromBeginning}}));
  std::unique_ptr<MetaWatcher> watcher(new MetaWatcher(
      std::move(consumer), directory, std::move(produce), announce_interval,
      std::move(on_assignment), std::move(built)));
  RETURN_IF_ERROR(watcher->CatchUp(timeout));
  if (!directory->LogHasAssignment() || (!directory->FlagsMatch() && watcher->built_())) {
    RETURN_IF_ERROR(watcher->WriteFlagAssignment());
  } else if (!directory->FlagsMatch()) {
    watcher->pending_ = true;
    AssignmentRecord mine = directory->FlagAssignment();
    mine.set_epoch(directory->Current().epoch() + 1);
    std::printf("dictlogd: building partitions [%s] before writing the assignment %s (the "
                "log has %s)\n",
                absl::StrJoin(directory->Materialized(), ",").c_str(),
                Describe(mine).c_str(), Describe(directory->Current()).c_str());
    std::fflush(stdout);
  }
  RETURN_IF_ERROR(watcher->Announce(false));
  watcher->thread_ = std::thread([w = watcher.get()] { w->Run(); });
  return watcher;
}

MetaWatcher::MetaWatcher(std::unique_ptr<Consumer> consumer, ShardDirectory* directory,
                         ClusterLog::ProduceFn produce, absl::Duration interval,
                         std::function<void()> on_assignment, std::function<bool()> built)
    : consumer_(std::move(consumer)),
      directory_(directory),
      produce_(std::move(produce)),
      interval_(interval),
      on_assignment_(std::move(on_assignment)),
      built_(std::move(built)) {}

MetaWatcher::~MetaWatcher() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
  const absl::Status status = Announce(true);  // Peers stop routing here at once.
  if (!status.ok()) {
    std::fprintf(stderr, "dictlogd: announcing the stop: %s\n", status.ToString().c_str());
  }
}

absl::Status MetaWatcher::CatchUp(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  ASSIGN_OR_RETURN(const int64_t end, consumer_->QueryEnd(0, timeout));
  int64_t next = 0;
  while (next < end) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "read ", kMetaTopic, " up to offset ", next, " of ", end, " within ",
          absl::FormatDuration(timeout)));
    }
    ASSIGN_OR_RETURN(const std::vector<LogMessage> messages, consumer_->Poll(kPollWait, 1024));
    for (const LogMessage& message : messages) {
      Observe(message);
      next = message.offset + 1;
    }
  }
  return absl::OkStatus();
}

bool MetaWatcher::Observe(const LogMessage& message) {
  if (message.key == kAssignmentKey) {
    AssignmentRecord assignment;
    if (!assignment.ParseFromString(message.value)) return false;
    const AssignmentRecord before = directory_->Current();
    directory_->ObserveAssignment(assignment);
    if (!ShardDirectory::SameAssignment(assignment, directory_->FlagAssignment())) {
      std::fprintf(stderr,
                   "dictlogd: WARNING: the cluster's assignment (%s, written by %s) differs "
                   "from this node's --cluster_nodes/--cluster_replicas; following the log's\n",
                   Describe(assignment).c_str(), assignment.written_by().c_str());
    }
    return !ShardDirectory::SameAssignment(before, assignment) ||
           before.epoch() != assignment.epoch();
  }
  if (absl::StartsWith(message.key, kNodePrefix)) {
    NodeAnnouncement announcement;
    if (announcement.ParseFromString(message.value)) directory_->ObserveAnnouncement(announcement);
  }
  return false;
}

absl::Status MetaWatcher::WriteFlagAssignment() {
  const bool logged = directory_->LogHasAssignment();
  const AssignmentRecord current = directory_->Current();
  AssignmentRecord mine = directory_->FlagAssignment();
  mine.set_epoch(logged ? current.epoch() + 1 : 1);
  std::printf("dictlogd: writing the assignment of partitions to nodes: %s (the log had %s)\n",
              Describe(mine).c_str(), logged ? Describe(current).c_str() : "none");
  std::fflush(stdout);
  RETURN_IF_ERROR(produce_(kMetaTopic, 0, kAssignmentKey, mine.SerializeAsString()).status());
  directory_->ObserveAssignment(mine);  // The thread reads it back (idempotent).
  return absl::OkStatus();
}

bool MetaWatcher::WritePendingIfBuilt() {
  if (directory_->FlagsMatch()) {  // Another node wrote it meanwhile.
    pending_ = false;
    return false;
  }
  if (!built_()) return false;
  // Peers read that this node serves its partitions before the map names it.
  absl::Status status = Announce(false);
  if (status.ok()) status = WriteFlagAssignment();
  if (!status.ok()) {
    std::fprintf(stderr, "dictlogd: writing the assignment: %s (trying again)\n",
                 status.ToString().c_str());
    return false;
  }
  pending_ = false;
  return true;
}

absl::Status MetaWatcher::Announce(bool stopping) {
  const NodeAnnouncement announcement = directory_->Announcement(stopping);
  return produce_(kMetaTopic, 0, absl::StrCat(kNodePrefix, announcement.name()),
                  announcement.SerializeAsString())
      .status();
}

void MetaWatcher::Run() {
  NameThisThread("dl-meta");
  absl::Time next_announcement = absl::Now() + interval_;
  while (!stop_.HasBeenNotified()) {
    const absl::Duration wait =
        std::max(absl::ZeroDuration(), std::min(kPollWait, next_announcement - absl::Now()));
    absl::StatusOr<std::vector<LogMessage>> messages = consumer_->Poll(wait, 1024);
    bool changed = false;
    if (messages.ok()) {
      for (const LogMessage& message : *messages) changed |= Observe(message);
      if (pending_) changed |= WritePendingIfBuilt();
    } else {
      std::fprintf(stderr, "dictlogd: %s: %s\n", kMetaTopic, messages.status().ToString().c_str());
      stop_.WaitForNotificationWithTimeout(kPollWait);
    }
    if (changed && on_assignment_) on_assignment_();
    if (absl::Now() >= next_announcement) {
      const absl::Status status = Announce(false);
      if (!status.ok()) {
        std::fprintf(stderr, "dictlogd: announcing: %s\n", status.ToString().c_str());
      }
      next_announcement = absl::Now() + interval_;
    }
  }
}

}  // namespace dictlog::cluster
