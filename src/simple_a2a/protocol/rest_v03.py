"""A2A 0.3's HTTP+JSON wire shapes ⇄ 1.0 ProtoJSON, for the ``/v1/...`` routes. No I/O.

0.3's REST binding (0.3 specification.md §3.2.3, §3.5.3) carried the ProtoJSON of the 0.3
``a2a.proto``, which is what the 0.3-era SDKs put on the wire: a message's parts are ``content``,
file parts are ``{"file": {"fileWithUri" | "fileWithBytes", "mimeType", "name"}}``, data parts
``{"data": {"data": {...}}}``, ``TASK_STATE_CANCELLED`` is spelled with two Ls, a
``TaskPushNotificationConfig`` is ``{"name": "tasks/{id}/pushNotificationConfigs/{cid}",
"pushNotificationConfig": {...}}`` and a send is ``{"request" | "message": ..., "configuration"}``.

Input is read liberally: both the camelCase and the proto (snake_case) names, and a body in the
0.3 JSON-RPC shapes (``parts`` and ``kind``) is converted by :mod:`simple_a2a.protocol.v03`.
Output is the 0.3 ProtoJSON (camelCase).

The server uses :func:`request_up` and :func:`result_down`; a client speaking 0.3 over HTTP+JSON
uses the other two directions, :func:`request_down` and :func:`result_up` (0.3 REST servers
reject the 0.3 JSON-RPC shapes, issue 15 item 3).
"""

from __future__ import annotations

import re
from typing import Any

from . import v03

_STATE_DOWN = {"TASK_STATE_CANCELED": "TASK_STATE_CANCELLED"}
_STATE_UP = {v: k for k, v in _STATE_DOWN.items()}
_FINAL = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_AUTH_REQUIRED",
}
_ROLE_UP = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _g(obj: Any, name: str) -> Any:
    """A field by its camelCase or proto name."""
    if not isinstance(obj, dict):
        return None
    value = obj.get(name)
    return obj.get(_snake(name)) if value is None else value


