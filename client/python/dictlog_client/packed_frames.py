"""unpack(): the per-id results of a packed MultiGetFrames response (PackedFrames,
docs/api.md "Packed MultiGetFrames") as the per-result form carries them: RecordFrame
messages with the request's ids, standard zstd frames (magic number put back) and
their dictionary ids, or payloads; DictlogError for the ids that failed.

The response comes from the network: every count, index and size is checked first,
and one that does not add up raises DictlogError(DATA_LOSS) for the whole call. A
function over its arguments: thread-safe.
"""

from __future__ import annotations

from typing import List, Sequence, Union

import grpc

from . import dictlog_pb2
from .errors import DictlogError, code_from_number

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

FrameResult = Union["dictlog_pb2.RecordFrame", DictlogError]


def _corrupt(what: str) -> DictlogError:
    return DictlogError(grpc.StatusCode.DATA_LOSS,
                        f"corrupt packed MultiGetFrames response: {what}")


def _check_shape(ids: int, packed: "dictlog_pb2.PackedFrames") -> None:
    """Raises DATA_LOSS unless the counts, indexes and sizes add up for `ids` ids."""
    previous = -1
    for error in packed.errors:
        if not previous < error.index < ids:
            raise _corrupt("error indexes out of range or order")
        previous = error.index
        if not 0 < error.error.code <= 16:
            raise _corrupt(f"error code {error.error.code}")
    records = ids - len(packed.errors)
    if len(packed.sizes) != records or len(packed.source_indexes) != records:
        raise _corrupt(f"{records} records but {len(packed.sizes)} sizes and "
                       f"{len(packed.source_indexes)} sources")
    if sum(packed.sizes) != len(packed.data):
        raise _corrupt("sizes do not add up to the data")
    if any(s >= len(packed.sources) for s in packed.source_indexes):
        raise _corrupt("source index out of range")
    if any(s.payload and s.dictionary_id for s in packed.sources):
        raise _corrupt("a payload source names a dictionary")


def unpack(ids: Sequence[str], packed: "dictlog_pb2.PackedFrames") -> List[FrameResult]:
    """One result per id of `ids` (the request `packed` answers), in order."""
    _check_shape(len(ids), packed)
    errors = {e.index: e.error for e in packed.errors}
    data = packed.data
    results: List[FrameResult] = []
    offset = 0
    record = 0
    for i, record_id in enumerate(ids):
        error = errors.get(i)
        if error is not None:
            results.append(DictlogError(code_from_number(error.code), error.message))
            continue
        size = packed.sizes[record]
        source = packed.sources[packed.source_indexes[record]]
        record += 1
        body = data[offset:offset + size]
        offset += size
        if source.payload:
            results.append(dictlog_pb2.RecordFrame(
                id=record_id, category=source.category, payload=body))
        else:
            results.append(dictlog_pb2.RecordFrame(
                id=record_id, category=source.category, frame=_ZSTD_MAGIC + body,
                dictionary_id=source.dictionary_id,
                dictionary_check=source.dictionary_check))
    return results
