"""A2A 0.3 over gRPC (``a2a.v1.A2AService``) ⇄ 1.0 ProtoJSON, as dicts. No I/O, no protobuf.

0.3's gRPC binding (0.3 specification.md §3.2.2) carries the messages of the 0.3 ``a2a.proto``.
Through protobuf's JSON mapping they are the 0.3 ProtoJSON that 0.3 HTTP+JSON carries, so the
payloads convert with :mod:`simple_a2a.protocol.rest_v03`; what gRPC adds are the resource
names of its requests (``name: "tasks/{id}"``, ``"tasks/{id}/pushNotificationConfigs/{cid}"``,
``parent: "tasks/{id}"``) where REST has path segments, and its own rpc names
(:data:`RPCS`). The server uses :func:`request_up` and :func:`result_down`, a client speaking
0.3 over gRPC :func:`request_down` and :func:`result_up`.

Errors: 0.3 names no gRPC status codes ("as defined in the proto annotations", and the proto
has none), so the codes are 1.0's (spec §10.6, §5.4). The message is ``"<ErrorClass>: <text>"``,
the form the official SDKs' 0.3 gRPC servers send and their 0.3 clients type errors by
(:func:`error_message`, :func:`split_error_message`).
"""

from __future__ import annotations

import re
from typing import Any

from . import rest_v03, v03
from .errors import ALL_ERRORS, A2AError, InvalidParamsError, UnsupportedOperationError

SERVICE = "a2a.v1.A2AService"

#: 1.0 operation → its rpc in the 0.3 ``A2AService`` (ListTasks has none in 0.3).
RPCS: dict[str, str] = {
    "SendMessage": "SendMessage",
    "SendStreamingMessage": "SendStreamingMessage",
    "GetTask": "GetTask",
    "CancelTask": "CancelTask",
    "SubscribeToTask": "TaskSubscription",
    "CreateTaskPushNotificationConfig": "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig": "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs": "ListTaskPushNotificationConfig",
    "GetExtendedAgentCard": "GetAgentCard",
    "DeleteTaskPushNotificationConfig": "DeleteTaskPushNotificationConfig",
}

_TASK = re.compile(r"^tasks/([^/]+)(?:/pushNotificationConfigs)?/?$")
_CONFIG = re.compile(r"^tasks/([^/]+)/pushNotificationConfigs/([^/]+)$")
_ERRORS_BY_NAME = {cls.__name__: cls for cls in ALL_ERRORS}
_NAMED = re.compile(r"^([A-Za-z]+Error): ?(.*)$", re.DOTALL)


def rpc_of(operation: str) -> str:
    """The 0.3 rpc of a 1.0 operation, or :class:`UnsupportedOperationError`."""
    rpc = RPCS.get(operation)
    if rpc is None:
        raise UnsupportedOperationError(f"{operation} has no rpc in A2A 0.3's gRPC service")
    return rpc


def _task_id(name: Any, field: str) -> str:
    match = _TASK.match(name) if isinstance(name, str) else None
    if match is None:
        raise InvalidParamsError(f"{field} must be 'tasks/{{id}}', got {name!r}", field=field)
    return match[1]


def _config_ids(name: Any) -> dict[str, str]:
    match = _CONFIG.match(name) if isinstance(name, str) else None
    if match is None:
        raise InvalidParamsError(
            f"name must be 'tasks/{{id}}/pushNotificationConfigs/{{configId}}', got {name!r}",
            field="name",
        )
    return {"taskId": match[1], "id": match[2]}


def _page(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in ("pageSize", "pageToken") if data.get(k)}


# -- the server's directions: 0.3 request → 1.0, 1.0 result → 0.3 --


def request_up(operation: str, data: dict[str, Any]) -> dict[str, Any]:
    """The ProtoJSON of a 0.3 request → the 1.0 request dict."""
    if operation in ("GetTask", "CancelTask", "SubscribeToTask"):
        out: dict[str, Any] = {"id": _task_id(data.get("name"), "name")}
        if operation == "GetTask" and data.get("historyLength"):  # 0 is "unset" in proto3
            out["historyLength"] = data["historyLength"]
        return out
    if operation in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        return _config_ids(data.get("name"))
    if operation == "ListTaskPushNotificationConfigs":
        return {"taskId": _task_id(data.get("parent"), "parent"), **_page(data)}
    if operation == "CreateTaskPushNotificationConfig":
        out = rest_v03.request_up(operation, data)
        config = data.get("config")
        named = _CONFIG.match(str(config.get("name") or "")) if isinstance(config, dict) else None
        if data.get("parent"):
            out["taskId"] = _task_id(data["parent"], "parent")
        elif named:
            out["taskId"] = named[1]
        else:
            _task_id(None, "parent")
        return out
    if operation == "GetExtendedAgentCard":
        return {}
    return rest_v03.request_up(operation, data)


