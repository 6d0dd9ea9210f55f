"""JSON-RPC 2.0 envelopes (spec §9; jsonrpc.org/specification): parse and render, no I/O."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .errors import A2AError, InvalidRequestError

JSONRPC_VERSION = "2.0"
RequestId = str | int | float | None


class JSONRPCRequest(NamedTuple):
    """One parsed request (immutable; a tuple: built once per request, cheaper than a frozen
    dataclass, whose ``__init__`` sets each field through ``object.__setattr__``)."""

    method: str
    params: dict[str, Any]
    id: RequestId
    is_notification: bool  #: no ``id`` member at all: the server must not answer


def parse_request(obj: Any) -> JSONRPCRequest:
    """Validate one request object; raise :class:`InvalidRequestError` saying what is wrong."""
    if not isinstance(obj, dict):
        raise InvalidRequestError("a JSON-RPC request must be a JSON object")
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        raise InvalidRequestError('"jsonrpc" must be exactly "2.0"')
    request_id = obj.get("id")
    if "id" in obj and (
        isinstance(request_id, bool) or not isinstance(request_id, (str, int, float, type(None)))
    ):
        raise InvalidRequestError('"id" must be a string, a number or null')
    method = obj.get("method")
    if not isinstance(method, str) or not method:
        raise InvalidRequestError('"method" must be a non-empty string')
    params = obj.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidRequestError('"params" must be an object (by-name parameters)')
    return JSONRPCRequest(method, params, request_id, "id" not in obj)


def request_id_of(obj: Any) -> RequestId:
    """The id to answer an invalid request with (null when it cannot be read)."""
    if isinstance(obj, dict):
        value = obj.get("id")
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return value
    return None


def success(request_id: RequestId, result: Any) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result}


def result_frame(request_id: RequestId) -> tuple[bytes, bytes]:
    """The bytes around an already-encoded result: ``head + result + tail`` is the success
    response (the result is encoded once, not parsed back into a dict)."""
    if type(request_id) is int:  # the common case, without the JSON encoder's set-up
        encoded = b"%d" % request_id
    else:
        encoded = json.dumps(request_id, separators=(",", ":"), ensure_ascii=False).encode()
    return b'{"jsonrpc":"2.0","id":' + encoded + b',"result":', b"}"


def failure(request_id: RequestId, error: A2AError) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "error": error.to_jsonrpc()}


def make_request(method: str, params: dict[str, Any], request_id: RequestId) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "method": method, "params": params}
