"""dictlog_client.packed_frames.unpack: a packed MultiGetFrames response read back as
the per-result form (ids from the request, magic numbers restored, errors at their
indexes); responses whose counts, indexes or sizes do not add up raise DATA_LOSS,
including truncations and single-byte changes of a serialized response (never another
exception, and never a record built from outside its own bytes).

Run by python_test.sh (no server needed).
"""

import unittest

import grpc
import zstandard
from google.protobuf.message import DecodeError

from dictlog_client import DictlogError, dictlog_pb2
from dictlog_client.packed_frames import unpack

IDS = ["web/1", "web/2", "db/7", "nope", "web/3", "db/9"]


def line(i):
    return b"2026-11-25 03:%d INFO web request served in %d ms" % (i, i * 7)


def frame(payload):
    return zstandard.ZstdCompressor(write_content_size=True).compress(payload)


def packed():
    p = dictlog_pb2.PackedFrames()
    p.sources.add(category="web")
    p.sources.add(category="db", payload=True)
    for source, body in ((0, frame(line(1))[4:]), (0, frame(line(2))[4:]),
                         (1, b"db line 7"), (0, frame(line(3))[4:])):
        p.data += body
        p.sizes.append(len(body))
        p.source_indexes.append(source)
    p.errors.add(index=3, error=dictlog_pb2.RecordError(code=3, message="malformed id"))
    p.errors.add(index=5, error=dictlog_pb2.RecordError(code=5, message="no record db/9"))
    return p


class PackedFramesTest(unittest.TestCase):

    def test_results_are_the_per_result_forms_in_request_order(self):
        results = unpack(IDS, packed())
        self.assertEqual(len(results), len(IDS))
        for i, n in ((0, 1), (1, 2), (4, 3)):
            self.assertEqual(results[i], dictlog_pb2.RecordFrame(
                id=IDS[i], category="web", frame=frame(line(n)), dictionary_id=0))
        self.assertEqual(results[2], dictlog_pb2.RecordFrame(
            id="db/7", category="db", payload=b"db line 7"))
        self.assertEqual(results[3],
                         DictlogError(grpc.StatusCode.INVALID_ARGUMENT, "malformed id"))
        self.assertEqual(results[5], DictlogError(grpc.StatusCode.NOT_FOUND, "no record db/9"))
        self.assertEqual(unpack([], dictlog_pb2.PackedFrames()), [])

    def test_a_frame_carries_its_sources_dictionary_and_check(self):
        p = dictlog_pb2.PackedFrames()
        p.sources.add(category="web", dictionary_id=40000, dictionary_check=0x9E3779B9)
        p.data, p.sizes[:], p.source_indexes[:] = b"frame body", [10], [0]
        [result] = unpack(["web/1"], p)
        self.assertEqual(result.dictionary_id, 40000)
        self.assertEqual(result.dictionary_check, 0x9E3779B9)

    def test_counts_indexes_and_sizes_that_do_not_add_up_are_data_loss(self):
        def size_plus(p): p.sizes[0] += 1
        def byte_more(p): p.data += b"x"
        def size_less(p): del p.sizes[-1]
        def source_less(p): del p.source_indexes[-1]
        def source_out(p): p.source_indexes[1] = 2
        def error_less(p): del p.errors[-1]
        def error_out(p): p.errors[1].index = 6
        def error_order(p): p.errors[0].index = 5
        def error_ok(p): p.errors[0].error.code = 0
        def payload_dictionary(p): p.sources[1].dictionary_id = 9
        for change in (size_plus, byte_more, size_less, source_less, source_out, error_less,
                       error_out, error_order, error_ok, payload_dictionary):
            p = packed()
            change(p)
            with self.assertRaises(DictlogError) as raised:
                unpack(IDS, p)
            self.assertEqual(raised.exception.code, grpc.StatusCode.DATA_LOSS, change.__name__)
        for ids in (IDS[1:], IDS + ["web/4"]):
            with self.assertRaises(DictlogError):
                unpack(ids, packed())

    def test_truncated_and_altered_responses_are_refused_or_stay_in_bounds(self):
        wire = packed().SerializeToString()

        def check(variant):
            """'unparsed', 'refused' (DATA_LOSS) or 'unpacked' (within bounds)."""
            p = dictlog_pb2.PackedFrames()
            try:
                p.ParseFromString(variant)
            except DecodeError:
                return "unparsed"  # gRPC refuses the message itself.
            try:
                results = unpack(IDS, p)
            except DictlogError as e:
                self.assertEqual(e.code, grpc.StatusCode.DATA_LOSS)
                return "refused"
            self.assertEqual(len(results), len(IDS))
            records = [r for r in results if not isinstance(r, DictlogError)]
            self.assertEqual(sum(len(r.frame) - 4 if r.frame else len(r.payload)
                                 for r in records), len(p.data))
            return "unpacked"

        # Every truncation loses something the counts need (the last error at least).
        truncated = [check(wire[:n]) for n in range(len(wire))]
        self.assertNotIn("unpacked", truncated)
        self.assertGreater(truncated.count("refused"), 5)
        altered = [check(wire[:i] + bytes([wire[i] ^ x]) + wire[i + 1:])
                   for i in range(len(wire)) for x in (0x01, 0x80, 0xff)]
        self.assertGreater(altered.count("refused"), 10)
        self.assertGreater(altered.count("unpacked"), 100)  # Bytes inside frames.

if __name__ == "__main__":
    unittest.main(verbosity=2)
