"""Client routing in cluster mode (docs/api.md "Routing", docs/cluster.md "Client
routing"): the partition rule, the validated shard map, NotServedHere details, and the
ShardRouter a Client uses to send reads to a serving replica of their partition.

The partition of a pool is FNV-1a (64 bits) of its UTF-8 name modulo the partition
count: the rule of common/pool_partition.h, with the same test vectors.

Thread safety: ShardRouter may be used by any number of threads at once: its table and
channels are guarded by a lock; map fetches are coalesced (one at a time, callers
arriving meanwhile wait for it) and run outside the lock. The functions are pure.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence

import grpc

from .errors import DictlogError

try:
    from . import dictlog_pb2, dictlog_pb2_grpc
except ImportError as e:  # Generated modules missing: a source checkout, not built.
    raise ImportError("dictlog_client: generated modules missing") from e

#: The request metadata header of a read sent to a replica of its partition.
ROUTE_HEADER = ("dictlog-route", "direct")
NOT_SERVED_HERE_TYPE = "type.googleapis.com/dictlog.v1.NotServedHere"

_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_MASK = (1 << 64) - 1


def pool_hash(pool: str) -> int:
    """FNV-1a, 64 bits, of the pool name's UTF-8 bytes."""
    h = _FNV_OFFSET
    for byte in pool.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h


def pool_partition(pool: str, partitions: int) -> int:
    """The partition (of partitions > 0) holding pool's records."""
    return pool_hash(pool) % partitions


def pool_of_id(record_id: str) -> str:
    """The pool of a record id "<pool>/<seq>" (before its last '/'); "" if none."""
    slash = record_id.rfind("/")
    return record_id[:slash] if slash >= 0 else ""


@dataclasses.dataclass(frozen=True)
class ShardTable:
    """A validated ShardMap: per partition the addresses reads may go to (serving
    replicas on live nodes, else those on nodes not live; empty: the seed)."""

    partitions: int = 0
    epoch: int = 0
    serving: Sequence[Sequence[str]] = ()

    def partition_of(self, pool: str) -> int:
        """pool's partition; -1 if the table is not sharded or pool is empty."""
        if self.partitions == 0 or not pool:
            return -1
        return pool_partition(pool, self.partitions)


def _malformed(why: str) -> DictlogError:
    return DictlogError(grpc.StatusCode.DATA_LOSS, "malformed shard map: " + why)


def build_shard_table(shard_map: "dictlog_pb2.ShardMap") -> ShardTable:
    """The table of shard_map; raises DATA_LOSS naming the first fault (assignments not
    one per partition in order, a partition without replicas, a replica naming no
    node of the map, a node listed twice)."""
    if shard_map.partitions == 0:
        return ShardTable(epoch=shard_map.epoch)
    if len(shard_map.assignments) != shard_map.partitions:
        raise _malformed(f"{shard_map.partitions} partitions but "
                         f"{len(shard_map.assignments)} assignments")
    nodes: Dict[str, "dictlog_pb2.ShardNode"] = {}
    for node in shard_map.nodes:
        if node.name in nodes:
            raise _malformed(f'node "{node.name}" listed twice')
        nodes[node.name] = node
    serving: List[List[str]] = []
    for index, assignment in enumerate(shard_map.assignments):
        if assignment.partition != index:
            raise _malformed(f"assignment {index} is of partition {assignment.partition} "
                             f"(of {shard_map.partitions}, in order)")
        if not assignment.replicas:
            raise _malformed(f"partition {index} has no replicas")
        live, not_live = [], []
        for replica in assignment.replicas:
            node = nodes.get(replica.node)
            if node is None:
                raise _malformed(f'partition {index} names node "{replica.node}", '
                                 "not one of the map's nodes")
            if replica.serving and node.address:
                (live if node.live else not_live).append(node.address)
        serving.append(live or not_live)
    return ShardTable(shard_map.partitions, shard_map.epoch, serving)


def not_served_here(error: DictlogError) -> Optional["dictlog_pb2.NotServedHere"]:
    """The NotServedHere of a FAILED_PRECONDITION refusing a direct read (an RpcStatus
    in the trailer grpc-status-details-bin); None for anything else."""
    if error.code != grpc.StatusCode.FAILED_PRECONDITION or not error.status_details:
        return None
    status = dictlog_pb2.RpcStatus()
    try:
        status.ParseFromString(error.status_details)
        for detail in status.details:
            if detail.type_url == NOT_SERVED_HERE_TYPE:
                refused = dictlog_pb2.NotServedHere()
                refused.ParseFromString(detail.value)
                return refused
    except Exception:  # pylint: disable=broad-except  # protobuf's DecodeError
        return None
    return None


@dataclasses.dataclass(frozen=True)
class Target:
    """A replica to send a read to, with `dictlog-route: direct`."""

    address: str
    stub: "dictlog_pb2_grpc.LogStoreStub"


