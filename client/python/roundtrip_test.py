"""Round trip of dictlog_client against the real dictlogd on 127.0.0.1, port 0.

Appends loghub lines (HDFS, Apache) with automatic training off, trains and activates a
dictionary per pool through the client, appends more, then checks get, multiget
(per-id NOT_FOUND and INVALID_ARGUMENT), scan order, errors, and that get(...,
decode_locally=True) decodes frames with and without a dictionary to the same bytes as
the server, with the dictionary the frame names, fetched once per id.

Environment: DICTLOGD (the binary), LOGHUB (the loghub directory), TEST_TMPDIR; the
Bazel wrapper python_test.sh sets them. By hand, after client/python/generate.sh:
    DICTLOGD=bin/dictlogd LOGHUB=../shared/data/loghub PYTHONPATH=client/python \\
        /usr/bin/python3 client/python/roundtrip_test.py
"""

import collections
import os
import signal
import subprocess
import tempfile
import time
import unittest

import grpc
import zstandard

from dictlog_client import Client, DictlogError, Frame, Record

# Records per pool appended before training (stored without a dictionary) and after.
BEFORE, AFTER = 1000, 500
# Odd payloads appended after training: empty, every byte value, one stored raw.
ODD_PAYLOADS = [b"", bytes(range(256)), b"ab"]


def loghub_lines(name, count):
    with open(os.path.join(os.environ["LOGHUB"], name + ".log"), "rb") as f:
        lines = f.read().split(b"\n")
    assert len(lines) >= count, (name, len(lines))
    return lines[:count]


