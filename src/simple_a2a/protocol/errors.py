"""Every A2A error, with its JSON-RPC code, HTTP status and gRPC status (spec §3.3.2, §5.4).

The hierarchy (modelled on httpx's ``_exceptions.py``)::

    A2AError                          base of every protocol error
    ├── JSONRPCError                  JSON-RPC 2.0 standard errors (spec §9.5)
    │   ├── JSONParseError            -32700  malformed JSON
    │   ├── InvalidRequestError       -32600  not a valid request object
    │   ├── MethodNotFoundError       -32601  unknown method / route
    │   ├── InvalidParamsError        -32602  bad parameters (names the field)
    │   └── InternalError             -32603  server fault (never the exception text)
    │       └── RateLimitError        -32603  503 / UNAVAILABLE: over a limit, retry later
    ├── TaskNotFoundError             -32001
    ├── TaskNotCancelableError        -32002
    ├── PushNotificationNotSupportedError -32003
    ├── UnsupportedOperationError     -32004
    ├── ContentTypeNotSupportedError  -32005
    ├── InvalidAgentResponseError     -32006
    ├── ExtendedAgentCardNotConfiguredError -32007
    ├── ExtensionSupportRequiredError -32008
    ├── VersionNotSupportedError      -32009
    ├── AuthenticationError           -32010  401 (a JSON-RPC "custom error", spec §3.3.2)
    └── PermissionDeniedError         -32011  403

Every error renders itself for each binding: :meth:`A2AError.to_jsonrpc` (the ``error`` member
of a JSON-RPC response) and :meth:`A2AError.to_rest` (a ``google.rpc.Status`` body, spec §11.6),
both with ``google.rpc.ErrorInfo`` details; :func:`error_from_jsonrpc` and
:func:`error_from_rest` rebuild the
typed error on the client side.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, ClassVar

ERROR_DOMAIN = "a2a-protocol.org"
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"
RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo"


def _reason_of(name: str) -> str:
    base = name[: -len("Error")] if name.endswith("Error") else name
    return re.sub(r"(?<!^)(?=[A-Z])", "_", base).upper()


class A2AError(Exception):
    """Base of every A2A protocol error.

    ``message`` is safe to show to a caller; ``details`` are extra ``@type`` objects for the
    binding's error details; ``metadata`` goes into the ``google.rpc.ErrorInfo`` detail.
    """

    code: ClassVar[int] = -32603
    http_status: ClassVar[int] = 500
    grpc_status: ClassVar[str] = "INTERNAL"
    default_message: ClassVar[str] = "Internal error"
    reason: ClassVar[str] = "INTERNAL"

    def __init__(
        self,
        message: str | None = None,
        *,
        metadata: dict[str, str] | None = None,
        details: list[dict[str, Any]] | None = None,
        task_id: str | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.metadata = dict(metadata or {})
        if task_id is not None:
            self.metadata.setdefault("taskId", task_id)
        self.details = list(details or [])
        super().__init__(self.message)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "reason" not in cls.__dict__:
            cls.reason = _reason_of(cls.__name__)

    def error_info(self) -> dict[str, Any]:
        metadata = dict(self.metadata)
        metadata.setdefault(
            "timestamp",
            datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        )
        return {
            "@type": ERROR_INFO_TYPE,
            "reason": self.reason,
            "domain": ERROR_DOMAIN,
            "metadata": metadata,
        }

    def all_details(self) -> list[dict[str, Any]]:
        return [self.error_info(), *self.details]

    def to_jsonrpc(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC response (spec §9.5)."""
        return {"code": self.code, "message": self.message, "data": self.all_details()}

    def to_rest(self) -> dict[str, Any]:
        """The ``google.rpc.Status`` JSON body of an HTTP+JSON error (spec §11.6)."""
        return {
            "error": {
                "code": self.http_status,
                "status": self.grpc_status,
                "message": self.message,
                "details": self.all_details(),
            }
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class JSONRPCError(A2AError):
    """The standard JSON-RPC 2.0 errors (spec §9.5)."""


class JSONParseError(JSONRPCError):
    code = -32700
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Invalid JSON payload"
    reason = "INVALID_JSON"


class InvalidRequestError(JSONRPCError):
    code = -32600
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Request payload validation error"
    reason = "INVALID_REQUEST"


class MethodNotFoundError(JSONRPCError):
    code = -32601
    http_status = 404
    grpc_status = "UNIMPLEMENTED"
    default_message = "Method not found"
    reason = "METHOD_NOT_FOUND"


class InvalidParamsError(JSONRPCError):
    """Invalid parameters; ``field_violations`` become a ``google.rpc.BadRequest`` detail."""

    code = -32602
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Invalid parameters"
    reason = "INVALID_PARAMS"

    def __init__(
        self,
        message: str | None = None,
        *,
        field_violations: list[dict[str, str]] | None = None,
        field: str | None = None,
        **kwargs: Any,
    ) -> None:
        violations = list(field_violations or [])
        if field is not None and not violations:
            violations.append({"field": field, "description": message or "invalid"})
        details = list(kwargs.pop("details", None) or [])
        if violations:
            details.append({"@type": BAD_REQUEST_TYPE, "fieldViolations": violations})
        self.field_violations = violations
        super().__init__(message, details=details, **kwargs)


class InternalError(JSONRPCError):
    code = -32603
    http_status = 500
    grpc_status = "INTERNAL"
    default_message = "Internal error"
    reason = "INTERNAL"


class RateLimitError(InternalError):
    """The caller is over one of the agent's limits: retry later (spec §3.3.2 "System Errors",
    whose examples are "rate limit exceeded", HTTP 503, gRPC UNAVAILABLE and JSON-RPC -32603;
    §13 "Rate Limiting and Abuse Prevention").

    ``retry_after`` (seconds, when the agent gave one) travels as a ``google.rpc.RetryInfo``
    detail, and over HTTP+JSON also as the ``Retry-After`` header. Nothing of the refused request
    was done, so a client may send it again whatever the operation.
    """

    code = -32603
    http_status = 503
    grpc_status = "UNAVAILABLE"
    default_message = "Too many requests; retry later"
    reason = "RATE_LIMIT_EXCEEDED"

    def __init__(
        self, message: str | None = None, *, retry_after: float | None = None, **kwargs: Any
    ) -> None:
        super().__init__(message, **kwargs)
        if retry_after is not None and self.retry_after is None:
            self.details.append({"@type": RETRY_INFO_TYPE, "retryDelay": f"{retry_after:g}s"})

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before retrying (the ``RetryInfo`` detail), if the agent said."""
        for detail in self.details:
            delay = detail.get("retryDelay") if detail.get("@type") == RETRY_INFO_TYPE else None
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return max(0.0, float(delay[:-1]))
                except ValueError:
                    return None
        return None


class TaskNotFoundError(A2AError):
    code = -32001
    http_status = 404
    grpc_status = "NOT_FOUND"
    default_message = "Task not found"


class TaskNotCancelableError(A2AError):
    code = -32002
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "Task cannot be canceled"


class PushNotificationNotSupportedError(A2AError):
    code = -32003
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "Push notifications are not supported"


class UnsupportedOperationError(A2AError):
    code = -32004
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "This operation is not supported"


class ContentTypeNotSupportedError(A2AError):
    code = -32005
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    default_message = "Incompatible content types"


class InvalidAgentResponseError(A2AError):
    code = -32006
    http_status = 500
    grpc_status = "INTERNAL"
    default_message = "Invalid agent response"


class ExtendedAgentCardNotConfiguredError(A2AError):
    code = -32007
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "Extended agent card is not configured"


class ExtensionSupportRequiredError(A2AError):
    code = -32008
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "A required extension was not declared by the client"


class VersionNotSupportedError(A2AError):
    code = -32009
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    default_message = "This A2A protocol version is not supported"


class AuthenticationError(A2AError):
    """Missing or invalid credentials (spec §3.3.2, §7.4): HTTP 401 in every binding."""

    code = -32010
    http_status = 401
    grpc_status = "UNAUTHENTICATED"
    default_message = "Authentication required"
    reason = "UNAUTHENTICATED"


class PermissionDeniedError(A2AError):
    """Authenticated, but not allowed (spec §3.3.2, §7.5): HTTP 403."""

    code = -32011
    http_status = 403
    grpc_status = "PERMISSION_DENIED"
    default_message = "Permission denied"
    reason = "PERMISSION_DENIED"


__all__ = [
    "A2AError",
    "AuthenticationError",
    "ContentTypeNotSupportedError",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "JSONRPCError",
    "MethodNotFoundError",
    "PermissionDeniedError",
    "PushNotificationNotSupportedError",
    "RateLimitError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
    "error_from_jsonrpc",
    "error_from_rest",
]

ALL_ERRORS: tuple[type[A2AError], ...] = (
    JSONParseError,
    InvalidRequestError,
    MethodNotFoundError,
    InvalidParamsError,
    InternalError,
    TaskNotFoundError,
    TaskNotCancelableError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    VersionNotSupportedError,
    AuthenticationError,
    PermissionDeniedError,
    RateLimitError,
)

#: A code's class is the first listed with it (-32603 is InternalError; its subclass
#: RateLimitError is told apart by the ErrorInfo reason).
_BY_CODE: dict[int, type[A2AError]] = {}
for _cls in ALL_ERRORS:
    _BY_CODE.setdefault(_cls.code, _cls)
_BY_REASON = {cls.reason: cls for cls in ALL_ERRORS}


def _build(cls: type[A2AError], message: str | None, details: Any) -> A2AError:
    extra: list[dict[str, Any]] = []
    metadata: dict[str, str] = {}
    violations: list[dict[str, str]] | None = None
    for item in details if isinstance(details, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("@type") == ERROR_INFO_TYPE:
            metadata = {str(k): str(v) for k, v in (item.get("metadata") or {}).items()}
        elif item.get("@type") == BAD_REQUEST_TYPE and issubclass(cls, InvalidParamsError):
            violations = list(item.get("fieldViolations") or [])
        else:
            extra.append(item)
    if violations is not None:
        return InvalidParamsError(
            message, field_violations=violations, metadata=metadata, details=extra
        )
    return cls(message, metadata=metadata, details=extra)


def error_from_jsonrpc(error: dict[str, Any]) -> A2AError:
    """Rebuild the typed error from a JSON-RPC ``error`` object (client side)."""
    code = error.get("code")
    cls = _BY_CODE.get(code) if isinstance(code, int) else None
    data = error.get("data")
    by_reason = _reason_class(data) if isinstance(data, list) else None
    if by_reason is not None and (cls is None or issubclass(by_reason, cls)):
        cls = by_reason  # the reason is more precise than the code (RateLimitError's -32603)
    err = _build(cls or A2AError, error.get("message"), data)
    if cls is None and isinstance(code, int):
        err.metadata.setdefault("code", str(code))
    return err


#: The error a REST status stands for when the body carries no ErrorInfo (a proxy, a peer).
_BY_HTTP_STATUS: dict[int, type[A2AError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: MethodNotFoundError,
    500: InternalError,
}


def error_from_rest(body: Any, http_status: int) -> A2AError:
    """Rebuild the typed error from an HTTP+JSON error body (client side, spec §11.6)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {}
    details = error.get("details")
    cls = _reason_class(details) if isinstance(details, list) else None
    if (
        cls is None
        and isinstance(details, list)
        and any(isinstance(d, dict) and d.get("@type") == BAD_REQUEST_TYPE for d in details)
    ):
        cls = InvalidParamsError
    if cls is None:
        cls = _BY_HTTP_STATUS.get(http_status, A2AError)
    message = error.get("message")
    return _build(
        cls, message if isinstance(message, str) and message else f"HTTP {http_status}", details
    )


def _reason_class(details: list[Any]) -> type[A2AError] | None:
    for item in details:
        if isinstance(item, dict) and item.get("@type") == ERROR_INFO_TYPE:
            return _BY_REASON.get(str(item.get("reason")))
    return None
