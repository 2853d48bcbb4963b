"""Client routing (dictlog_client.shard_routing) against fake nodes: real grpc servers
on 127.0.0.1, port 0, each answering GetShardMap with a map the test builds and reads
of the partitions it serves; a `dictlog-route: direct` read of another partition is
answered FAILED_PRECONDITION with a NotServedHere in an RpcStatus in the trailer
grpc-status-details-bin, as the server side does (proto/dictlog.proto "Routing").

Environment: none; run from a directory where `dictlog_client` is importable (the
Bazel wrapper python_test.sh).
"""

import concurrent.futures
import threading
import time
import unittest

import grpc

from dictlog_client import Client, DictlogError
from dictlog_client import dictlog_pb2, dictlog_pb2_grpc
from dictlog_client.shard_routing import (NOT_SERVED_HERE_TYPE, build_shard_table,
                                          pool_hash, pool_of_id, pool_partition)

PARTITIONS = 3


def pool_in(partition, k=0):
    """A pool of `partition` (of PARTITIONS), distinct per k."""
    for i in range(10000):
        pool = "pool%d" % i
        if pool_partition(pool, PARTITIONS) == partition:
            if k == 0:
                return pool
            k -= 1
    raise AssertionError("no pool")


class FakeNode(dictlog_pb2_grpc.LogStoreServicer):
    """Answers reads of the partitions it serves (payload: its name); refuses direct
    reads of others with NotServedHere (naming `hint`). GetShardMap answers maps[min(
    call, len - 1)]; no maps: UNIMPLEMENTED. Logs the ids it answered, by header."""

    def __init__(self, name, serves):
        self.name, self.serves = name, set(serves)
        self.maps, self.hint = [], []
        self.map_calls, self.refused = 0, 0
        # frozen (set): reads wait for their deadline, as on a SIGSTOPped node; slow_for:
        # reads answer that many seconds late (a loaded node); cancelling: they end
        # CANCELLED (a node shutting down).
        self.thawed = threading.Event()
        self.thawed.set()
        self.slow_for, self.cancelling = 0.0, False
        self.frozen_calls, self.slow_calls = 0, 0
        self.direct, self.undirected = [], []
        self._lock = threading.Lock()
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
        dictlog_pb2_grpc.add_LogStoreServicer_to_server(self, self.server)
        self.address = "127.0.0.1:%d" % self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def stop(self):
        self.server.stop(None)

    def freeze(self, frozen):
        (self.thawed.clear if frozen else self.thawed.set)()

    def _admit(self, ids, context):
        direct = ("dictlog-route", "direct") in tuple(context.invocation_metadata())
        if self.cancelling:
            context.abort(grpc.StatusCode.CANCELLED, "shutting down")
        if not self.thawed.is_set():
            with self._lock:
                self.frozen_calls += 1
            self.thawed.wait(context.time_remaining())
            context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "frozen")
        if self.slow_for > 0:
            with self._lock:
                self.slow_calls += 1
            remaining = context.time_remaining()
            if remaining is not None and remaining < self.slow_for:
                # An answer at the deadline would race the client's own timer; past
                # it the client sees DEADLINE_EXCEEDED whatever is sent.
                time.sleep(max(0.0, remaining))
                context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "slow")
            time.sleep(self.slow_for)
        with self._lock:
            for record_id in ids:
                partition = pool_partition(pool_of_id(record_id), PARTITIONS)
                if direct and partition not in self.serves:
                    self.refused += 1
                    detail = dictlog_pb2.NotServedHere(partition=partition,
                                                       replica_addresses=self.hint)
                    status = dictlog_pb2.RpcStatus(
                        code=grpc.StatusCode.FAILED_PRECONDITION.value[0],
                        message="not served here", details=[dictlog_pb2.TypedDetail(
                            type_url=NOT_SERVED_HERE_TYPE,
                            value=detail.SerializeToString())])
                    context.set_trailing_metadata(
                        (("grpc-status-details-bin", status.SerializeToString()),))
                    break
            else:
                (self.direct if direct else self.undirected).extend(ids)
                return
        context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not served here")

    def _record(self, record_id):
        return dictlog_pb2.Record(id=record_id, category="c", payload=self.name.encode())

    def GetShardMap(self, request, context):
        with self._lock:
            call, self.map_calls = self.map_calls, self.map_calls + 1
            maps = list(self.maps)
        if not maps:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "no GetShardMap")
        return maps[min(call, len(maps) - 1)]

    def Get(self, request, context):
        self._admit([request.id], context)
        return dictlog_pb2.GetResponse(record=self._record(request.id))

    def MultiGet(self, request, context):
        self._admit(list(request.ids), context)
        return dictlog_pb2.MultiGetResponse(results=[
            dictlog_pb2.MultiGetResult(record=self._record(i)) for i in request.ids])

    def MultiGetFrames(self, request, context):
        self._admit(list(request.ids), context)
        return dictlog_pb2.MultiGetFramesResponse(results=[
            dictlog_pb2.MultiGetFramesResult(record=dictlog_pb2.RecordFrame(
                id=i, category="c", payload=self.name.encode())) for i in request.ids])

    def Scan(self, request, context):
        record_id = request.pool + "/1"
        self._admit([record_id], context)
        yield dictlog_pb2.ScanResponse(records=[self._record(record_id)])


