"""multiget(ids, decode_locally=True) against the real dictlogd on 127.0.0.1, port 0.

Every loghub record (ten files, one pool each, plus HDFS again in a block-mode pool) is
read in multiget calls of 64 ids with server-side and with client-side decoding
(MultiGetFrames packed and per result, dictionaries fetched once by id): the results
are identical (records, error codes; the packed and per-result frames too), before and after a retrain of HDFS, a re-compression and a dictionary gc;
a frame naming a dictionary gc deleted is read again and decodes as the server's.
A client that spans a restore (here: another store at the same address, which gives
its first dictionary the id the first store gave its own) decodes the new store's
frames with the new store's dictionary, not the one it cached under the same id.

Environment as roundtrip_test.py (DICTLOGD, LOGHUB, TEST_TMPDIR; python_test.sh).
"""

import os
import tempfile
import time
import unittest

import grpc

from dictlog_client import Client, DictlogError, Record
from dictlog_client import dictlog_pb2, dictlog_pb2_grpc
from roundtrip_test import Server

BAD_IDS = ["bad", "HDFS/999999", "nopool/1", "HDFS/01"]


def loghub():
    files = {}
    for name in sorted(os.listdir(os.environ["LOGHUB"])):
        if name.endswith(".log"):
            with open(os.path.join(os.environ["LOGHUB"], name), "rb") as f:
                files[name[:-4]] = f.read().split(b"\n")
    return files


def comparable(result):
    if isinstance(result, DictlogError):
        return ("error", result.code)
    return ("record", result.id, result.category, result.payload)


def first_frames_given(client, frames):
    """Makes client's next MultiGetFrames call answer `frames` (read earlier, e.g.
    before a gc or from another store) and the calls after it ask the server. Returns
    the list of answers still to give: empty once the client asked twice."""
    answers = [frames, None]
    real = client._multiget_frames_once

    def frames_then_real(ids, packed=True, partition=-1):
        given = answers.pop(0)
        return given if given is not None else real(ids, packed, partition)
    client._multiget_frames_once = frames_then_real
    return answers


