"""Every A2A error with its codes, and its wire shapes (spec §3.3.2, §5.4, §9.5, §10.6, §11.6).

The §5.4 and §9.5 tables are read from specification.md, not copied.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from simple_a2a.protocol import errors
from simple_a2a.protocol.errors import (
    ALL_ERRORS,
    BAD_REQUEST_TYPE,
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    A2AError,
    AuthenticationError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    PermissionDeniedError,
    TaskNotFoundError,
    error_from_jsonrpc,
    error_from_rest,
)
from tests.protocol._spec import markdown_table, section_text

ERROR_TABLE = markdown_table(section_text("5.4"))
JSONRPC_TABLE = markdown_table(section_text("9.5"))
A2A_SPECIFIC = [row[0] for row in markdown_table(section_text("3.3.2").split("A2A-Specific")[1])]
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_tables_were_read() -> None:
    """Guard the table readers: nine A2A errors (§3.3.2, §5.4), five JSON-RPC errors (§9.5)."""
    assert len(ERROR_TABLE) == 9
    assert len(JSONRPC_TABLE) == 5
    assert [row[0] for row in ERROR_TABLE] == A2A_SPECIFIC


@pytest.mark.parametrize("row", ERROR_TABLE, ids=lambda r: r[0])
def test_a2a_error_codes(row: list[str]) -> None:
    """Spec §5.4: JSON-RPC code, gRPC status and HTTP status of every A2A-specific error."""
    name, code, grpc, http = row
    cls = getattr(errors, name)
    assert issubclass(cls, A2AError) and cls in ALL_ERRORS
    assert cls.code == int(code)
    assert cls.grpc_status == grpc
    assert cls.http_status == int(http.split()[0])


@pytest.mark.parametrize("row", ERROR_TABLE, ids=lambda r: r[0])
def test_a2a_error_reason(row: list[str]) -> None:
    """Spec §10.6, §11.6: ErrorInfo.reason is the error name in UPPER_SNAKE_CASE without
    ``Error`` (``TASK_NOT_FOUND``)."""
    cls = getattr(errors, row[0])
    words = re.findall(r"[A-Z][a-z]*", row[0].removesuffix("Error"))
    assert cls.reason == "_".join(w.upper() for w in words)


@pytest.mark.parametrize("row", JSONRPC_TABLE, ids=lambda r: r[1])
def test_jsonrpc_standard_errors(row: list[str]) -> None:
    """Spec §9.5: the standard JSON-RPC codes, with the standard messages."""
    code, name, message, _ = row
    cls = getattr(errors, name)
    assert cls.code == int(code)
    assert cls.default_message == message.strip('"')
    assert cls().message == message.strip('"')


def test_a2a_codes_in_reserved_range() -> None:
    """Spec §9.5: A2A-specific codes lie in -32001..-32099; every code is unique, but for
    RateLimitError: spec §3.3.2 puts "rate limit exceeded" under System Errors, JSON-RPC -32603,
    so it is InternalError's subclass with that code, told apart by its ErrorInfo reason."""
    codes = [cls.code for cls in ALL_ERRORS if cls is not errors.RateLimitError]
    assert len(codes) == len(set(codes))
    assert errors.RateLimitError.code == InternalError.code
    assert issubclass(errors.RateLimitError, InternalError)
    for cls in ALL_ERRORS:
        if not issubclass(cls, errors.JSONRPCError):
            assert -32099 <= cls.code <= -32001, cls
    assert len({cls.reason for cls in ALL_ERRORS}) == len(ALL_ERRORS)


def _bullet_codes(category: str) -> str:
    text = section_text("3.3.2")
    block = text.split(f"**{category}**")[1].split("- **")[0]
    line = next(li for li in block.splitlines() if "Example error codes" in li)
    return line


@pytest.mark.parametrize(
    ("category", "cls"),
    [
        ("Authentication Errors", AuthenticationError),
        ("Authorization Errors", PermissionDeniedError),
        ("Validation Errors", InvalidParamsError),
        ("Resource Errors", TaskNotFoundError),
        ("System Errors", InternalError),
        ("System Errors", errors.RateLimitError),
    ],
)
def test_error_categories(category: str, cls: type[A2AError]) -> None:
    """Spec §3.3.2 error categories: the HTTP status and gRPC status of each category."""
    line = _bullet_codes(category)
    assert f"`{cls.http_status} " in line
    assert f"`{cls.grpc_status}`" in line
    if "-326" in line:
        assert f"`{cls.code} " in line


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_to_jsonrpc_shape(cls: type[A2AError]) -> None:
    """Spec §9.5: ``{code, message, data: [ErrorInfo, ...]}``; every detail has ``@type``;
    ErrorInfo carries reason, domain ``a2a-protocol.org`` and metadata with a timestamp."""
    err = cls("boom", metadata={"taskId": "t-1"})
    body = err.to_jsonrpc()
    assert set(body) == {"code", "message", "data"}
    assert body["code"] == cls.code and body["message"] == "boom"
    info = body["data"][0]
    assert info["@type"] == ERROR_INFO_TYPE
    assert info["reason"] == cls.reason and info["domain"] == ERROR_DOMAIN
    assert info["metadata"]["taskId"] == "t-1"
    assert TIMESTAMP.match(info["metadata"]["timestamp"])
    assert all("@type" in d for d in body["data"])


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_to_rest_shape(cls: type[A2AError]) -> None:
    """Spec §11.6: a ``google.rpc.Status`` body: ``{"error": {code (HTTP status), status,
    message, details: [ErrorInfo, ...]}}``."""
    body = cls("boom").to_rest()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"code", "status", "message", "details"}
    assert error["code"] == cls.http_status
    assert error["status"] == cls.grpc_status
    assert error["message"] == "boom"
    assert error["details"][0]["@type"] == ERROR_INFO_TYPE
    assert error["details"][0]["reason"] == cls.reason


