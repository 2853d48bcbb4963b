"""dictlog_client: a Python client for dictlog (gRPC API dictlog.v1).

    from dictlog_client import Client
    with Client("127.0.0.1:7070") as client:
        record_id = client.append("HDFS", b"a log line")
        assert client.get(record_id).payload == b"a log line"

Client is safe to share between threads; see dictlog_client.client for the contract.
Every error is a DictlogError with a grpc.StatusCode `code` and a `message`.
"""

from .client import Client, Frame, MultiGetResult, Record, dictionary_check
from .errors import DictlogError

__version__ = "0.1.0"

__all__ = ["Client", "DictlogError", "Frame", "MultiGetResult", "Record", "dictionary_check"]
