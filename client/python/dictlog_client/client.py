"""Client: appends and reads dictlog records over gRPC (dictlog.v1 LogStore and Admin).

A Client wraps one grpc channel to one dictlogd. Reads return records decoded by the
server, or, with get(id, decode_locally=True) and multiget(ids, decode_locally=True),
fetch the stored zstd frames (GetFrame, MultiGetFrames) and decode them here with the
python `zstandard` package and the dictionary each frame names (GetDictionary, cached
by id within dictionary_cache_bytes, least recently used evicted first, and fetched
again when a frame names the id with another content check; a few decompressors per
thread, one per recently used id and check).

Retries live in one place (_call): idempotent reads (Get, MultiGet, GetFrame,
GetDictionary, ListPools) are retried on UNAVAILABLE with exponential backoff; appends
always carry a request id (random unless given) and only therefore are retried, also on
DEADLINE_EXCEEDED and CANCELLED, as the server stores a request id once. Scan streams
and TrainDictionary are never retried. multiget() asks again for the ids the server
answered RESOURCE_EXHAUSTED (its per-call response budget) until every id has its
result or a call makes no progress.

Routing (cluster mode; docs/api.md "Routing"): when the server the Client was pointed
at (the seed) answers a shard map with partitions > 0, reads (get, get_frame, multiget,
scan of a pool) go to a serving replica of their pool's partition (round robin per
call) with the header `dictlog-route: direct`, over one channel per node opened on
first use with the seed's TLS options; multiget is split by partition, the parts sent
in parallel (a thread each but the first) and merged back in request order. A replica
that refuses (FAILED_PRECONDITION with a NotServedHere), fails UNAVAILABLE or
CANCELLED, or does not answer within the attempt timeout (1 s, while the call's timeout
lasts: a stopped node) makes the client refresh the map (at most once per
shard_map_refresh_interval) and try once more on another replica, with the rest of the
timeout; one that failed or timed out is passed over for 3 s, and the second try never
goes to such a replica (with no other: the seed, which forwards; ADR 0024). Writes, admin calls and follow go to the seed (shard_routing.py),
which in cluster mode streams a follow from a serving replica and fails over itself
(docs/adr/0032-follow-in-cluster-mode.md).

Thread safety: a Client may be used by any number of threads at once without external
synchronization: grpc channels and stubs are thread-safe, the dictionary cache is
guarded by a lock (dictionary_cache.py), and each local decode uses its own zstd decompression context. An
iterator returned by scan() must be consumed by one thread at a time. close() must not
be called while other threads still use the Client.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import random
import threading
import time
import uuid
import zlib
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence
from typing import Tuple
from typing import TypeVar, Union

import grpc
import zstandard

from .dictionary_cache import CacheStats, DictionaryCache
from .errors import DictlogError, code_from_number, from_rpc_error
from .shard_routing import ROUTE_HEADER, ShardRouter, ShardTable, not_served_here
from .shard_routing import pool_of_id

try:
    from . import dictlog_pb2, dictlog_pb2_grpc, packed_frames
except ImportError as e:  # Generated modules missing: a source checkout, not built.
    raise ImportError(
        "dictlog_client: generated modules missing; install the package "
        "(pip install client/python) or run client/python/generate.sh") from e

# The server answers a read with at most 64 MiB of payload (its per-call budget; ids
# past it get RESOURCE_EXHAUSTED); ids, categories and framing come on top.
_MAX_RECEIVE_BYTES = 64 * 1024 * 1024 + 16 * 1024 * 1024
# Codes after which a call is retried: reads (idempotent), appends (with a request id).
_READ_RETRY_CODES = frozenset([grpc.StatusCode.UNAVAILABLE])
# CANCELLED: a server shutting down cancels calls it accepted but never started.
_APPEND_RETRY_CODES = frozenset([grpc.StatusCode.UNAVAILABLE,
                                 grpc.StatusCode.DEADLINE_EXCEEDED,
                                 grpc.StatusCode.CANCELLED])
_MAX_BACKOFF_SECONDS = 2.0

_Response = TypeVar("_Response")
_Result = TypeVar("_Result")
# No record decodes to more than this (the server's format limit).
_MAX_RECORD_BYTES = 64 * 1024 * 1024
# A decoded result standing for "its dictionary was deleted; read it again".
_STALE = object()
# What a cached dictionary costs beyond its bytes: the entropy tables zstd decodes
# with (ZSTD_sizeof_DDict is the content plus about 27 KiB).
_DICTIONARY_TABLE_BYTES = 27 * 1024
# Decompressors (a zstd context each, ~100 KiB) a thread keeps, by dictionary id.
_DECOMPRESSORS_PER_THREAD = 8


@dataclasses.dataclass(frozen=True)
class Record:
    """A stored record. `category` is None when the payload was decoded locally, as
    GetFrame does not carry it."""

    id: str
    category: Optional[str]
    payload: bytes


@dataclasses.dataclass(frozen=True)
class Frame:
    """A record as a standard zstd frame, the id of the dictionary it needs (0: none)
    and that dictionary's content check (0: not sent; dictionary_check())."""

    id: str
    frame: bytes
    dictionary_id: int
    dictionary_check: int = 0