class ShardRouter:
    """The seed's shard map (fetched lazily, again when older than ttl or after a
    refused or failed read, at most once per refresh_interval) and one channel per
    node address (opened on first use, closed by close()). fetch_map returns the
    seed's ShardMap or raises DictlogError (UNIMPLEMENTED: a server without
    GetShardMap: everything goes to the seed); open_channel opens a channel to an
    address with the seed connection's options."""

    def __init__(self, fetch_map: Callable[[], "dictlog_pb2.ShardMap"],
                 open_channel: Callable[[str], grpc.Channel], *, ttl: float = 30.0,
                 refresh_interval: float = 1.0, attempt_timeout: float = 1.0,
                 avoid_unresponsive_for: float = 3.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch_map = fetch_map
        self._open_channel = open_channel
        self._ttl = ttl
        self._refresh_interval = refresh_interval
        # The longest a read waits for one replica while it may still try another.
        self.attempt_timeout = attempt_timeout
        # A replica that failed or timed out is passed over this long (ADR 0024).
        self._avoid_for = avoid_unresponsive_for
        self._avoid_until: Dict[str, float] = {}
        self._clock = clock
        self._next = itertools.count()  # Round robin; next() is atomic in CPython.
        self._lock = threading.Condition()
        self._fetching = False
        self._fetched_at: Optional[float] = None
        self._table = ShardTable()
        self._error: Optional[DictlogError] = None
        self._channels: Dict[str, grpc.Channel] = {}
        self._stubs: Dict[str, "dictlog_pb2_grpc.LogStoreStub"] = {}
        self.fetches = 0

    def table(self) -> ShardTable:
        """The current table, fetched first if there is none or it is older than the
        TTL; raises the DATA_LOSS of a malformed map."""
        with self._lock:
            stale = (self._fetched_at is None or
                     self._clock() - self._fetched_at >= self._ttl)
        if stale:
            self._refresh(after_failure=False)
        with self._lock:
            if self._error is not None:
                raise self._error
            return self._table

    def pick(self, partition: int, avoid: str = "", fallback: bool = True
             ) -> Optional[Target]:
        """The next serving replica of partition (round robin per call), not avoid,
        passing over those note_unresponsive named lately unless no other serves (then
        the first of them if fallback); None (the seed) if none is left or partition is
        -1 or out of range."""
        with self._lock:
            table = self._table
        if partition < 0 or partition >= len(table.serving):
            return None
        serving = table.serving[partition]
        start = next(self._next)
        suspect = None
        for k in range(len(serving)):
            address = serving[(start + k) % len(serving)]
            if address == avoid:
                continue
            if not self.unresponsive(address):
                return Target(address, self._stub(address))
            suspect = suspect or address
        if fallback and suspect is not None:
            return Target(suspect, self._stub(suspect))
        return None

    def retarget(self, partition: int, failed: str, hint: Sequence[str]) -> Optional[Target]:
        """After a direct read on `failed` was refused (NotServedHere naming `hint`),
        failed UNAVAILABLE or did not answer in the attempt timeout: refreshes the map
        (rate limited) and picks another replica, else one of hint other than failed,
        else None (the seed, without the header). This is the read's last direct try,
        with the rest of its deadline: never a replica noted unresponsive lately."""
        self._refresh(after_failure=True)
        with self._lock:
            if self._error is not None:
                raise self._error
        target = self.pick(partition, avoid=failed, fallback=False)
        if target is not None:
            return target
        for address in hint:
            if address and address != failed and not self.unresponsive(address):
                return Target(address, self._stub(address))
        return None

    def note_unresponsive(self, address: str) -> None:
        """A direct read on address failed UNAVAILABLE or CANCELLED, or timed out:
        pick passes it over for avoid_unresponsive_for seconds."""
        with self._lock:
            self._avoid_until[address] = self._clock() + self._avoid_for

    def unresponsive(self, address: str) -> bool:
        """Whether note_unresponsive named address within avoid_unresponsive_for."""
        with self._lock:
            until = self._avoid_until.get(address)
            if until is None:
                return False
            if self._clock() < until:
                return True
            del self._avoid_until[address]
            return False

    def close(self) -> None:
        with self._lock:
            channels, self._channels, self._stubs = list(self._channels.values()), {}, {}
        for channel in channels:
            channel.close()

    def _stub(self, address: str) -> "dictlog_pb2_grpc.LogStoreStub":
        with self._lock:
            stub = self._stubs.get(address)
            if stub is None:
                channel = self._open_channel(address)
                self._channels[address] = channel
                stub = self._stubs[address] = dictlog_pb2_grpc.LogStoreStub(channel)
            return stub

    def _refresh(self, after_failure: bool) -> None:
        """Fetches the map unless another thread is (then waits for it) or it is
        fresh: fetched within the TTL (after_failure False: a read found it missing or
        old) or the refresh interval (True: a read was refused or failed)."""
        with self._lock:
            if self._fetching:  # Coalesce: wait for the fetch under way.
                self._lock.wait_for(lambda: not self._fetching)
                return
            fresh_for = self._refresh_interval if after_failure else self._ttl
            if (self._fetched_at is not None and
                    self._clock() - self._fetched_at < fresh_for):
                return
            self._fetching = True
        table, error, keep = None, None, False
        try:
            self.fetches += 1
            try:
                shard_map = self._fetch_map()
            except DictlogError as e:
                shard_map = None
                if e.code == grpc.StatusCode.UNIMPLEMENTED:
                    table = ShardTable()  # A server that predates GetShardMap.
                else:
                    keep = True  # Unreachable or refused: keep the previous table.
            if shard_map is not None:
                try:
                    table = build_shard_table(shard_map)
                except DictlogError as e:
                    error = e  # Malformed: refused, reads fail with it.
        finally:
            with self._lock:
                self._fetching = False
                self._fetched_at = self._clock()
                if not keep:
                    self._error = error
                    if table is not None:
                        self._table = table
                self._lock.notify_all()