def map_of(nodes, replicas, epoch=1):
    """A map of PARTITIONS partitions; replicas[p]: indexes of the nodes holding p."""
    shard_map = dictlog_pb2.ShardMap(partitions=PARTITIONS, epoch=epoch, answered_by="a")
    for node in nodes:
        shard_map.nodes.add(name=node.name, address=node.address, live=True)
    for p in range(PARTITIONS):
        assignment = shard_map.assignments.add(partition=p)
        for i in replicas[p]:
            assignment.replicas.add(node=nodes[i].name, serving=True)
    return shard_map


class PartitionRuleTest(unittest.TestCase):

    def test_fixed_vectors_match_common_pool_partition(self):
        # The vectors of common/pool_partition_test.cc.
        self.assertEqual(pool_hash(""), 14695981039346656037)
        self.assertEqual(pool_hash("a"), 12638187200555641996)
        self.assertEqual(pool_hash("HDFS"), 5951860782854754122)
        self.assertEqual(pool_hash("web"), 6818697334544801521)
        self.assertEqual(pool_hash("Zürich"), 1078683963132214720)
        for pool, partitions, expected in [("HDFS", 1, 0), ("HDFS", 3, 2), ("HDFS", 8, 2),
                                           ("HDFS", 64, 10), ("web", 2, 1), ("web", 64, 49),
                                           ("pool7", 8, 4), ("", 8, 5)]:
            self.assertEqual(pool_partition(pool, partitions), expected, (pool, partitions))
        self.assertEqual(pool_of_id("app/web/12"), "app/web")
        self.assertEqual(pool_of_id("nopool"), "")


