"""Unit tests of dictlog_client.Client against fake LogStore and Admin servicers served
by a real grpc server on 127.0.0.1, port 0 (fakes, not mocks): MultiGet's asking again
for ids answered RESOURCE_EXHAUSTED, retries, the context manager, the receive limit.

Environment: none; run from a directory where `dictlog_client` is importable (the
Bazel wrapper python_test.sh, or wheel_test.sh with the installed wheel).
"""

import concurrent.futures
import threading
import unittest

import grpc

from dictlog_client import Client, DictlogError, Record
from dictlog_client import dictlog_pb2, dictlog_pb2_grpc
from dictlog_client.client import backoff_seconds

EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED


class FakeLogStore(dictlog_pb2_grpc.LogStoreServicer):
    """Records in a dict. MultiGet spends a payload byte budget per call as dictlogd
    does (the first found record is always admitted; from the first record that does
    not fit, every later found id gets RESOURCE_EXHAUSTED); `budgets` holds the budget
    of each next call (then `budget`; -1: admit nothing). `failures` holds status codes the next calls of
    any method fail with. Every request is kept in `calls` as (method, request)."""

    def __init__(self, records, budget=1 << 30):
        self.records = dict(records)
        self.budget = budget
        self.budgets = []
        self.failures = []
        self.calls = []
        self.drop_one_result = False
        self._lock = threading.Lock()

    def _begin(self, method, request, context):
        with self._lock:
            self.calls.append((method, request))
            failure = self.failures.pop(0) if self.failures else None
            budget = self.budgets.pop(0) if method == "MultiGet" and self.budgets else self.budget
        if failure is not None:
            context.abort(failure, "injected " + failure.name)
        return budget

    def requested(self, method):
        with self._lock:
            return [request for m, request in self.calls if m == method]

    def Get(self, request, context):
        self._begin("Get", request, context)
        if request.id not in self.records:
            context.abort(grpc.StatusCode.NOT_FOUND, request.id)
        return dictlog_pb2.GetResponse(record=self._record(request.id))

    def MultiGet(self, request, context):
        remaining = self._begin("MultiGet", request, context)
        response, admitted_any, exhausted = dictlog_pb2.MultiGetResponse(), False, False
        for record_id in request.ids:
            result = response.results.add()
            if record_id not in self.records:
                result.error.code, result.error.message = 5, "no " + record_id
                continue
            size = len(self.records[record_id])
            exhausted = exhausted or remaining < 0 or (admitted_any and size > remaining)
            if exhausted:
                result.error.code, result.error.message = 8, "budget spent; ask again"
                continue
            remaining -= min(size, remaining)
            admitted_any = True
            result.record.CopyFrom(self._record(record_id))
        if self.drop_one_result:
            del response.results[-1]
        return response

    def Append(self, request, context):
        self._begin("Append", request, context)
        return dictlog_pb2.AppendResponse(id="fake/1")

    def Follow(self, request, context):
        """Each call sends the records after request.after_id (the pool's order) in
        `follow_chunk`s; the first call then ends ABORTED ("fell behind"), later ones
        end when the records do."""
        self._begin("Follow", request, context)
        ids = sorted(self.records, key=lambda i: int(i.split("/")[1]))
        if request.after_id:
            ids = ids[ids.index(request.after_id) + 1:]
        first = len(self.requested("Follow")) == 1
        if first:
            ids = ids[:3]
        for record_id in ids:
            yield dictlog_pb2.FollowResponse(records=[self._record(record_id)])
        if first:
            context.abort(grpc.StatusCode.ABORTED, "fell behind; resume after " + ids[-1])

    def _record(self, record_id):
        return dictlog_pb2.Record(id=record_id, category=record_id.split("/")[0],
                                  payload=self.records[record_id])