def _security_down(requirements: Any) -> Any:
    """0.3 JSON ``[{name: scopes}]`` → the 0.3 proto's ``[{"schemes": {name: {"list"}}}]``."""
    if not isinstance(requirements, list):
        return requirements
    return [
        {"schemes": {n: {"list": s} for n, s in r.items()}} if isinstance(r, dict) else r
        for r in requirements
    ]


def _security_up(requirements: Any) -> Any:
    """The 0.3 proto's ``[{"schemes": {name: {"list"}}}]`` → 0.3 JSON ``[{name: scopes}]``."""
    if not isinstance(requirements, list):
        return requirements
    out = []
    for r in requirements:
        schemes = r.get("schemes") if isinstance(r, dict) else None
        if isinstance(schemes, dict):
            r = {n: (s or {}).get("list") or [] for n, s in schemes.items()}
        out.append(r)
    return out


def card_down(card: dict[str, Any]) -> dict[str, Any]:
    """A 1.0 card → the 0.3 proto's AgentCard (the combined card; 1.0-only members are unknown
    fields to a 0.3 parser, and the security requirements take the proto's form)."""
    if card.get("supportedInterfaces"):
        out = v03.card_to_v03(card)
    else:  # an extended card served over gRPC, where no request says the HTTP URLs
        out = v03.card_to_v03({**card, "supportedInterfaces": [{"url": ""}]})
        for name in ("supportedInterfaces", "url", "preferredTransport", "additionalInterfaces"):
            out.pop(name)
    if "security" in out:
        out["security"] = _security_down(out["security"])
    for skill in out.get("skills") or []:
        if isinstance(skill, dict) and "security" in skill:
            skill["security"] = _security_down(skill["security"])
    return out


def result_down(operation: str, result: dict[str, Any]) -> dict[str, Any]:
    """A 1.0 result (or stream event) → the ProtoJSON of the 0.3 response message."""
    if operation == "GetExtendedAgentCard":
        return card_down(result)
    down = rest_v03.result_down(operation, result)
    return down if isinstance(down, dict) else {}


# -- the client's directions: 1.0 request → 0.3, 0.3 result → 1.0 --


def request_down(operation: str, request: dict[str, Any] | None) -> dict[str, Any]:
    """A 1.0 request → the ProtoJSON of the 0.3 request message."""
    request = request or {}
    rpc_of(operation)
    task_id = str(request.get("id", ""))
    if operation in ("GetTask", "CancelTask", "SubscribeToTask"):
        out: dict[str, Any] = {"name": f"tasks/{task_id}"}
        if operation == "GetTask" and request.get("historyLength") is not None:
            out["historyLength"] = request["historyLength"]
        return out
    if operation in ("GetTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig"):
        return {"name": f"tasks/{request.get('taskId', '')}/pushNotificationConfigs/{task_id}"}
    if operation == "ListTaskPushNotificationConfigs":
        return {"parent": f"tasks/{request.get('taskId', '')}", **_page(request)}
    if operation == "GetExtendedAgentCard":
        return {}
    return rest_v03.request_down(operation, request)


def result_up(operation: str, result: Any) -> Any:
    """The ProtoJSON of a 0.3 response (or stream message) → the 1.0 result."""
    if operation == "GetExtendedAgentCard" and isinstance(result, dict):
        result = dict(result)
        if "security" in result:
            result["security"] = _security_up(result["security"])
        result["skills"] = [
            {**s, "security": _security_up(s["security"])}
            if isinstance(s, dict) and "security" in s
            else s
            for s in result.get("skills") or []
        ]
    return rest_v03.result_up(operation, result)


# -- errors --


def error_message(err: A2AError) -> str:
    """The status message of an error on the 0.3 service: ``"TaskNotFoundError: <text>"``."""
    return f"{type(err).__name__}: {err.message}"


def split_error_message(message: str) -> tuple[type[A2AError], str] | None:
    """``"TaskNotFoundError: <text>"`` → (the error class, the text); ``None`` if not so."""
    match = _NAMED.match(message or "")
    cls = _ERRORS_BY_NAME.get(match[1]) if match else None
    if match is None or cls is None:
        return None
    return cls, match[2]
