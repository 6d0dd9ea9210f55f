"""The gRPC wire codec shared by the server binding and the client transport (spec §10). No I/O.

Our models speak ProtoJSON (``to_dict()``/``from_dict()``), which is exactly protobuf's canonical
JSON mapping, so a model and a protobuf message of ``a2a.proto`` convert into each other through
``google.protobuf.json_format``. The message classes of each rpc come from the service descriptor
of the generated code, so nothing here lists them twice. A2A 0.3's service (``a2a.v1``, the
``_grpc_v03`` code) has its own messages and rpc names (:mod:`simple_a2a.protocol.grpc_v03`).

Errors (spec §10.6): a ``google.rpc.Status`` with the §5.4 gRPC code, the error's message and its
details (``google.rpc.ErrorInfo``, ``google.rpc.BadRequest``) packed as ``Any``, carried in the
``grpc-status-details-bin`` trailing metadata; :func:`error_from_status` rebuilds the typed error.

Importing this module needs the ``grpc`` extra (protobuf and googleapis-common-protos); the
:func:`require_grpc` message says how to install it.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from . import grpc_v03
from .errors import (
    BAD_REQUEST_TYPE,
    ERROR_INFO_TYPE,
    RETRY_INFO_TYPE,
    A2AError,
    InternalError,
    InvalidParamsError,
    TaskNotFoundError,
    error_from_rest,
)

INSTALL_HINT = "pip install 'simple-a2a[grpc]'"
SERVICE = "lf.a2a.v1.A2AService"
SERVICE_V03 = grpc_v03.SERVICE
STATUS_DETAILS_KEY = "grpc-status-details-bin"
VERSION_KEY = "a2a-version"
EXTENSIONS_KEY = "a2a-extensions"


def require_grpc() -> None:
    """Raise an ``ImportError`` naming the extra when grpcio or protobuf is missing."""
    try:
        for name in ("google.protobuf", "google.rpc.status_pb2", "grpc"):
            importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"the gRPC binding needs the 'grpc' extra: {INSTALL_HINT} ({exc})"
        ) from exc


require_grpc()

from google.protobuf import json_format, message_factory  # noqa: E402
from google.protobuf.any_pb2 import Any as AnyPb  # noqa: E402
from google.protobuf.message import Message as PbMessage  # noqa: E402
from google.rpc import code_pb2, error_details_pb2, status_pb2  # noqa: E402

from ._grpc import a2a_pb2  # noqa: E402

_KNOWN_DETAILS = {
    ERROR_INFO_TYPE: error_details_pb2.ErrorInfo,
    BAD_REQUEST_TYPE: error_details_pb2.BadRequest,
    RETRY_INFO_TYPE: error_details_pb2.RetryInfo,
}


@cache
def message_types(operation: str, v03: bool = False) -> tuple[type[PbMessage], type[PbMessage]]:
    """The protobuf (request, response) classes of an operation's rpc: in ``A2AService`` of
    1.0, or with ``v03`` of 0.3 (:class:`UnsupportedOperationError` when 0.3 has none)."""
    if v03:
        from ._grpc_v03 import a2a_v03_pb2

        service = a2a_v03_pb2.DESCRIPTOR.services_by_name["A2AService"]
        method = service.methods_by_name[grpc_v03.rpc_of(operation)]
    else:
        method = a2a_pb2.DESCRIPTOR.services_by_name["A2AService"].methods_by_name[operation]
    return (
        message_factory.GetMessageClass(method.input_type),
        message_factory.GetMessageClass(method.output_type),
    )


def to_message(data: dict[str, Any], cls: type[PbMessage]) -> PbMessage:
    """A protobuf message from a ProtoJSON dict (unknown members ignored)."""
    return json_format.ParseDict(data, cls(), ignore_unknown_fields=True)


def to_dict(message: PbMessage) -> dict[str, Any]:
    """The ProtoJSON dict of a protobuf message (camelCase, enums by name)."""
    result: dict[str, Any] = json_format.MessageToDict(message)
    return result


def received_dict(
    message: PbMessage, refusal: type[A2AError] = InvalidParamsError
) -> dict[str, Any]:
    """:func:`to_dict` of a message received. A value ProtoJSON cannot carry (NaN or infinity in
    a ``Struct``, which the binary form allows) raises ``refusal``: a request's invalid params on
    a server (as the same number is a parse error over HTTP, #16 item 4), an invalid agent
    response on a client; never a bare protobuf error."""
    try:
        return to_dict(message)
    except json_format.SerializeToJsonError as exc:
        raise refusal(f"the message holds a value JSON cannot carry: {exc}") from None


# -- errors -----------------------------------------------------------------------------------


def status_of(err: A2AError) -> status_pb2.Status:
    """The ``google.rpc.Status`` of an error: §5.4 code, message, ErrorInfo (and BadRequest)."""
    status = status_pb2.Status(code=code_pb2.Code.Value(err.grpc_status), message=err.message)
    for detail in err.all_details():
        cls = _KNOWN_DETAILS.get(str(detail.get("@type")))
        if cls is None:
            continue  # a detail type we cannot pack without its descriptor
        body = {k: v for k, v in detail.items() if k != "@type"}
        packed = AnyPb()
        packed.Pack(json_format.ParseDict(body, cls(), ignore_unknown_fields=True))
        status.details.append(packed)
    return status


def status_details(status: status_pb2.Status) -> list[dict[str, Any]]:
    """The details of a Status as ``@type`` dicts (the ones this codec knows how to read)."""
    out: list[dict[str, Any]] = []
    for packed in status.details:
        for type_url, cls in _KNOWN_DETAILS.items():
            if packed.type_url.endswith("/" + cls.DESCRIPTOR.full_name):
                detail = cls()
                packed.Unpack(detail)
                out.append({"@type": type_url, **json_format.MessageToDict(detail)})
    return out


#: The error a gRPC code stands for when no ErrorInfo says more (a proxy, a foreign peer),
#: as the HTTP status :func:`error_from_rest` falls back on.
_FALLBACK_HTTP = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "UNIMPLEMENTED": 404,
}


def error_from_status(code: str, message: str, details: list[dict[str, Any]]) -> A2AError:
    """Rebuild the typed error from a gRPC status code name, message and details.

    A message ``"TaskNotFoundError: <text>"`` (0.3 servers, :mod:`.grpc_v03`) names the error
    when no ErrorInfo does, and its text is the error's message either way."""
    has_info = any(d.get("@type") == ERROR_INFO_TYPE for d in details)
    named = grpc_v03.split_error_message(message)
    if named is not None:
        cls, message = named
        if not has_info:
            return cls(message or None)
    if not has_info and code == "NOT_FOUND":
        return TaskNotFoundError(message or None)
    if not has_info and code not in _FALLBACK_HTTP:
        return InternalError(f"gRPC {code}: {message}" if message else f"gRPC {code}")
    body = {"error": {"message": message or f"gRPC {code}", "details": details}}
    return error_from_rest(body, _FALLBACK_HTTP.get(code, 500))


def error_from_trailers(code: str, message: str, trailers: Any) -> A2AError:
    """The typed error of a failed call, from its code, message and trailing metadata."""
    for key, value in trailers or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            try:
                status = status_pb2.Status.FromString(value)
            except Exception:  # a malformed trailer: fall back on the code
                break
            return error_from_status(code, status.message or message, status_details(status))
    return error_from_status(code, message, [])
