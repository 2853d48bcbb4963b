#include "server/cluster/assignment.h"

#include <algorithm>

namespace dictlog::cluster {

std::vector<int> ReplicaOrdinals(int32_t partition, int nodes, int replicas) {
  std::vector<int> ordinals;
  if (nodes <= 0 || partition < 0) return ordinals;
  const int copies = replicas <= 0 ? nodes : std::min(replicas, nodes);
  for (int k = 0; k < copies; ++k) {
    ordinals.push_back(static_cast<int>((static_cast<int64_t>(partition) + k) % nodes));
  }
  return ordinals;
}

std::vector<std::string> ReplicasOf(int32_t partition, const std::vector<std::string>& nodes,
                                    int replicas, const std::string& self) {
  if (nodes.empty()) return partition < 0 ? std::vector<std::string>() : std::vector{self};
  std::vector<std::string> names;
  for (int ordinal : ReplicaOrdinals(partition, static_cast<int>(nodes.size()), replicas)) {
    names.push_back(nodes[ordinal]);
  }
  return names;
}

std::vector<int32_t> PartitionsHeldBy(const std::string& node, int32_t partitions,
                                      const std::vector<std::string>& nodes, int replicas,
                                      const std::string& self) {
  std::vector<int32_t> held;
  for (int32_t p = 0; p < partitions; ++p) {
    const std::vector<std::string> names = ReplicasOf(p, nodes, replicas, self);
    if (std::find(names.begin(), names.end(), node) != names.end()) held.push_back(p);
  }
  return held;
}

}  // namespace dictlog::cluster