class ShardRoutingTest(unittest.TestCase):

    def setUp(self):
        # Partition p on nodes p and p+1 (mod 3); node a is the seed.
        self.a, self.b, self.c = FakeNode("a", {0, 2}), FakeNode("b", {0, 1}), FakeNode("c", {1, 2})
        self.nodes = [self.a, self.b, self.c]
        self.a.maps = [map_of(self.nodes, [[0, 1], [1, 2], [2, 0]])]
        self.clients = []

    def tearDown(self):
        for client in self.clients:
            client.close()
        for node in self.nodes:
            node.stop()

    def client(self, **kwargs):
        client = Client(self.a.address, timeout=10, retry_backoff=0, **kwargs)
        self.clients.append(client)
        return client

    def holders(self, partition):
        return {self.nodes[partition].name, self.nodes[(partition + 1) % 3].name}

    def test_multiget_splits_by_partition_and_merges_in_request_order(self):
        ids = ["%s/%d" % (pool_in(p, k), k + 1) for k in range(4) for p in range(PARTITIONS)]
        ids.append("no-pool")
        results = self.client().multiget(ids)
        self.assertEqual([r.id for r in results], ids)
        for record_id, result in zip(ids[:-1], results):
            partition = pool_partition(pool_of_id(record_id), PARTITIONS)
            self.assertIn(result.payload.decode(), self.holders(partition), record_id)
        self.assertEqual(results[-1].payload, b"a")
        self.assertIn("no-pool", self.a.undirected)
        for node in self.nodes:
            self.assertEqual(node.refused, 0)
            for record_id in node.direct:
                partition = pool_partition(pool_of_id(record_id), PARTITIONS)
                self.assertIn(node.name, self.holders(partition))
        self.assertEqual(self.a.map_calls, 1)

    def test_frames_and_local_decoding_split_too(self):
        ids = [pool_in(1) + "/1", pool_in(2) + "/2", pool_in(1) + "/3"]
        for packed in (False, True):
            results = self.client().multiget(ids, decode_locally=True, packed=packed)
            self.assertEqual([r.id for r in results], ids)
            self.assertIn(results[1].payload.decode(), self.holders(2))
        self.assertEqual(self.a.undirected, [])

    def test_reads_spread_over_both_replicas(self):
        client = self.client()
        answered = [client.get(pool_in(1) + "/7").payload for _ in range(6)]
        self.assertEqual(set(answered), {b"b", b"c"})
        self.assertEqual(len(self.b.direct) + len(self.c.direct), 6)
        self.assertEqual(self.a.direct, [])

    def test_scan_of_a_pool_is_routed(self):
        records = list(self.client().scan(pool=pool_in(1)))
        self.assertEqual(len(records), 1)
        self.assertIn(records[0].payload.decode(), self.holders(1))
        self.assertEqual(self.a.direct + self.a.undirected, [])

    def test_not_served_here_refreshes_the_map_and_retries_on_the_holder(self):
        self.a.maps = [map_of(self.nodes, [[0], [0], [2]]),
                       map_of(self.nodes, [[0], [2], [2]], epoch=2)]
        client = self.client(shard_map_refresh_interval=0)
        self.assertEqual(client.get(pool_in(1) + "/1").payload, b"c")
        self.assertEqual(self.a.refused, 1)
        self.assertEqual(self.a.map_calls, 2)
        self.assertEqual(client.shard_map_fetches(), 2)
        self.assertEqual(client.get(pool_in(1) + "/2").payload, b"c")
        self.assertEqual(self.a.refused, 1)  # Straight to c now.

    def test_rate_limited_refresh_uses_the_refusals_replicas(self):
        self.a.maps = [map_of(self.nodes, [[0], [0], [2]])]
        self.a.hint = [self.c.address]
        client = self.client(shard_map_refresh_interval=3600)
        self.assertEqual(client.get(pool_in(1) + "/1").payload, b"c")
        self.assertEqual(self.a.map_calls, 1)

    def test_no_other_replica_retries_once_on_the_seed(self):
        self.a.maps = [map_of(self.nodes, [[0], [0], [0]])]
        client = self.client(shard_map_refresh_interval=0)
        self.assertEqual(client.get(pool_in(1) + "/1").payload, b"a")
        self.assertEqual(self.a.refused, 1)
        self.assertEqual(len(self.a.undirected), 1)

    def test_stopped_replica_fails_over_to_the_other(self):
        client = self.client()
        self.b.stop()
        for i in range(4):
            self.assertEqual(client.get("%s/%d" % (pool_in(1), i + 1)).payload, b"c")
        results = client.multiget([pool_in(1) + "/9", pool_in(0) + "/9"])
        self.assertEqual([r.payload for r in results], [b"c", b"a"])

    def test_frozen_replica_is_left_for_the_other_within_the_timeout(self):
        # A SIGSTOPped replica the map still shows live: the first read waits for it one
        # attempt timeout (1 s), not the call's 10 s; the next reads pass it over.
        client = self.client()
        self.b.freeze(True)
        start = time.monotonic()
        for i in range(6):
            self.assertEqual(client.get("%s/%d" % (pool_in(1), i + 1)).payload, b"c")
        self.assertLess(time.monotonic() - start, 5)
        self.assertEqual(self.b.frozen_calls, 1)
        self.b.freeze(False)

    def test_last_try_after_a_slow_replica_skips_the_frozen_one(self):
        # b frozen and noted; c slower than the attempt timeout: the second try goes to
        # the seed, which forwards, not to b with the rest of the timeout (ADR 0024).
        client = self.client()
        self.b.freeze(True)
        for i in range(2):  # Round robin: b within two reads.
            if self.b.frozen_calls == 0:
                client.get("%s/%d" % (pool_in(1), i + 1))
        self.assertEqual(self.b.frozen_calls, 1)
        self.c.slow_for = 2.0
        start = time.monotonic()
        self.assertEqual(client.get(pool_in(1) + "/9").payload, b"a")
        self.assertLess(time.monotonic() - start, 5)
        self.assertEqual((self.b.frozen_calls, self.c.slow_calls), (1, 1))
        self.assertIn(pool_in(1) + "/9", self.a.undirected)
        self.b.freeze(False)

    def test_cancelled_by_a_replica_is_retried_on_the_other(self):
        # A replica shutting down cancels the reads in flight; the client never cancels
        # a unary call itself, so it tries the other replica.
        client = self.client()
        self.b.cancelling = True
        for i in range(4):
            self.assertEqual(client.get("%s/%d" % (pool_in(1), i + 1)).payload, b"c")

    def test_both_replicas_down_fail_unavailable_after_one_retry(self):
        client = self.client()
        self.b.stop()
        self.c.stop()
        with self.assertRaises(DictlogError) as raised:
            client.get(pool_in(1) + "/1")
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(self.a.direct + self.a.undirected, [])

    def test_single_node_map_sends_everything_to_the_seed(self):
        self.a.maps = [dictlog_pb2.ShardMap(answered_by="a")]
        ids = [pool_in(p) + "/1" for p in range(PARTITIONS)]
        results = self.client().multiget(ids)
        self.assertEqual([r.payload for r in results], [b"a"] * 3)
        self.assertEqual(self.a.undirected, ids)  # One call, no header.

    def test_server_without_get_shard_map_gets_everything(self):
        self.a.maps = []
        client = self.client()
        client.get(pool_in(1) + "/1")
        client.multiget([pool_in(2) + "/1", pool_in(0) + "/1"])
        self.assertEqual(len(self.a.undirected), 3)
        self.assertEqual(self.a.map_calls, 1)
        self.assertEqual(self.b.direct + self.c.direct, [])

    def test_routing_off_sends_everything_to_the_seed(self):
        self.client(routing=False).multiget([pool_in(1) + "/1", pool_in(2) + "/1"])
        self.assertEqual(len(self.a.undirected), 2)
        self.assertEqual(self.a.map_calls, 0)

    def test_malformed_maps_are_refused_with_a_clear_error(self):
        def drop_last(m):
            del m.assignments[-1]

        def out_of_range(m):
            m.assignments[1].partition = 7

        def unknown_node(m):
            m.assignments[0].replicas[0].node = "x"

        def no_replicas(m):
            del m.assignments[2].replicas[:]

        def twice(m):
            m.nodes.add().CopyFrom(m.nodes[0])
        for spoil, what in [(drop_last, "assignments"), (out_of_range, "is of partition"),
                            (unknown_node, "not one of the map's nodes"),
                            (no_replicas, "no replicas"), (twice, "listed twice")]:
            with self.subTest(what=what):
                shard_map = map_of(self.nodes, [[0, 1], [1, 2], [2, 0]])
                spoil(shard_map)
                self.a.maps = [shard_map]
                client = self.client()
                with self.assertRaises(DictlogError) as raised:
                    client.get(pool_in(1) + "/1")
                self.assertEqual(raised.exception.code, grpc.StatusCode.DATA_LOSS)
                self.assertIn(what, raised.exception.message)
                with self.assertRaises(DictlogError):
                    client.multiget([pool_in(0) + "/1"])
        for node in self.nodes:
            self.assertEqual(node.direct + node.undirected, [])

    def test_threads_share_one_client(self):
        client = self.client()
        wrong = []

        def work(t):
            for i in range(10):
                ids = ["%s/%d" % (pool_in(p, t), i + 1) for p in range(PARTITIONS)]
                if [r.id for r in client.multiget(ids)] != ids:
                    wrong.append(ids)
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(wrong, [])
        self.assertEqual(self.a.map_calls, 1)

    def test_table_skips_replicas_not_serving_and_prefers_live_nodes(self):
        shard_map = dictlog_pb2.ShardMap(partitions=1)
        for name, live in [("n1", True), ("n2", True), ("n3", False)]:
            shard_map.nodes.add(name=name, address=name + ":1", live=live)
        shard_map.nodes[1].address = ""  # Not announced yet.
        assignment = shard_map.assignments.add(partition=0)
        for name in ("n1", "n2", "n3"):
            assignment.replicas.add(node=name, serving=True)
        self.assertEqual(list(build_shard_table(shard_map).serving[0]), ["n1:1"])
        assignment.replicas[0].serving = False
        self.assertEqual(list(build_shard_table(shard_map).serving[0]), ["n3:1"])


if __name__ == "__main__":
    unittest.main()
