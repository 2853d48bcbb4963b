"""Client: appends and reads dictlog records over gRPC (dictlog.v1 LogStore and Admin).

A Client wraps one grpc channel to one dictlogd. Reads return records decoded by the
server, or, with get(id, decode_locally=True), fetch the stored zstd frame (GetFrame)
and decode it here with the python `zstandard` package and the dictionary the frame
names (GetDictionary, cached per dictionary id for the client's lifetime).

Thread safety: a Client may be used by any number of threads at once without external
synchronization: grpc channels and stubs are thread-safe, the dictionary cache is
guarded by a lock, and each local decode uses its own zstd decompression context. An
iterator returned by scan() must be consumed by one thread at a time. close() must not
be called while other threads still use the Client.
"""

import dataclasses
import threading
import time
import uuid

import grpc
import zstandard

from .errors import DictlogError, code_from_number, from_rpc_error

try:
    from . import dictlog_pb2, dictlog_pb2_grpc
except ImportError as e:  # Generated modules missing: a source checkout, not built.
    raise ImportError(
        "dictlog_client: generated modules missing; run client/python/generate.sh"
    ) from e

# The C++ client's receive limit; grpc's default (4 MiB) is below a large MultiGet.
_MAX_RECEIVE_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Record:
    """A stored record. `category` is None when the payload was decoded locally, as
    GetFrame does not carry it."""

    id: str
    category: str
    payload: bytes


@dataclasses.dataclass(frozen=True)
class Frame:
    """A record as a standard zstd frame and the id of the dictionary it needs (0: none)."""

    id: str
    frame: bytes
    dictionary_id: int