#: One result of multiget(): the record, or the error of that id alone.
MultiGetResult = Union[Record, DictlogError]
# _call's timeout when not given: the Client's.
_CLIENT_TIMEOUT = object()
_FrameResult = Union["dictlog_pb2.RecordFrame", DictlogError]


def dictionary_check(content: bytes) -> int:
    """A dictionary's content check, as the server computes it (codec/dictionary_check.h):
    the CRC-32 of its bytes, 0 given as 1."""
    return zlib.crc32(content) or 1


def _set_target(request, category: Optional[str], pool: Optional[str], verb: str) -> None:
    """Sets the category or pool a Scan or Follow request targets (exactly one)."""
    if (category is None) == (pool is None):
        raise DictlogError(grpc.StatusCode.INVALID_ARGUMENT,
                           f"{verb} needs exactly one of category and pool")
    if category is not None:
        request.category = category
    else:
        request.pool = pool


class Client:
    """A connection to one dictlogd. See the module docstring for retries and the
    thread contract. Use it as a context manager (`with Client(...) as client:`) or
    call close().

    Args:
        target: "host:port" of the server (default "127.0.0.1:7070").
        timeout: seconds each unary call (each attempt) may take (default 30; None: no
            deadline); an expired call raises DEADLINE_EXCEEDED.
        channel: an existing grpc.Channel to use instead of opening one; the Client then
            does not close it (and `max_receive_bytes` is the channel's business).
        root_certificates: PEM bytes of the CA the server's certificate must chain to;
            turns TLS on. Default: plaintext.
        private_key, certificate_chain: PEM bytes of a client certificate, for servers
            requiring mutual TLS.
        token: a bearer token sent with every call ("authorization: Bearer <token>").
        append_attempts: tries of an append (default 3; docs/api.md "Retries").
        read_attempts: tries of an idempotent read on UNAVAILABLE (default 3).
        retry_backoff: seconds before the first retry (default 0.1); doubled after
            each, at most 2 s, each wait jittered down to half of it.
        max_receive_bytes: the largest response accepted (default 80 MiB: the server's
            64 MiB response budget plus overhead).
        dictionary_cache_bytes: dictionaries kept for local decoding (each costs its
            size plus about 27 KiB; least recently used evicted past it, but always
            the newest). Default 64 MiB.
        routing: route reads to the replicas of their partitions when the server
            answers a shard map with partitions > 0 (default True; False: every call
            goes to target, which forwards reads itself). Node channels use the TLS
            arguments above (also when `channel` is given).
        shard_map_ttl: seconds after which the shard map is fetched again before the
            next read (default 30).
        shard_map_refresh_interval: at most one map fetch per this many seconds after
            refused or failed reads (default 1).
    """

    def __init__(self, target: str = "127.0.0.1:7070", *, timeout: Optional[float] = 30.0,
                 channel: Optional[grpc.Channel] = None,
                 root_certificates: Optional[bytes] = None,
                 private_key: Optional[bytes] = None,
                 certificate_chain: Optional[bytes] = None, token: Optional[str] = None,
                 append_attempts: int = 3, read_attempts: int = 3,
                 retry_backoff: float = 0.1,
                 max_receive_bytes: int = _MAX_RECEIVE_BYTES,
                 dictionary_cache_bytes: int = 64 * 1024 * 1024,
                 routing: bool = True, shard_map_ttl: float = 30.0,
                 shard_map_refresh_interval: float = 1.0) -> None:
        options = [("grpc.max_receive_message_length", max_receive_bytes)]

        def open_channel(address: str) -> grpc.Channel:
            if root_certificates is None and certificate_chain is None:
                return grpc.insecure_channel(address, options=options)
            credentials = grpc.ssl_channel_credentials(
                root_certificates, private_key, certificate_chain)
            return grpc.secure_channel(address, credentials, options=options)

        self._owns_channel = channel is None
        if channel is None:
            channel = open_channel(target)
        self._channel = channel
        self._timeout = timeout
        self._append_attempts = max(1, append_attempts)
        self._read_attempts = max(1, read_attempts)
        self._retry_backoff = max(0.0, retry_backoff)
        self._metadata = (("authorization", "Bearer " + token),) if token else None
        self._store = dictlog_pb2_grpc.LogStoreStub(channel)
        self._admin = dictlog_pb2_grpc.AdminStub(channel)
        self._dictionaries: DictionaryCache[zstandard.ZstdCompressionDict] = (
            DictionaryCache(dictionary_cache_bytes))
        self._decompressors = threading.local()
        self._router: Optional[ShardRouter] = None
        if routing:
            self._router = ShardRouter(self.shard_map, open_channel, ttl=shard_map_ttl,
                                       refresh_interval=shard_map_refresh_interval)

    def close(self) -> None:
        """Closes the channel if the Client opened it, and the channels to the nodes
        routing opened. Calls after close() fail."""
        if self._router is not None:
            self._router.close()
        if self._owns_channel:
            self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # LogStore -----------------------------------------------------------------------

    def append(self, category: str, payload: bytes, *,
               request_id: Optional[str] = None) -> str:
        """Appends one record; returns its id ("<pool>/<seq>"). request_id (printable
        ASCII, at most 128 bytes; random if None) makes retries store it once."""
        request = dictlog_pb2.AppendRequest(category=category, payload=payload,
                                            request_id=request_id or uuid.uuid4().hex)
        return self._call(self._store.Append, request, self._append_retry).id

    def append_batch(self, records: Iterable[Tuple[str, bytes]], *,
                     request_id: Optional[str] = None) -> List[str]:
        """Appends (category, payload) pairs atomically; returns their ids in order."""
        request = dictlog_pb2.AppendBatchRequest(records=[
            dictlog_pb2.RecordToAppend(category=c, payload=p) for c, p in records
        ], request_id=request_id or uuid.uuid4().hex)
        return list(self._call(self._store.AppendBatch, request, self._append_retry).ids)

    def get(self, record_id: str, *, decode_locally: bool = False) -> Record:
        """Reads one record. With decode_locally, fetches its zstd frame and decodes it
        here (the returned Record's category is then None)."""
        if decode_locally:
            frame = self.get_frame(record_id)
            return Record(frame.id, None, self.decode_frame(frame))
        request = dictlog_pb2.GetRequest(id=record_id)
        partition = self._table().partition_of(pool_of_id(record_id))
        return _record(self._read("Get", request, partition).record)

    def multiget(self, ids: Iterable[str], *, decode_locally: bool = False,
                 packed: bool = True) -> List[MultiGetResult]:
        """Reads many records: one result per id, in request order, each a Record or,
        for an id that failed alone (malformed, missing), a DictlogError (returned, not
        raised). Ids the server left for another call (RESOURCE_EXHAUSTED: its response
        budget was spent) are asked for again, until a call returns none of them; those
        then keep their RESOURCE_EXHAUSTED error.

        With decode_locally, the server sends the stored frames (MultiGetFrames) and
        they are decoded here with dictionaries fetched once by id: the same records
        (category included) and the same error codes as server-side decoding; packed
        (the default), in MultiGetFrames' packed form (about half the bytes), else per
        result. A packed response that does not add up raises DATA_LOSS."""
        ids = list(ids)
        if not decode_locally:
            return self._by_partition(ids, lambda part, partition: self._ask_again(
                part, functools.partial(self._multiget_once, partition=partition)))

        def frames_once(part: List[str], partition: int) -> List[_FrameResult]:
            return self._ask_again(part, functools.partial(
                self._multiget_frames_once, packed=packed, partition=partition))
        frames = self._by_partition(ids, frames_once)
        results = [self._decoded(f) for f in frames]
        # gc deletes only dictionaries no record references: a frame naming a deleted
        # one was re-encoded after it was read. Read those records again, once.
        stale = [i for i, r in enumerate(results) if r is _STALE]
        if stale:
            fresh = self._by_partition([ids[i] for i in stale], frames_once)
            for i, frame in zip(stale, fresh):
                results[i] = self._decoded(frame, final=True)
        return results  # type: ignore[return-value]

    def scan(self, *, category: Optional[str] = None, pool: Optional[str] = None,
             from_id: str = "", limit: int = 0) -> Iterator[Record]:
        """Yields the records of a pool (or of one category) in append order, starting
        at from_id (inclusive; "" the start), at most limit (0: no limit). Exactly one
        of category and pool. The stream has no deadline and is not retried; closing the
        iterator early cancels it."""
        request = dictlog_pb2.ScanRequest(from_id=from_id, limit=limit)
        _set_target(request, category, pool, "scan")
        return self._scan(request)

    def follow(self, *, category: Optional[str] = None, pool: Optional[str] = None,
               after_id: str = "", from_start: bool = False) -> Iterator[Record]:
        """Yields the records of a pool (or of one category) as they are appended, in
        id order, each once (`tail -f`; docs/api.md "Follow"): after after_id
        (exclusive; the records stored after it first), from the pool's first record
        with from_start, else from now. Runs until the caller closes the iterator
        (which cancels the stream) or the server ends it (DictlogError: UNAVAILABLE at
        shutdown). A stream that fell behind (ABORTED) is resumed at once after the
        last record yielded. Exactly one of category and pool."""
        request = dictlog_pb2.FollowRequest(after_id=after_id, from_start=from_start)
        _set_target(request, category, pool, "follow")
        return self._follow(request)

    def get_frame(self, record_id: str) -> Frame:
        """The stored record as a standard zstd frame, with its dictionary id."""
        request = dictlog_pb2.GetRequest(id=record_id)
        partition = self._table().partition_of(pool_of_id(record_id))
        response = self._read("GetFrame", request, partition)
        return Frame(response.id, bytes(response.frame), response.dictionary_id,
                     response.dictionary_check)

    def decode_frame(self, frame: Frame) -> bytes:
        """Decodes a Frame to its payload with zstandard, fetching (once) the dictionary
        it names. DATA_LOSS if the frame's header names another dictionary than the
        server reported or the frame does not decode."""
        try:
            header_id = zstandard.get_frame_parameters(frame.frame).dict_id
        except zstandard.ZstdError as e:
            raise DictlogError(grpc.StatusCode.DATA_LOSS,
                               f"{frame.id}: bad zstd frame header: {e}") from e
        if header_id != frame.dictionary_id:
            raise DictlogError(
                grpc.StatusCode.DATA_LOSS,
                f"{frame.id}: frame names dictionary {header_id}, server said "
                f"{frame.dictionary_id}")
        if frame.dictionary_id == 0:
            decompressor = zstandard.ZstdDecompressor()
        else:
            decompressor = zstandard.ZstdDecompressor(
                dict_data=self._dictionary(frame.dictionary_id, frame.dictionary_check))
        return _decompress_one_frame(decompressor, frame)

    def shard_map(self) -> dictlog_pb2.ShardMap:
        """The server's dictlog.v1.ShardMap as it answers it (partitions 0 from a single
        node), unvalidated; UNIMPLEMENTED from a server that predates GetShardMap."""
        request = dictlog_pb2.GetShardMapRequest()
        return self._call(self._store.GetShardMap, request, self._read_retry)

    def shard_map_fetches(self) -> int:
        """Shard map fetches routing made (0 without routing)."""
        return 0 if self._router is None else self._router.fetches

    # Admin --------------------------------------------------------------------------

    def pools(self) -> List[dictlog_pb2.PoolInfo]:
        """Every pool's dictlog.v1.PoolInfo message, ordered by name."""
        request = dictlog_pb2.ListPoolsRequest()
        return list(self._call(self._admin.ListPools, request, self._read_retry).pools)

    def get_dictionary(self, dictionary_id: int, check: int = 0) -> bytes:
        """The dictionary's bytes in the standard zstd format (cached per id; fetched
        again if check, a frame's dictionary_check, is not the cached one's)."""
        return self._dictionary(dictionary_id, check).as_bytes()

    def dictionary_cache_stats(self) -> CacheStats:
        """Hits, misses, evictions, bytes, entries and replaced (fetched again: a frame
        named the id with another content check) of the local-decoding cache."""
        return self._dictionaries.stats()

    def train_dictionary(self, pool: str, *, activate: bool = False,
                         dictionary_bytes: int = 0) -> dictlog_pb2.TrainDictionaryResponse:
        """Trains a candidate dictionary for pool (TrainDictionary); returns the
        dictlog.v1.TrainDictionaryResponse. Not retried: each call trains one more."""
        request = dictlog_pb2.TrainDictionaryRequest(
            pool=pool, activate=activate, dictionary_bytes=dictionary_bytes)
        return self._call(self._admin.TrainDictionary, request, _no_retry)

    # Internals ----------------------------------------------------------------------

    def _read_retry(self, code: grpc.StatusCode, attempt: int) -> bool:
        return code in _READ_RETRY_CODES and attempt < self._read_attempts

    def _append_retry(self, code: grpc.StatusCode, attempt: int) -> bool:
        return code in _APPEND_RETRY_CODES and attempt < self._append_attempts

    def _call(self, method: Callable[..., _Response], request: object,
              retry: Callable[[grpc.StatusCode, int], bool],
              direct: bool = False, timeout: Any = _CLIENT_TIMEOUT) -> _Response:
        """Calls a unary method; after a failed attempt n (from 1), waits and tries
        again while retry(code, n) says so. The one place gRPC errors are converted.
        direct: with the header `dictlog-route: direct` (a routed read). timeout: of
        each attempt, in seconds (None: none); default the Client's."""
        metadata = self._metadata
        if direct:
            metadata = (metadata or ()) + (ROUTE_HEADER,)
        if timeout is _CLIENT_TIMEOUT:
            timeout = self._timeout
        attempt = 1
        while True:
            try:
                return method(request, timeout=timeout, metadata=metadata)
            except grpc.RpcError as e:
                error = from_rpc_error(e)
            if not retry(error.code, attempt):
                raise error
            time.sleep(backoff_seconds(self._retry_backoff, attempt))
            attempt += 1

    def _table(self) -> ShardTable:
        """The routing table (an unsharded one without routing)."""
        return ShardTable() if self._router is None else self._router.table()

    def _read(self, name: str, request: object, partition: int) -> Any:
        """The read `name` (a LogStore method) of partition (-1: the seed): on a serving
        replica with the direct header, for at most the router's attempt timeout; once
        more, with the rest of the Client's timeout, after NotServedHere, UNAVAILABLE,
        CANCELLED (a replica shutting down) or that timeout (a stopped node), on another
        replica after a map refresh (never one that failed so lately: then the seed,
        which forwards; ADR 0024); on the seed with the read retries."""
        target = None
        if self._router is not None and partition >= 0:
            target = self._router.pick(partition)
        if target is None:
            return self._call(getattr(self._store, name), request, self._read_retry)
        start = time.monotonic()
        first_timeout = self._router.attempt_timeout
        if self._timeout is not None:
            first_timeout = min(first_timeout, self._timeout)
        try:
            return self._call(getattr(target.stub, name), request, _no_retry, direct=True,
                              timeout=first_timeout)
        except DictlogError as e:
            refused = not_served_here(e)
            left = None if self._timeout is None else self._timeout - (
                time.monotonic() - start)
            unresponsive = (
                e.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED) or
                (e.code == grpc.StatusCode.DEADLINE_EXCEEDED and (left is None or left > 0)))
            if refused is None and not unresponsive:
                raise
            if unresponsive:
                self._router.note_unresponsive(target.address)
            hint = list(refused.replica_addresses) if refused is not None else []
        second = self._router.retarget(partition, target.address, hint)
        left = None if self._timeout is None else max(
            0.0, self._timeout - (time.monotonic() - start))
        if second is None:
            return self._call(getattr(self._store, name), request, _no_retry, timeout=left)
        return self._call(getattr(second.stub, name), request, _no_retry, direct=True,
                          timeout=left)

    def _by_partition(self, ids: List[str],
                      part: Callable[[List[str], int], List[_Result]]) -> List[_Result]:
        """part(ids of one partition, partition) for each partition of the ids (-1:
        ids of no pool, or no routing), in parallel, merged back in request order; the
        first failed part (in partition order) raises."""
        table = self._table()
        groups: Dict[int, List[int]] = {}
        for index, record_id in enumerate(ids):
            groups.setdefault(table.partition_of(pool_of_id(record_id)), []).append(index)
        if len(groups) <= 1:
            return part(ids, next(iter(groups), -1))
        order = sorted(groups)
        answers: Dict[int, Any] = {}

        def run(partition: int) -> None:
            try:
                answers[partition] = part([ids[i] for i in groups[partition]], partition)
            except BaseException as e:  # pylint: disable=broad-except  # re-raised below
                answers[partition] = e
        threads = [threading.Thread(target=run, args=(p,), daemon=True) for p in order[1:]]
        for thread in threads:
            thread.start()
        run(order[0])
        for thread in threads:
            thread.join()
        results: List[Optional[_Result]] = [None] * len(ids)
        for partition in order:
            answer = answers[partition]
            if isinstance(answer, BaseException):
                raise answer
            for index, result in zip(groups[partition], answer):
                results[index] = result
        return results  # type: ignore[return-value]  # Every slot is filled.

    def _ask_again(self, ids: List[str], once: Callable[[List[str]], List[_Result]]
                   ) -> List[_Result]:
        """once(ids) for every id, then again for the ids answered RESOURCE_EXHAUSTED
        until a call makes no progress (multiget's loop)."""
        results: List[Optional[_Result]] = [None] * len(ids)
        pending = list(range(len(ids)))  # Indexes into ids still without a result.
        while pending:
            answers = once([ids[i] for i in pending])
            left = [i for i, a in zip(pending, answers)
                    if _is_resource_exhausted(a)]
            progress = len(left) < len(pending)
            for index, answer in zip(pending, answers):
                if not progress or not _is_resource_exhausted(answer):
                    results[index] = answer
            pending = left if progress else []
        return results  # type: ignore[return-value]  # Every slot is filled.

    def _multiget_frames_once(self, ids: List[str], packed: bool = True,
                              partition: int = -1) -> List[_FrameResult]:
        request = dictlog_pb2.MultiGetFramesRequest(ids=ids, packed=packed)
        response = self._read("MultiGetFrames", request, partition)
        if response.HasField("packed"):  # A server before `packed` answers per result.
            return packed_frames.unpack(ids, response.packed)
        if len(response.results) != len(ids):
            raise DictlogError(
                grpc.StatusCode.INTERNAL,
                f"MultiGetFrames of {len(ids)} ids returned {len(response.results)} results")
        return [r.record if r.HasField("record") else
                DictlogError(code_from_number(r.error.code), r.error.message)
                for r in response.results]

    def _decoded(self, result: _FrameResult, final: bool = False
                 ) -> Union[MultiGetResult, object]:
        """The MultiGet result of one MultiGetFrames result; _STALE if its dictionary
        was deleted (unless final: then DATA_LOSS, as the server would answer)."""
        if isinstance(result, DictlogError):
            return result
        if result.WhichOneof("content") == "payload":
            return Record(result.id, result.category, bytes(result.payload))
        try:
            decompressor = self._decompressor(result.dictionary_id, result.dictionary_check)
        except DictlogError as e:
            if e.code != grpc.StatusCode.NOT_FOUND:
                raise
            if not final:
                return _STALE
            return DictlogError(grpc.StatusCode.DATA_LOSS,
                                f"record {result.id}: stored frame names unknown "
                                f"dictionary id {result.dictionary_id} (or one the "
                                "server now has with other content)")
        try:
            size = zstandard.get_frame_parameters(result.frame).content_size
            if size > _MAX_RECORD_BYTES:
                return DictlogError(grpc.StatusCode.DATA_LOSS, f"record {result.id}: "
                                    "stored frame declares an oversized content size")
            payload = decompressor.decompress(result.frame)
        except zstandard.ZstdError as e:
            return DictlogError(grpc.StatusCode.DATA_LOSS,
                                f"record {result.id}: stored frame does not decode: {e}")
        return Record(result.id, result.category, payload)

    def _decompressor(self, dictionary_id: int, check: int) -> zstandard.ZstdDecompressor:
        """This thread's decompressor for dictionary_id (0: none) with content check
        `check`; zstandard's are not thread-safe, so each thread keeps its own for the
        few (id, check) it used last (they hold their dictionary: a larger number would
        outlive the cache's budget)."""
        per_thread = self._decompressors.__dict__.setdefault(
            "by_id", collections.OrderedDict())
        key = (dictionary_id, check)
        decompressor = per_thread.get(key)
        if decompressor is not None:
            per_thread.move_to_end(key)
            return decompressor
        if dictionary_id == 0:
            decompressor = zstandard.ZstdDecompressor()
        else:
            decompressor = zstandard.ZstdDecompressor(
                dict_data=self._dictionary(dictionary_id, check))
        per_thread[key] = decompressor
        if len(per_thread) > _DECOMPRESSORS_PER_THREAD:
            per_thread.popitem(last=False)
        return decompressor

    def _multiget_once(self, ids: List[str], partition: int = -1) -> List[MultiGetResult]:
        request = dictlog_pb2.MultiGetRequest(ids=ids)
        response = self._read("MultiGet", request, partition)
        if len(response.results) != len(ids):
            raise DictlogError(
                grpc.StatusCode.INTERNAL,
                f"MultiGet of {len(ids)} ids returned {len(response.results)} results")
        return [_multiget_result(r) for r in response.results]

    def _scan(self, request: dictlog_pb2.ScanRequest) -> Iterator[Record]:
        """The Scan stream; of a pool, on a serving replica of its partition, and once
        on another if the first refuses or fails UNAVAILABLE before any record."""
        partition = -1
        if request.WhichOneof("target") == "pool":
            partition = self._table().partition_of(request.pool)
        target = self._router.pick(partition) if self._router is not None else None
        try:
            yield from self._scan_on(request, target)
            return
        except _NothingReceived as e:
            refused = not_served_here(e.error)
            if refused is None and e.error.code != grpc.StatusCode.UNAVAILABLE:
                raise e.error from None
            hint = list(refused.replica_addresses) if refused is not None else []
        assert self._router is not None and target is not None
        second = self._router.retarget(partition, target.address, hint)
        try:
            yield from self._scan_on(request, second)
        except _NothingReceived as e:
            raise e.error from None

    def _scan_on(self, request: dictlog_pb2.ScanRequest, target: Optional[Any]
                 ) -> Iterator[Record]:
        """One Scan stream on target (None: the seed). A routed stream's error before
        its first response is raised as _NothingReceived (it may go elsewhere)."""
        if target is None:
            call = self._store.Scan(request, metadata=self._metadata)
        else:
            call = target.stub.Scan(request,
                                    metadata=(self._metadata or ()) + (ROUTE_HEADER,))
        received = False
        try:
            for response in call:
                received = True
                for record in response.records:
                    yield _record(record)
        except grpc.RpcError as e:
            error = from_rpc_error(e)
            if target is not None and not received:
                raise _NothingReceived(error) from None
            raise error from None
        finally:
            call.cancel()  # No-op once the stream has ended.

    def _follow(self, request: dictlog_pb2.FollowRequest) -> Iterator[Record]:
        while True:
            call = self._store.Follow(request, metadata=self._metadata)
            try:
                for response in call:
                    for record in response.records:
                        request.after_id, request.from_start = record.id, False
                        yield _record(record)
                return
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.ABORTED:
                    raise from_rpc_error(e) from None
                # Fell behind: resume after the last record yielded.
            finally:
                call.cancel()  # No-op once the stream has ended.

    def _dictionary(self, dictionary_id: int, check: int = 0
                    ) -> zstandard.ZstdCompressionDict:
        """The ZstdCompressionDict of dictionary_id from the cache if its content check
        is `check` (0: any), else fetched by GetDictionary. NOT_FOUND if the server's
        dictionary of that id has another check than `check` (the store was restored
        since the frame was read, or the reads went to another store)."""
        def fetch() -> Tuple[zstandard.ZstdCompressionDict, int, int]:
            request = dictlog_pb2.GetDictionaryRequest(id=dictionary_id)
            response = self._call(self._admin.GetDictionary, request, self._read_retry)
            content = bytes(response.content)
            dictionary = zstandard.ZstdCompressionDict(
                content, dict_type=zstandard.DICT_TYPE_FULLDICT)
            if dictionary.dict_id() != dictionary_id:
                raise DictlogError(
                    grpc.StatusCode.DATA_LOSS,
                    f"GetDictionary({dictionary_id}) returned dictionary "
                    f"{dictionary.dict_id()}")
            fetched_check = dictionary_check(content)
            if check not in (0, fetched_check):
                raise DictlogError(
                    grpc.StatusCode.NOT_FOUND,
                    f"dictionary {dictionary_id} on the server has content check "
                    f"{fetched_check}, not the frame's {check} (the store was restored "
                    "since the frame was read, or the reads went to another store)")
            return dictionary, len(content) + _DICTIONARY_TABLE_BYTES, fetched_check
        return self._dictionaries.get(dictionary_id, check, fetch)