class Server:
    """dictlogd as a child process on 127.0.0.1:0 with a fresh data dir."""

    def __init__(self, work_dir, *flags):
        self.port_file = os.path.join(work_dir, "port")
        self.log = open(os.path.join(work_dir, "server.log"), "ab")
        self.process = subprocess.Popen(
            [os.environ["DICTLOGD"], "--listen=127.0.0.1:0",
             "--data_dir=" + os.path.join(work_dir, "data"),
             "--port_file=" + self.port_file, *flags],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.address = "127.0.0.1:%d" % self._wait_for_port()

    def _wait_for_port(self):
        for _ in range(300):
            if self.process.poll() is not None:
                raise RuntimeError("dictlogd exited with %d" % self.process.returncode)
            if os.path.exists(self.port_file) and os.path.getsize(self.port_file):
                with open(self.port_file) as f:
                    return int(f.read())
            time.sleep(0.1)
        self.process.kill()
        raise RuntimeError("dictlogd did not write its port file")

    def stop(self):
        """SIGTERM; returns dictlogd's exit status (it must drain and exit 0)."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()
        finally:
            self.log.close()


class CountingInterceptor(grpc.UnaryUnaryClientInterceptor):
    """Counts unary calls by method name (thread-safe enough for this single thread)."""

    def __init__(self):
        self.calls = collections.Counter()

    def intercept_unary_unary(self, continuation, details, request):
        self.calls[details.method.rsplit("/", 1)[-1]] += 1
        return continuation(details, request)


class RoundTripTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.server = Server(work, "--auto_train=false")
        cls.client = Client(cls.server.address, timeout=60)
        cls.expected = {}  # id -> payload appended
        cls.dictionary_of = {}  # pool -> dictionary id trained and activated
        for pool in ("HDFS", "Apache"):
            cls._append_and_train(pool)

    @classmethod
    def _append_and_train(cls, pool):
        lines = loghub_lines(pool, BEFORE + AFTER)
        ids = cls.client.append_batch([(pool, line) for line in lines[:BEFORE]])
        trained = cls.client.train_dictionary(pool, activate=True)
        assert trained.activated, trained.activation_note
        cls.dictionary_of[pool] = trained.dictionary.id
        # Half one at a time, half in a batch.
        tail = lines[BEFORE:] + ODD_PAYLOADS
        ids += [cls.client.append(pool, p) for p in tail[:len(tail) // 2]]
        ids += cls.client.append_batch([(pool, p) for p in tail[len(tail) // 2:]])
        cls.expected.update(zip(ids, lines[:BEFORE] + tail))

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        status = cls.server.stop()
        assert status == 0, "dictlogd exited with %d on SIGTERM" % status

    def ids_of(self, pool):
        return ["%s/%d" % (pool, seq) for seq in range(1, BEFORE + AFTER + len(ODD_PAYLOADS) + 1)]

    def test_ids_are_consecutive_per_pool(self):
        self.assertEqual(sorted(self.expected), sorted(self.ids_of("HDFS") + self.ids_of("Apache")))

    def test_get_returns_appended_records(self):
        for record_id, payload in self.expected.items():
            self.assertEqual(self.client.get(record_id),
                             Record(record_id, record_id.split("/")[0], payload))

    def test_get_errors(self):
        cases = [("HDFS/99999", grpc.StatusCode.NOT_FOUND),
                 ("NoSuchPool/1", grpc.StatusCode.NOT_FOUND),
                 ("HDFS/01", grpc.StatusCode.INVALID_ARGUMENT),
                 ("no-slash", grpc.StatusCode.INVALID_ARGUMENT)]
        for record_id, code in cases:
            for local in (False, True):
                with self.assertRaises(DictlogError) as raised:
                    self.client.get(record_id, decode_locally=local)
                self.assertEqual(raised.exception.code, code, (record_id, local))
                self.assertTrue(raised.exception.message, record_id)

    def test_append_with_request_id_is_stored_once(self):
        records = [("Retry", b"first line"), ("Retry", b"second line")]
        ids = self.client.append_batch(records, request_id="python-retry-1")
        self.assertEqual(self.client.append_batch(records, request_id="python-retry-1"), ids)
        self.assertEqual(self.client.append_batch(records), ["Retry/3", "Retry/4"])
        with self.assertRaises(DictlogError) as raised:
            self.client.append("Retry", b"other", request_id="python-retry-1")
        self.assertEqual(raised.exception.code, grpc.StatusCode.ALREADY_EXISTS)

    def test_multiget_fails_only_bad_ids(self):
        ids = ["Apache/3", "HDFS/99999", "HDFS/0", "HDFS/1", "NoSuchPool/7", "HDFS/1"]
        results = self.client.multiget(ids)
        self.assertEqual(len(results), len(ids))
        self.assertEqual(results[0], Record("Apache/3", "Apache", self.expected["Apache/3"]))
        self.assertEqual(results[3], Record("HDFS/1", "HDFS", self.expected["HDFS/1"]))
        self.assertEqual(results[5], results[3])
        for index, code in ((1, grpc.StatusCode.NOT_FOUND), (2, grpc.StatusCode.INVALID_ARGUMENT),
                            (4, grpc.StatusCode.NOT_FOUND)):
            self.assertIsInstance(results[index], DictlogError)
            self.assertEqual(results[index].code, code, results[index])
        self.assertEqual(self.client.multiget([]), [])

    def test_scan_in_append_order(self):
        for pool in ("HDFS", "Apache"):
            records = list(self.client.scan(category=pool))
            self.assertEqual([r.id for r in records], self.ids_of(pool))
            self.assertEqual([r.payload for r in records],
                             [self.expected[i] for i in self.ids_of(pool)])
        window = list(self.client.scan(pool="HDFS", from_id="HDFS/%d" % BEFORE, limit=3))
        self.assertEqual([r.id for r in window], self.ids_of("HDFS")[BEFORE - 1:BEFORE + 2])
        # Closing a scan early cancels its stream; the client keeps working.
        scan = self.client.scan(pool="HDFS")
        self.assertEqual(next(scan).id, "HDFS/1")
        scan.close()
        self.assertEqual(self.client.get("HDFS/2").payload, self.expected["HDFS/2"])

    def test_scan_errors(self):
        with self.assertRaises(DictlogError) as raised:
            list(self.client.scan(pool="NoSuchPool"))
        self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(DictlogError) as raised:
            list(self.client.scan(pool="HDFS", from_id="Apache/1"))
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        for kwargs in ({}, {"pool": "HDFS", "category": "HDFS"}):
            with self.assertRaises(DictlogError) as raised:
                self.client.scan(**kwargs)
            self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_frames_name_the_dictionary_in_force_when_appended(self):
        for pool in ("HDFS", "Apache"):
            for seq, record_id in enumerate(self.ids_of(pool), start=1):
                frame = self.client.get_frame(record_id)
                want = 0 if seq <= BEFORE else self.dictionary_of[pool]
                if seq > BEFORE + AFTER:  # Odd payloads: stored raw, they need none.
                    self.assertIn(frame.dictionary_id, (0, want), record_id)
                    want = frame.dictionary_id
                self.assertEqual(frame.dictionary_id, want, record_id)
                self.assertEqual(zstandard.get_frame_parameters(frame.frame).dict_id, want)
        self.assertNotEqual(self.dictionary_of["HDFS"], self.dictionary_of["Apache"])

    def test_decode_locally_matches_server_decoding(self):
        counter = CountingInterceptor()
        channel = grpc.intercept_channel(grpc.insecure_channel(self.server.address), counter)
        with Client(channel=channel) as client:
            for record_id, payload in self.expected.items():
                local = client.get(record_id, decode_locally=True)
                self.assertEqual(local, Record(record_id, None, payload))
                self.assertEqual(local.payload, client.get(record_id).payload)
            # One GetDictionary per dictionary, however many records name it.
            self.assertEqual(counter.calls["GetDictionary"], 2)
            self.assertEqual(counter.calls["GetFrame"], len(self.expected))
        channel.close()

    def test_fetched_dictionary_is_the_one_the_frame_names(self):
        frame = self.client.get_frame("HDFS/%d" % (BEFORE + 1))
        content = self.client.get_dictionary(frame.dictionary_id)
        self.assertEqual(zstandard.ZstdCompressionDict(content).dict_id(), frame.dictionary_id)
        # Decoding with the stock zstandard API and that dictionary gives the payload.
        decoder = zstandard.ZstdDecompressor(
            dict_data=zstandard.ZstdCompressionDict(content))
        self.assertEqual(decoder.decompressobj().decompress(frame.frame),
                         self.expected[frame.id])
        # A frame whose header names another dictionary than claimed is refused.
        other = self.dictionary_of["Apache"]
        for claimed in (0, other):
            with self.assertRaises(DictlogError) as raised:
                self.client.decode_frame(Frame(frame.id, frame.frame, claimed))
            self.assertEqual(raised.exception.code, grpc.StatusCode.DATA_LOSS)
            self.assertIn("frame names dictionary %d" % frame.dictionary_id,
                          raised.exception.message)
        truncated = Frame(frame.id, frame.frame[:-3], frame.dictionary_id)
        with self.assertRaises(DictlogError) as raised:
            self.client.decode_frame(truncated)
        self.assertEqual(raised.exception.code, grpc.StatusCode.DATA_LOSS)
        with self.assertRaises(DictlogError) as raised:
            self.client.get_dictionary(12345)
        self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_pools(self):
        # "Retry" belongs to test_append_with_request_id_is_stored_once.
        pools = {p.name: p for p in self.client.pools() if p.name != "Retry"}
        self.assertEqual(sorted(pools), ["Apache", "HDFS"])
        for name, info in pools.items():
            self.assertEqual(info.stats.records, BEFORE + AFTER + len(ODD_PAYLOADS))
            self.assertEqual(info.stats.raw_bytes,
                             sum(len(p) for i, p in self.expected.items() if i.startswith(name + "/")))
            self.assertEqual(info.active_dictionary_id, self.dictionary_of[name])
            self.assertLess(info.stats.stored_bytes, info.stats.raw_bytes)

    def test_append_errors(self):
        with self.assertRaises(DictlogError) as raised:
            self.client.append("bad category", b"x")
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(DictlogError) as raised:
            self.client.append_batch([])
        self.assertEqual(raised.exception.code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_unreachable_server_is_unavailable(self):
        with Client("127.0.0.1:1", timeout=5) as client:
            with self.assertRaises(DictlogError) as raised:
                client.get("HDFS/1")
        self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main(verbosity=2)