class Client:
    """A connection to one dictlogd. See the module docstring for the thread contract.

    target: "host:port" of the server. timeout: seconds each unary call may take
    (default 30; None: no deadline); an expired call raises DEADLINE_EXCEEDED.
    channel: an existing grpc.Channel to use instead of opening one; the Client then
    does not close it. append_attempts: tries of an append (default 3): each append
    carries a request id (random unless given) and is retried with it after UNAVAILABLE,
    DEADLINE_EXCEEDED or CANCELLED; the server stores it once (docs/api.md "Retries").
    TLS: root_certificates (PEM bytes of the CA the server's certificate must chain
    to) turns TLS on; private_key and certificate_chain (PEM bytes) add a client
    certificate for servers requiring mutual TLS. Default: plaintext.
    token: a bearer token sent with every call ("authorization: Bearer <token>").
    """

    def __init__(self, target="127.0.0.1:7070", *, timeout=30.0, channel=None,
                 root_certificates=None, private_key=None, certificate_chain=None,
                 token=None, append_attempts=3):
        self._owns_channel = channel is None
        if channel is None:
            options = [("grpc.max_receive_message_length", _MAX_RECEIVE_BYTES)]
            if root_certificates is None and certificate_chain is None:
                channel = grpc.insecure_channel(target, options=options)
            else:
                credentials = grpc.ssl_channel_credentials(
                    root_certificates, private_key, certificate_chain)
                channel = grpc.secure_channel(target, credentials, options=options)
        self._channel = channel
        self._timeout = timeout
        self._append_attempts = max(1, append_attempts)
        self._metadata = (("authorization", "Bearer " + token),) if token else None
        self._store = dictlog_pb2_grpc.LogStoreStub(channel)
        self._admin = dictlog_pb2_grpc.AdminStub(channel)
        self._dictionaries = {}  # dictionary id -> zstandard.ZstdCompressionDict
        self._dictionaries_lock = threading.Lock()

    def close(self):
        """Closes the channel if the Client opened it."""
        if self._owns_channel:
            self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    # LogStore -----------------------------------------------------------------------

    def append(self, category, payload, *, request_id=None):
        """Appends one record; returns its id ("<pool>/<seq>")."""
        request = dictlog_pb2.AppendRequest(category=category, payload=payload,
                                            request_id=request_id or uuid.uuid4().hex)
        return self._retried(self._store.Append, request).id

    def append_batch(self, records, *, request_id=None):
        """Appends (category, payload) pairs atomically; returns their ids in order."""
        request = dictlog_pb2.AppendBatchRequest(records=[
            dictlog_pb2.RecordToAppend(category=c, payload=p) for c, p in records
        ], request_id=request_id or uuid.uuid4().hex)
        return list(self._retried(self._store.AppendBatch, request).ids)

    def get(self, record_id, *, decode_locally=False):
        """Reads one record. With decode_locally, fetches its zstd frame and decodes it
        here (the returned Record's category is then None)."""
        if decode_locally:
            frame = self.get_frame(record_id)
            return Record(frame.id, None, self.decode_frame(frame))
        response = self._unary(self._store.Get, dictlog_pb2.GetRequest(id=record_id))
        return _record(response.record)

    def multiget(self, ids):
        """Reads many records: one result per id, in order, each a Record or, for an id
        that failed alone (malformed, missing), a DictlogError (returned, not raised)."""
        request = dictlog_pb2.MultiGetRequest(ids=list(ids))
        response = self._unary(self._store.MultiGet, request)
        return [_multiget_result(r) for r in response.results]

    def scan(self, *, category=None, pool=None, from_id="", limit=0):
        """Yields the records of a pool (or of one category) in append order, starting
        at from_id (inclusive; "" the start), at most limit (0: no limit). Exactly one
        of category and pool. The stream has no deadline; closing the iterator early
        cancels it."""
        if (category is None) == (pool is None):
            raise DictlogError(grpc.StatusCode.INVALID_ARGUMENT,
                               "scan needs exactly one of category and pool")
        request = dictlog_pb2.ScanRequest(from_id=from_id, limit=limit)
        if category is not None:
            request.category = category
        else:
            request.pool = pool
        return self._scan(request)

    def get_frame(self, record_id):
        """The stored record as a standard zstd frame, with its dictionary id."""
        response = self._unary(self._store.GetFrame, dictlog_pb2.GetRequest(id=record_id))
        return Frame(response.id, bytes(response.frame), response.dictionary_id)

    def decode_frame(self, frame):
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
                dict_data=self._dictionary(frame.dictionary_id))
        return _decompress_one_frame(decompressor, frame)

    # Admin --------------------------------------------------------------------------

    def pools(self):
        """Every pool's dictlog.v1.PoolInfo message, ordered by name."""
        return list(self._unary(self._admin.ListPools, dictlog_pb2.ListPoolsRequest()).pools)

    def get_dictionary(self, dictionary_id):
        """The dictionary's bytes in the standard zstd format (cached per id)."""
        return self._dictionary(dictionary_id).as_bytes()

    def train_dictionary(self, pool, *, activate=False, dictionary_bytes=0):
        """Trains a candidate dictionary for pool (TrainDictionary); returns the
        dictlog.v1.TrainDictionaryResponse."""
        request = dictlog_pb2.TrainDictionaryRequest(
            pool=pool, activate=activate, dictionary_bytes=dictionary_bytes)
        return self._unary(self._admin.TrainDictionary, request)

    # Internals ----------------------------------------------------------------------

    def _unary(self, method, request):
        try:
            return method(request, timeout=self._timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def _retried(self, method, request):
        backoff = 0.1
        for attempt in range(1, self._append_attempts + 1):
            try:
                return self._unary(method, request)
            except DictlogError as e:
                # CANCELLED: a server shutting down cancels calls it accepted but
                # never started; the request id makes a retry safe.
                retryable = e.code in (grpc.StatusCode.UNAVAILABLE,
                                       grpc.StatusCode.DEADLINE_EXCEEDED,
                                       grpc.StatusCode.CANCELLED)
                if not retryable or attempt == self._append_attempts:
                    raise
            time.sleep(backoff)
            backoff *= 2

    def _scan(self, request):
        call = self._store.Scan(request, metadata=self._metadata)
        try:
            for response in call:
                for record in response.records:
                    yield _record(record)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()  # No-op once the stream has ended.

    def _dictionary(self, dictionary_id):
        """The ZstdCompressionDict of dictionary_id, fetched by GetDictionary once.
        Dictionary ids are never reused, so entries never go stale; the cache holds every
        dictionary this Client has decoded with."""
        with self._dictionaries_lock:
            cached = self._dictionaries.get(dictionary_id)
        if cached is not None:
            return cached
        request = dictlog_pb2.GetDictionaryRequest(id=dictionary_id)
        content = bytes(self._unary(self._admin.GetDictionary, request).content)
        dictionary = zstandard.ZstdCompressionDict(
            content, dict_type=zstandard.DICT_TYPE_FULLDICT)
        if dictionary.dict_id() != dictionary_id:
            raise DictlogError(
                grpc.StatusCode.DATA_LOSS,
                f"GetDictionary({dictionary_id}) returned dictionary {dictionary.dict_id()}")
        with self._dictionaries_lock:
            return self._dictionaries.setdefault(dictionary_id, dictionary)


def _record(message):
    return Record(message.id, message.category, bytes(message.payload))


def _multiget_result(result):
    if result.HasField("record"):
        return _record(result.record)
    return DictlogError(code_from_number(result.error.code), result.error.message)


def _decompress_one_frame(decompressor, frame):
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