class _NothingReceived(Exception):
    """A routed Scan stream failed before its first response with `error`."""

    def __init__(self, error: DictlogError) -> None:
        super().__init__(str(error))
        self.error = error


def backoff_seconds(initial: float, attempt: int) -> float:
    """The wait after failed attempt `attempt` (from 1): initial * 2^(attempt-1), at
    most 2 s, jittered uniformly down to half of it."""
    ceiling = min(_MAX_BACKOFF_SECONDS, initial * 2 ** (attempt - 1))
    return random.uniform(ceiling / 2, ceiling)


def _no_retry(code: grpc.StatusCode, attempt: int) -> bool:
    return False


def _record(message: dictlog_pb2.Record) -> Record:
    return Record(message.id, message.category, bytes(message.payload))


def _multiget_result(result: dictlog_pb2.MultiGetResult) -> MultiGetResult:
    if result.HasField("record"):
        return _record(result.record)
    return DictlogError(code_from_number(result.error.code), result.error.message)


def _is_resource_exhausted(result: MultiGetResult) -> bool:
    return (isinstance(result, DictlogError) and
            result.code == grpc.StatusCode.RESOURCE_EXHAUSTED)


def _decompress_one_frame(decompressor: zstandard.ZstdDecompressor, frame: Frame) -> bytes:
    """Decodes exactly one complete frame (the header need not carry the content size)."""
    try:
        stream = decompressor.decompressobj()
        payload = stream.decompress(frame.frame)
        complete = stream.eof and not stream.unused_data
    except zstandard.ZstdError as e:
        raise DictlogError(grpc.StatusCode.DATA_LOSS, f"{frame.id}: {e}") from e
    if not complete:
        raise DictlogError(grpc.StatusCode.DATA_LOSS,
                           f"{frame.id}: not exactly one complete zstd frame")
    return payload