class LocalDecodeTest(unittest.TestCase):

    def setUp(self):
        work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        self.server = Server(work, "--auto_train=false")
        self.client = Client(self.server.address, timeout=60)
        self.channel = grpc.insecure_channel(self.server.address)
        self.admin = dictlog_pb2_grpc.AdminStub(self.channel)
        self.ids = []

    def tearDown(self):
        self.client.close()
        self.channel.close()
        self.assertEqual(self.server.stop(), 0)

    def append(self, category, lines):
        for start in range(0, len(lines), 1000):
            self.ids += self.client.append_batch(
                [(category, line) for line in lines[start:start + 1000]])

    def expect_local_equals_server(self):
        ids = self.ids + BAD_IDS
        # tiny holds one dictionary at a time: every other one is fetched again.
        with Client(self.server.address, timeout=60) as cold, \
                Client(self.server.address, timeout=60, dictionary_cache_bytes=1) as tiny:
            for start in range(0, len(ids), 64):
                some = ids[start:start + 64]
                server = [comparable(r) for r in self.client.multiget(some)]
                self.assertEqual([comparable(r) for r in
                                  self.client.multiget(some, decode_locally=True)], server)
                self.assertEqual([comparable(r) for r in
                                  cold.multiget(some, decode_locally=True)], server)
                self.assertEqual([comparable(r) for r in
                                  tiny.multiget(some, decode_locally=True)], server)
                self.assertEqual([comparable(r) for r in self.client.multiget(
                    some, decode_locally=True, packed=False)], server)
                # Packed, the very frames (and errors) of the per-result form.
                self.assertEqual(self.client._multiget_frames_once(some),
                                 self.client._multiget_frames_once(some, packed=False))
            return cold.dictionary_cache_stats(), tiny.dictionary_cache_stats()

    def test_every_loghub_record_decodes_locally_as_on_the_server(self):
        files = loghub()
        self.assertEqual(len(files), 10)
        self.admin.CreatePool(dictlog_pb2.CreatePoolRequest(
            name="blocks",
            options=dictlog_pb2.PoolOptions(storage_mode=dictlog_pb2.STORAGE_MODE_BLOCK)))
        for name, lines in files.items():
            self.append(name, lines)
            self.client.train_dictionary(name, activate=True)
        self.append("blocks", files["HDFS"])
        self.append("HDFS", files["HDFS"])  # With HDFS's first dictionary.
        self.expect_local_equals_server()

        old = self.client.get_frame(self.ids[-2]).dictionary_id  # [-1]: "" (raw).
        self.assertNotEqual(old, 0)
        trained = self.client.train_dictionary("HDFS", dictionary_bytes=8192)
        self.admin.ActivateDictionary(dictlog_pb2.ActivateDictionaryRequest(
            pool="HDFS", id=trained.dictionary.id))
        self.append("HDFS", files["HDFS"][:500])
        cold, tiny = self.expect_local_equals_server()
        self.assertEqual(cold.entries, 2)  # HDFS's old and new dictionaries.
        self.assertEqual(tiny.entries, 1)
        self.assertGreater(tiny.evictions, 0)
        self.assertEqual(tiny.evictions, tiny.misses - 1)

        # Frames read before the re-compression name the old dictionary.
        hdfs = ["HDFS/%d" % seq for seq in range(2001, 2065)]  # The second HDFS append.
        before = Client(self.server.address)._multiget_frames_once(hdfs)
        self.assertIn(old, {f.dictionary_id for f in before})
        self.admin.Recompress(dictlog_pb2.RecompressRequest(pool="HDFS"))
        deadline = time.monotonic() + 60
        while self.admin.GetRecompressStatus(dictlog_pb2.RecompressRequest(
                pool="HDFS")).state != dictlog_pb2.RecompressStatus.DONE:
            self.assertLess(time.monotonic(), deadline, "re-compression did not finish")
            time.sleep(0.02)  # Polls the job's state (no event to wait on).
        deleted = self.admin.GcDictionaries(dictlog_pb2.GcDictionariesRequest()).deleted
        self.assertIn(old, [d.id for d in deleted])
        self.expect_local_equals_server()
        with Client(self.server.address) as fresh, self.assertRaises(DictlogError) as raised:
            fresh.get_dictionary(old)  # self.client has it cached: ids are never reused.
        self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)

        # A client that read the frames before the gc reads them again.
        with Client(self.server.address) as late:
            answers = first_frames_given(late, before)
            self.assertEqual([comparable(r) for r in late.multiget(hdfs, decode_locally=True)],
                             [comparable(r) for r in self.client.multiget(hdfs)])


    def test_a_client_spanning_a_restore_does_not_decode_with_a_stale_dictionary(self):
        files = loghub()
        hdfs = [line for line in files["HDFS"][:1500] if line]
        self.append("HDFS", hdfs)
        first = self.client.train_dictionary("HDFS", activate=True).dictionary
        before = self.client.append_batch([("HDFS", line) for line in hdfs[:100]])
        self.assertEqual([r.payload for r in self.client.multiget(before, decode_locally=True)],
                         hdfs[:100])
        stale = self.client._multiget_frames_once(before)  # Read from the first store.
        self.assertEqual({f.dictionary_check for f in stale}, {first.content_check})

        # The "restored" store: another one at the same address, whose first dictionary
        # gets the same id.
        port = self.server.address.rsplit(":", 1)[1]
        self.assertEqual(self.server.stop(), 0)
        work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        self.server = Server(work, "--auto_train=false", "--listen=127.0.0.1:" + port)
        self.assertEqual(self.server.address, "127.0.0.1:" + port)
        deadline = time.monotonic() + 30
        while True:  # The client's connection comes back (gRPC reconnects).
            try:
                self.client.pools()
                break
            except DictlogError as e:
                if e.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
        linux = [line for line in files["Linux"][:1500] if line]
        self.client.append_batch([("Linux", line) for line in linux])
        second = self.client.train_dictionary("Linux", activate=True).dictionary
        self.assertEqual(second.id, first.id, "the scenario needs the id given again")
        self.assertNotEqual(second.content_check, first.content_check)
        after = self.client.append_batch([("Linux", line) for line in linux[:100]])
        for packed in (True, False):
            frames = self.client._multiget_frames_once(after, packed)
            self.assertEqual({f.dictionary_check for f in frames}, {second.content_check})
        self.assertEqual([r.payload for r in self.client.multiget(after, decode_locally=True)],
                         linux[:100])
        self.assertEqual(self.client.dictionary_cache_stats().replaced, 1)

        # Frames read from the first store reach a client after the switch: the
        # dictionary it fetches has another check, so it reads the ids again and answers
        # what the new store holds under them, as the server would.
        with Client(self.server.address) as late:
            answers = first_frames_given(late, stale)
            self.assertEqual(
                [comparable(r) for r in late.multiget(before, decode_locally=True)],
                [comparable(r) for r in self.client.multiget(before)])
            self.assertEqual(answers, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