class FakeAdmin(dictlog_pb2_grpc.AdminServicer):
    """TrainDictionary fails with each of `failures` in turn; counts its calls."""

    def __init__(self):
        self.failures = []
        self.train_calls = 0

    def TrainDictionary(self, request, context):
        self.train_calls += 1
        if self.failures:
            context.abort(self.failures.pop(0), "injected")
        return dictlog_pb2.TrainDictionaryResponse(activated=True)


class ClientTest(unittest.TestCase):

    def setUp(self):
        # Record i of pool "p" has i * 10 payload bytes.
        records = {"p/%d" % i: bytes([i]) * (i * 10) for i in range(1, 11)}
        self.store = FakeLogStore(records)
        self.admin = FakeAdmin()
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
        dictlog_pb2_grpc.add_LogStoreServicer_to_server(self.store, self.server)
        dictlog_pb2_grpc.add_AdminServicer_to_server(self.admin, self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.client = Client("127.0.0.1:%d" % port, timeout=30, retry_backoff=0)
        self.address = "127.0.0.1:%d" % port

    def tearDown(self):
        self.client.close()
        self.server.stop(None)

    def record(self, record_id):
        return Record(record_id, record_id.split("/")[0], self.store.records[record_id])

    def test_follow_resumes_after_falling_behind_without_missing_anything(self):
        records = list(self.client.follow(pool="p", from_start=True))
        self.assertEqual([r.id for r in records], ["p/%d" % i for i in range(1, 11)])
        requests = self.store.requested("Follow")
        self.assertEqual(len(requests), 2)
        self.assertTrue(requests[0].from_start)
        self.assertEqual(requests[1].after_id, "p/3")
        self.assertFalse(requests[1].from_start)

    def test_follow_needs_one_target(self):
        with self.assertRaises(DictlogError) as raised:
            self.client.follow(category="a", pool="p")
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_multiget_asks_again_for_exhausted_ids_and_keeps_request_order(self):
        # 35 bytes a call: p/1 (10) + p/2 (20) fit, p/3 (30) does not; then p/3 comes
        # first (always admitted) and p/1 no longer fits; and so on.
        self.store.budget = 35
        ids = ["p/1", "p/2", "nope/1", "p/3", "p/1", "p/4", "p/5", "p/2"]
        results = self.client.multiget(ids)
        want = [self.record(i) if i in self.store.records else None for i in ids]
        self.assertEqual([r for r, w in zip(results, want) if w], [w for w in want if w])
        self.assertIsInstance(results[2], DictlogError)
        self.assertEqual(results[2].code, grpc.StatusCode.NOT_FOUND)
        # Each call asks for exactly the ids the one before left, in request order.
        asked = [list(r.ids) for r in self.store.requested("MultiGet")]
        self.assertEqual(asked, [ids, ["p/3", "p/1", "p/4", "p/5", "p/2"],
                                 ["p/1", "p/4", "p/5", "p/2"], ["p/4", "p/5", "p/2"],
                                 ["p/5", "p/2"], ["p/2"]])

    def test_multiget_stops_when_a_call_makes_no_progress(self):
        # A server that admits nothing (budget -1) on the second call: the ids it was
        # asked for keep their RESOURCE_EXHAUSTED, and the client asks no more.
        self.store.budgets = [35, -1]
        results = self.client.multiget(["p/1", "p/2", "p/3", "p/4"])
        self.assertEqual(results[:2], [self.record("p/1"), self.record("p/2")])
        self.assertEqual([r.code for r in results[2:]], [EXHAUSTED, EXHAUSTED])
        self.assertEqual(len(self.store.requested("MultiGet")), 2)
        # No progress in the first call: one call.
        self.store.budgets = [-1]
        results = self.client.multiget(["p/1", "p/2"])
        self.assertEqual([r.code for r in results], [EXHAUSTED, EXHAUSTED])
        self.assertEqual(len(self.store.requested("MultiGet")), 3)

    def test_multiget_of_no_ids_calls_nothing(self):
        self.assertEqual(self.client.multiget([]), [])
        self.assertEqual(self.store.requested("MultiGet"), [])

    def test_multiget_with_a_result_missing_is_internal(self):
        self.store.drop_one_result = True
        with self.assertRaises(DictlogError) as raised:
            self.client.multiget(["p/1", "p/2"])
        self.assertEqual(raised.exception.code, grpc.StatusCode.INTERNAL)

    def test_reads_are_retried_on_unavailable(self):
        self.store.failures = [grpc.StatusCode.UNAVAILABLE] * 2
        self.assertEqual(self.client.get("p/3"), self.record("p/3"))
        self.assertEqual(len(self.store.requested("Get")), 3)
        self.store.failures = [grpc.StatusCode.UNAVAILABLE]
        self.assertEqual(self.client.multiget(["p/1"]), [self.record("p/1")])

    def test_reads_give_up_after_read_attempts(self):
        self.store.failures = [grpc.StatusCode.UNAVAILABLE] * 5
        with Client(self.address, read_attempts=4, retry_backoff=0) as client:
            with self.assertRaises(DictlogError) as raised:
                client.get("p/1")
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(len(self.store.requested("Get")), 4)

    def test_reads_are_not_retried_on_other_codes(self):
        for code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.DEADLINE_EXCEEDED,
                     grpc.StatusCode.CANCELLED):
            self.store.failures = [code]
            before = len(self.store.requested("Get"))
            with self.assertRaises(DictlogError) as raised:
                self.client.get("p/1")
            self.assertEqual(raised.exception.code, code)
            self.assertEqual(len(self.store.requested("Get")), before + 1)

    def test_appends_are_retried_with_the_same_request_id(self):
        self.store.failures = [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED]
        self.assertEqual(self.client.append("p", b"line"), "fake/1")
        request_ids = {r.request_id for r in self.store.requested("Append")}
        self.assertEqual(len(self.store.requested("Append")), 3)
        self.assertEqual(len(request_ids), 1)
        self.assertTrue(request_ids.pop())
        self.store.failures = [grpc.StatusCode.UNAVAILABLE]
        self.client.append("p", b"line", request_id="mine-1")
        self.assertEqual([r.request_id for r in self.store.requested("Append")[3:]],
                         ["mine-1", "mine-1"])

    def test_an_append_failing_otherwise_is_not_retried(self):
        self.store.failures = [grpc.StatusCode.INVALID_ARGUMENT]
        with self.assertRaises(DictlogError):
            self.client.append("p", b"line")
        self.assertEqual(len(self.store.requested("Append")), 1)

    def test_training_is_not_retried(self):
        self.admin.failures = [grpc.StatusCode.UNAVAILABLE]
        with self.assertRaises(DictlogError) as raised:
            self.client.train_dictionary("p")
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(self.admin.train_calls, 1)

    def test_backoff_doubles_up_to_two_seconds_with_jitter(self):
        for attempt, ceiling in ((1, 0.1), (2, 0.2), (3, 0.4), (10, 2.0)):
            for _ in range(20):
                self.assertGreaterEqual(backoff_seconds(0.1, attempt), ceiling / 2)
                self.assertLessEqual(backoff_seconds(0.1, attempt), ceiling)

    def test_context_manager_closes_its_channel(self):
        with Client(self.address) as client:
            self.assertEqual(client.get("p/1"), self.record("p/1"))
        with self.assertRaises(ValueError):  # grpc: "Cannot invoke RPC on closed channel"
            client.get("p/1")

    def test_receives_a_response_past_64_mib(self):
        self.store.records["big/1"] = b"x" * (70 << 20)
        self.assertEqual(len(self.client.get("big/1").payload), 70 << 20)
        with Client(self.address, max_receive_bytes=64 << 20) as client:
            with self.assertRaises(DictlogError) as raised:
                client.get("big/1")
        self.assertEqual(raised.exception.code, EXHAUSTED)


if __name__ == "__main__":
    unittest.main(verbosity=2)