def _same(a: A2AError, b: A2AError) -> None:
    assert type(a) is type(b)
    assert a.message == b.message
    # the wire adds a timestamp to ErrorInfo's metadata; everything else survives
    assert {k: v for k, v in b.metadata.items() if k != "timestamp"} == a.metadata
    assert a.details == b.details


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_jsonrpc_round_trip(cls: type[A2AError]) -> None:
    """Client side (spec §9.5): the typed error, message and metadata come back."""
    err = cls("went wrong", metadata={"taskId": "t-9", "hint": "x"})
    back = error_from_jsonrpc(err.to_jsonrpc())
    _same(err, back)
    assert back.to_jsonrpc() == error_from_jsonrpc(back.to_jsonrpc()).to_jsonrpc()


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_rest_round_trip(cls: type[A2AError]) -> None:
    """Client side (spec §11.6): ErrorInfo.reason picks the class even where HTTP statuses
    are shared (e.g. every FAILED_PRECONDITION error is a 400)."""
    err = cls("went wrong", metadata={"taskId": "t-9"})
    back = error_from_rest(err.to_rest(), err.http_status)
    _same(err, back)


def test_invalid_params_bad_request_detail() -> None:
    """Spec §9.5, §11.6: invalid params carry a ``google.rpc.BadRequest`` with fieldViolations,
    beside the ErrorInfo; both survive the round trip, with the metadata."""
    violations = [{"field": "message.parts", "description": "At least one part is required"}]
    err = InvalidParamsError("Invalid parameters", field_violations=violations, task_id="t-1")
    data = err.to_jsonrpc()["data"]
    assert data[0]["@type"] == ERROR_INFO_TYPE and data[0]["reason"] == "INVALID_PARAMS"
    assert data[1] == {"@type": BAD_REQUEST_TYPE, "fieldViolations": violations}
    for back in (
        error_from_jsonrpc(err.to_jsonrpc()),
        error_from_rest(err.to_rest(), 400),
    ):
        assert isinstance(back, InvalidParamsError)
        assert back.field_violations == violations
        assert back.metadata["taskId"] == "t-1"
        assert back.details == err.details


def test_invalid_params_single_field() -> None:
    """``field=`` is a shortcut for one violation."""
    err = InvalidParamsError("bad id", field="id")
    assert err.field_violations == [{"field": "id", "description": "bad id"}]


def test_details_order_does_not_matter() -> None:
    """A peer may put BadRequest before ErrorInfo: metadata is still read."""
    body: dict[str, Any] = {
        "code": -32602,
        "message": "Invalid parameters",
        "data": [
            {"@type": BAD_REQUEST_TYPE, "fieldViolations": [{"field": "id", "description": "x"}]},
            {
                "@type": ERROR_INFO_TYPE,
                "reason": "INVALID_PARAMS",
                "domain": ERROR_DOMAIN,
                "metadata": {"taskId": "t"},
            },
        ],
    }
    err = error_from_jsonrpc(body)
    assert isinstance(err, InvalidParamsError)
    assert err.metadata == {"taskId": "t"}
    assert err.field_violations == [{"field": "id", "description": "x"}]


def test_unknown_jsonrpc_code_keeps_the_code() -> None:
    """An error code we do not know becomes a plain A2AError that remembers the code."""
    err = error_from_jsonrpc({"code": -32050, "message": "odd"})
    assert type(err) is A2AError and err.message == "odd"
    assert err.metadata["code"] == "-32050"


def test_jsonrpc_reason_wins_when_code_is_custom() -> None:
    """A peer's custom code with a known ErrorInfo reason still gives the typed error."""
    info = {"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": ERROR_DOMAIN}
    err = error_from_jsonrpc({"code": -32099, "message": "gone", "data": [info]})
    assert isinstance(err, TaskNotFoundError)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, {}, AuthenticationError),
        (403, {"error": {"message": "no"}}, PermissionDeniedError),
        (500, None, InternalError),
        (
            400,
            {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "x"}},
            InvalidRequestError,
        ),
        (404, {"error": {"code": 404, "status": "NOT_FOUND"}}, MethodNotFoundError),
    ],
)
def test_rest_without_error_info(status: int, body: Any, expected: type[A2AError]) -> None:
    """A REST error body without ErrorInfo (a proxy, a foreign server) falls back on the HTTP
    status; never a crash, always a message."""
    err = error_from_rest(body, status)
    assert type(err) is expected
    assert err.message


def test_rest_bad_request_without_error_info_is_invalid_params() -> None:
    """Spec §11.6: a 400 whose details hold only a BadRequest is a validation error."""
    body = {
        "error": {
            "code": 400,
            "status": "INVALID_ARGUMENT",
            "message": "Invalid parameters",
            "details": [
                {
                    "@type": BAD_REQUEST_TYPE,
                    "fieldViolations": [{"field": "id", "description": "?"}],
                }
            ],
        }
    }
    err = error_from_rest(body, 400)
    assert isinstance(err, InvalidParamsError)
    assert err.field_violations == [{"field": "id", "description": "?"}]


def test_error_message_defaults_and_repr() -> None:
    """A bare error has its standard message; repr names the class."""
    err = TaskNotFoundError(task_id="abc")
    assert err.message == "Task not found" and str(err) == "Task not found"
    assert err.metadata == {"taskId": "abc"}
    assert repr(err) == "TaskNotFoundError('Task not found')"
