"""DictlogError: the one exception type of the dictlog client.

Every failed call raises a DictlogError carrying a canonical gRPC status code
(grpc.StatusCode) and the server's message; gRPC errors are converted in exactly one
function, from_rpc_error(). Values are immutable and may be shared between threads.
"""

from __future__ import annotations

import grpc

# Numeric canonical code (as in MultiGet's RecordError.code) -> grpc.StatusCode.
_CODES_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


class DictlogError(Exception):
    """A failed dictlog call: `code` (grpc.StatusCode) and `message` (str);
    `status_details`: the serialized RpcStatus the server sent in the trailer
    grpc-status-details-bin (b"" if none; shard_routing.not_served_here reads it)."""

    def __init__(self, code: grpc.StatusCode, message: str,
                 status_details: bytes = b"") -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.status_details = status_details

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DictlogError) and self.code == other.code and
                self.message == other.message)

    def __hash__(self) -> int:
        return hash((self.code, self.message))

    def __repr__(self) -> str:
        return f"DictlogError({self.code.name}, {self.message!r})"


def code_from_number(number: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a numeric canonical code; UNKNOWN for numbers outside it."""
    return _CODES_BY_NUMBER.get(number, grpc.StatusCode.UNKNOWN)


def from_rpc_error(error: grpc.RpcError) -> DictlogError:
    """Converts a grpc.RpcError raised by a stub call into a DictlogError."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    status_details = b""
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            status_details = value
    return DictlogError(code or grpc.StatusCode.UNKNOWN, details or "", status_details)
