// Assignment: which nodes hold a replica of each partition of dictlog.records
// (docs/cluster.md "Shard map", ADR 0022). Static, by ordinal in the node list:
// partition p is held by nodes[(p + k) mod n] for k in 0..replicas-1 (n = the list's
// length; replicas above n mean n). replicas 0 means every node holds every
// partition (issue 22's behaviour); an empty list means this node alone holds all.
//
// Thread safety: pure functions.
#ifndef DICTLOG_SERVER_CLUSTER_ASSIGNMENT_H_
#define DICTLOG_SERVER_CLUSTER_ASSIGNMENT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dictlog::cluster {

// The ordinals (indices into a list of `nodes` nodes) holding `partition`, in k order
// (the first is nodes[partition mod n]). Empty if `nodes` is 0 or `partition` < 0.
std::vector<int> ReplicaOrdinals(int32_t partition, int nodes, int replicas);

// The names holding `partition` among `nodes`; {self} if `nodes` is empty.
std::vector<std::string> ReplicasOf(int32_t partition, const std::vector<std::string>& nodes,
                                    int replicas, const std::string& self);

// The partitions of 0..partitions-1 that `node` holds, ascending.
std::vector<int32_t> PartitionsHeldBy(const std::string& node, int32_t partitions,
                                      const std::vector<std::string>& nodes, int replicas,
                                      const std::string& self);

}  // namespace dictlog::cluster

#endif  // DICTLOG_SERVER_CLUSTER_ASSIGNMENT_H_