def _copy(src: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {n: v for n in names if (v := _g(src, n)) is not None}


# -- up: 0.3 REST → 1.0 --


def _part_up(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    out = _copy(part, ("metadata",))
    if "text" in part:
        out["text"] = part["text"]
    elif isinstance(part.get("file"), dict):
        file = part["file"]
        uri, raw = _g(file, "fileWithUri"), _g(file, "fileWithBytes")
        if uri is not None:
            out["url"] = uri
        if raw is not None:
            out["raw"] = raw
        out |= {
            k: v
            for k, v in (("mediaType", _g(file, "mimeType")), ("filename", file.get("name")))
            if v
        }
    elif "data" in part:
        data = part["data"]
        out["data"] = data["data"] if isinstance(data, dict) and "data" in data else data
    return out


def _message_up(msg: Any) -> Any:
    if not isinstance(msg, dict):
        return msg
    out = _copy(msg, ("messageId", "contextId", "taskId", "metadata", "extensions"))
    out |= _copy(msg, ("referenceTaskIds",))
    role = msg.get("role")
    out["role"] = _ROLE_UP.get(role, role) if isinstance(role, str) else role
    parts = _g(msg, "content")
    if parts is None:
        parts = msg.get("parts") or []
    out["parts"] = [_part_up(p) for p in parts] if isinstance(parts, list) else parts
    return out


def _push_up(config: Any, task_id: Any = None) -> Any:
    if not isinstance(config, dict):
        return config
    out = _copy(config, ("id", "url", "token"))
    if task_id:
        out["taskId"] = task_id
    auth = _g(config, "authentication")
    if isinstance(auth, dict):
        schemes = auth.get("schemes") or []
        scheme = schemes[0] if isinstance(schemes, list) and schemes else auth.get("scheme")
        out["authentication"] = {"scheme": scheme or "", **_copy(auth, ("credentials",))}
    return out


def _is_jsonrpc_shape(body: dict[str, Any]) -> bool:
    msg = body.get("message")
    return isinstance(msg, dict) and ("kind" in msg or "parts" in msg)


def request_up(operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """A 0.3 REST request body → the 1.0 request fields it sets (path fields come separately)."""
    if operation in ("SendMessage", "SendStreamingMessage"):
        if _is_jsonrpc_shape(body):
            return v03.request_from_v03(operation, body)
        out = _copy(body, ("metadata",))
        message = body.get("request", body.get("message"))
        if message is not None:
            out["message"] = _message_up(message)
        config = _g(body, "configuration")
        if isinstance(config, dict):
            conf = _copy(config, ("acceptedOutputModes", "historyLength"))
            push = _g(config, "pushNotification") or _g(config, "pushNotificationConfig")
            if push is not None:
                conf["taskPushNotificationConfig"] = _push_up(push)
            out["configuration"] = conf
        # proto3: an absent ``blocking`` is false, so the 0.3 ProtoJSON form blocks only when
        # it says so (the 0.3 SDKs send ``blocking: true`` explicitly).
        blocking = _g(config, "blocking") if isinstance(config, dict) else None
        out.setdefault("configuration", {})["returnImmediately"] = blocking is not True
        return out
    if operation == "CreateTaskPushNotificationConfig":
        config = _g(body, "config") or body
        push = _g(config, "pushNotificationConfig")
        out = _push_up(push if isinstance(push, dict) else config, _g(config, "taskId"))
        config_id = _g(body, "configId")
        if config_id and not out.get("id"):
            out["id"] = config_id
        return dict(out)
    return _copy(body, ("metadata",))


# -- down: 1.0 → 0.3 REST --


def _part_down(part: dict[str, Any]) -> dict[str, Any]:
    out = _copy(part, ("metadata",))
    if "text" in part:
        out["text"] = part["text"]
    elif "url" in part or "raw" in part:
        file = {"fileWithUri": part["url"]} if "url" in part else {"fileWithBytes": part["raw"]}
        file |= {
            k: v
            for k, v in (("mimeType", part.get("mediaType")), ("name", part.get("filename")))
            if v
        }
        out["file"] = file
    elif "data" in part:
        data = part["data"]
        out["data"] = {"data": data if isinstance(data, dict) else {"value": data}}
    return out


def _message_down(msg: dict[str, Any]) -> dict[str, Any]:
    out = _copy(msg, ("messageId", "contextId", "taskId", "role", "metadata", "extensions"))
    out["content"] = [_part_down(p) for p in msg.get("parts", [])]
    return out


def _status_down(status: dict[str, Any]) -> dict[str, Any]:
    out = _copy(status, ("timestamp",))
    state = status.get("state", "TASK_STATE_UNSPECIFIED")
    out["state"] = _STATE_DOWN.get(state, state)
    if isinstance(status.get("message"), dict):
        out["message"] = _message_down(status["message"])
    return out


def _artifact_down(artifact: dict[str, Any]) -> dict[str, Any]:
    out = _copy(artifact, ("artifactId", "name", "description", "metadata", "extensions"))
    out["parts"] = [_part_down(p) for p in artifact.get("parts", [])]
    return out


def _task_down(task: dict[str, Any]) -> dict[str, Any]:
    out = _copy(task, ("id", "contextId", "metadata"))
    out["status"] = _status_down(task.get("status", {}))
    if task.get("artifacts"):
        out["artifacts"] = [_artifact_down(a) for a in task["artifacts"]]
    if task.get("history"):
        out["history"] = [_message_down(m) for m in task["history"]]
    return out


def _event_down(event: dict[str, Any]) -> dict[str, Any]:
    if "task" in event:
        return {"task": _task_down(event["task"])}
    if "message" in event:
        return {"message": _message_down(event["message"])}
    if "statusUpdate" in event:
        update = event["statusUpdate"]
        status = update.get("status", {})
        return {
            "statusUpdate": {
                **_copy(update, ("taskId", "contextId", "metadata")),
                "status": _status_down(status),
                "final": status.get("state") in _FINAL,
            }
        }
    update = event["artifactUpdate"]
    return {
        "artifactUpdate": {
            **_copy(update, ("taskId", "contextId", "append", "lastChunk", "metadata")),
            "artifact": _artifact_down(update.get("artifact", {})),
        }
    }


def push_config_down(config: dict[str, Any]) -> dict[str, Any]:
    """A 1.0 TaskPushNotificationConfig → the 0.3 proto's ``{"name", "pushNotificationConfig"}``."""
    inner = _copy(config, ("id", "url", "token"))
    auth = config.get("authentication")
    if isinstance(auth, dict):
        inner["authentication"] = {
            "schemes": [auth["scheme"]] if auth.get("scheme") else [],
            **_copy(auth, ("credentials",)),
        }
    name = f"tasks/{config.get('taskId', '')}/pushNotificationConfigs/{config.get('id', '')}"
    return {"name": name, "pushNotificationConfig": inner}


def result_down(operation: str, result: dict[str, Any]) -> Any:
    """A 1.0 result (or stream event) → its 0.3 REST body."""
    if operation in ("SendMessage", "SendStreamingMessage", "SubscribeToTask"):
        return _event_down(result)
    if operation in ("GetTask", "CancelTask"):
        return _task_down(result)
    if operation == "ListTasks":
        return {**result, "tasks": [_task_down(t) for t in result.get("tasks", [])]}
    if operation in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return push_config_down(result)
    if operation == "ListTaskPushNotificationConfigs":
        return {**result, "configs": [push_config_down(c) for c in result.get("configs", [])]}
    if operation == "GetExtendedAgentCard":
        return v03.card_to_v03(result)
    return result


# -- the client's directions: 1.0 request → 0.3 REST body, 0.3 REST answer → 1.0 --


def request_down(operation: str, request: dict[str, Any] | None) -> dict[str, Any]:
    """A 1.0 request → the 0.3 REST body (or query fields); path fields are left in place
    for the route and dropped from the body by the caller."""
    request = request or {}
    if operation in ("SendMessage", "SendStreamingMessage"):
        out = _copy(request, ("metadata",))
        if isinstance(request.get("message"), dict):
            out["message"] = _message_down(request["message"])
        config = request.get("configuration") or {}
        conf = _copy(config, ("acceptedOutputModes", "historyLength"))
        push = config.get("taskPushNotificationConfig")
        if isinstance(push, dict):
            conf["pushNotification"] = push_config_down(push)["pushNotificationConfig"]
        # proto3 reads an absent ``blocking`` as false: say it (1.0's default is blocking).
        conf["blocking"] = not config.get("returnImmediately", False)
        out["configuration"] = conf
        return out
    if operation == "CreateTaskPushNotificationConfig":
        # The proto says ``body: "config"``, but the 0.3 SDKs send and parse the whole
        # CreateTaskPushNotificationConfigRequest (and a strict parse rejects a bare config).
        task_id = request.get("taskId", "")
        out = {"parent": f"tasks/{task_id}", "config": push_config_down(request)}
        return out | ({"configId": request["id"]} if request.get("id") else {})
    return request


def _task_id_of(name: Any) -> Any:
    """``tasks/{id}/pushNotificationConfigs/{cid}`` → ``{id}``."""
    parts = name.split("/") if isinstance(name, str) else []
    return parts[1] if len(parts) >= 2 and parts[0] == "tasks" else None


def _status_up(status: Any) -> Any:
    if not isinstance(status, dict):
        return status
    out = _copy(status, ("timestamp",))
    state = status.get("state")
    out["state"] = state_up(state) if isinstance(state, str) else "TASK_STATE_UNSPECIFIED"
    message = _g(status, "message") or _g(status, "update")  # 0.3 proto: ``update``
    if isinstance(message, dict):
        out["message"] = _message_up(message)
    return out


def _artifact_up(artifact: Any) -> Any:
    if not isinstance(artifact, dict):
        return artifact
    out = _copy(artifact, ("artifactId", "name", "description", "metadata", "extensions"))
    out["parts"] = [_part_up(p) for p in artifact.get("parts") or []]
    return out


def _task_up(task: Any) -> Any:
    if not isinstance(task, dict):
        return task
    out = _copy(task, ("id", "contextId", "metadata"))
    out["status"] = _status_up(task.get("status") or {})
    if task.get("artifacts"):
        out["artifacts"] = [_artifact_up(a) for a in task["artifacts"]]
    if task.get("history"):
        out["history"] = [_message_up(m) for m in task["history"]]
    return out


def _event_up(event: Any) -> Any:
    if not isinstance(event, dict):
        return event
    if "task" in event:
        return {"task": _task_up(event["task"])}
    if "message" in event or "msg" in event:
        return {"message": _message_up(event.get("message", event.get("msg")))}
    update = _g(event, "statusUpdate")
    if isinstance(update, dict):
        up = _copy(update, ("taskId", "contextId", "metadata"))
        return {"statusUpdate": {**up, "status": _status_up(update.get("status") or {})}}
    update = _g(event, "artifactUpdate")
    if isinstance(update, dict):
        up = _copy(update, ("taskId", "contextId", "append", "lastChunk", "metadata"))
        return {"artifactUpdate": {**up, "artifact": _artifact_up(update.get("artifact") or {})}}
    if "id" in event and "status" in event:  # a bare Task (some 0.3 servers answer a send so)
        return {"task": _task_up(event)}
    return event


def _push_config_up(config: Any) -> Any:
    if not isinstance(config, dict):
        return config
    inner = _g(config, "pushNotificationConfig")
    if not isinstance(inner, dict):
        return _push_up(config, _g(config, "taskId"))
    return _push_up(inner, _g(config, "taskId") or _task_id_of(config.get("name")))


def result_up(operation: str, result: Any) -> Any:
    """A 0.3 REST answer (or stream event) → its 1.0 result."""
    if operation in ("SendMessage", "SendStreamingMessage", "SubscribeToTask"):
        return _event_up(result)
    if operation in ("GetTask", "CancelTask"):
        return _task_up(result)
    if operation in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        return _push_config_up(result)
    if operation == "ListTaskPushNotificationConfigs":
        configs = result if isinstance(result, list) else _g(result, "configs") or []
        out: dict[str, Any] = {"configs": [_push_config_up(c) for c in configs]}
        token = _g(result, "nextPageToken")
        return out | ({"nextPageToken": token} if token else {})
    if operation == "GetExtendedAgentCard" and isinstance(result, dict):
        return v03.card_from_v03(result)
    return result


def error_extras(error_name: str, message: str, code: int) -> dict[str, Any]:
    """What 0.3 clients read from a REST error body, beside the ``google.rpc.Status`` ``error``
    member: ``type`` (the error's class name, the Python SDKs), ``message``, and ``code``, the
    JSON-RPC code (the JS SDK's 0.3 client types its errors by it; issue 15 item 6)."""
    return {"type": error_name, "message": message, "code": code}


def state_up(state: str) -> str:
    """A 0.3 proto state name → the 1.0 name."""
    return _STATE_UP.get(state, state)
