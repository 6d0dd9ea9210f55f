"""A2A 0.3 ⇄ 1.0 wire conversions: pure functions on JSON dicts, no I/O.

A server answers a 0.3 client by converting the 0.3 params up (:func:`request_from_v03`), running
the 1.0 handler, and converting the 1.0 result down (:func:`result_to_v03`); a client talking to
a 0.3-only agent does the reverse (:func:`request_to_v03`, :func:`result_from_v03`). Operations
are named by their 1.0 name (``"SendMessage"``...); an unknown name raises :class:`KeyError`,
malformed input raises :class:`~simple_a2a.protocol.errors.InvalidParamsError` naming the field.

The mapping and its lossy points are listed in ``docs/compat-v03.md``; the checklist is
``spec/v1.0/whats-new-v1.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._card import V03_PROTOCOL_VERSION, card_from_v03, card_to_v03
from ._core import (
    MESSAGE,
    PUSH_CONFIG,
    SEND_RESULT,
    STATE,
    STREAM_RESULT,
    TASK,
    TASK_PUSH_CONFIG,
    Conv,
    HistoryLengthConv,
    ListConv,
    NotConv,
    ObjectConv,
    TaskPushConfigConv,
    as_object,
    fail,
    require_str,
)

__all__ = [
    "V03_PROTOCOL_VERSION",
    "card_from_v03",
    "card_to_v03",
    "error_to_v03",
    "request_from_v03",
    "request_to_v03",
    "result_from_v03",
    "result_to_v03",
]

HISTORY = HistoryLengthConv()

#: 0.3 MessageSendConfiguration ⇄ 1.0 SendMessageConfiguration.
#:
#: ``blocking`` ⇄ ``returnImmediately = not blocking``. An *absent* ``blocking`` stays absent,
#: which 1.0 reads as blocking (v1.0 specification.md §3.2.2, "Operations are blocking by
#: default"). The 0.3 text states no default (0.3 a2a.json MessageSendConfiguration.blocking;
#: 0.3 specification.md §7.1 presents message/send as the synchronous call), and the 0.3 SDKs
#: block unless ``blocking`` is explicitly false, so blocking-by-default is the faithful choice.
SEND_CONFIG = ObjectConv(
    None,
    {"historyLength": HISTORY, "pushNotificationConfig": PUSH_CONFIG, "blocking": NotConv()},
    rename={
        "pushNotificationConfig": "taskPushNotificationConfig",
        "blocking": "returnImmediately",
    },
)
#: 0.3 MessageSendParams ⇄ 1.0 SendMessageRequest (``tenant`` has no 0.3 form).
SEND_PARAMS = ObjectConv(None, {"message": MESSAGE, "configuration": SEND_CONFIG})


class _CreatePushConfigConv(TaskPushConfigConv):
    """tasks/pushNotificationConfig/set. A 0.3 config without an ``id`` gets the task id as its
    id, so a later 0.3 ``get`` without ``pushNotificationConfigId`` (0.3 §7.6.1: optional) finds
    it — the 0.3 SDKs' convention."""

    def up(self, value: Any, path: str) -> Any:
        out: dict[str, Any] = super().up(value, path)
        if not out.get("id") and out.get("taskId"):
            out["id"] = out["taskId"]
        return out


class _PushConfigRefConv(Conv):
    """0.3 ``{id: <task id>, pushNotificationConfigId}`` ⇄ 1.0 ``{taskId, id}`` (whats-new-v1.md,
    ID Format Simplification). A missing config id means the task's default config (above)."""

    def up(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        task_id = require_str(obj, "id", path)
        return {"taskId": task_id, "id": obj.get("pushNotificationConfigId") or task_id}

    def down(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        return {
            "id": require_str(obj, "taskId", path),
            "pushNotificationConfigId": require_str(obj, "id", path),
        }


class _ListTasksResultConv(ObjectConv):
    """tasks/list is not a 0.3 JSON-RPC method (0.3 §7 "tasks/list": REST returns ``[Task]``);
    we answer the 1.0 ListTasksResponse with 0.3 tasks, and read either form."""

    def __init__(self) -> None:
        super().__init__(None, {"tasks": ListConv(TASK)})

    def up(self, value: Any, path: str) -> Any:
        if isinstance(value, list):
            value = {"tasks": value}
        return super().up(value, path)


class _PushConfigListConv(Conv):
    """0.3 returns a bare array; 1.0 ``{configs, nextPageToken}`` (pagination is lost)."""

    _items = ListConv(TASK_PUSH_CONFIG)

    def up(self, value: Any, path: str) -> Any:
        return {"configs": self._items.up(value, path)}

    def down(self, value: Any, path: str) -> Any:
        configs = as_object(value, path).get("configs") or []
        return self._items.down(configs, path + ".configs" if path else "configs")


class _EmptyConv(Conv):
    """0.3 ``null`` ⇄ 1.0 ``google.protobuf.Empty`` (``{}``)."""

    def up(self, value: Any, path: str) -> Any:
        if value not in (None, {}):
            fail(path, "expected null")
        return {}

    def down(self, value: Any, path: str) -> Any:
        return None


class _CardConv(Conv):
    def up(self, value: Any, path: str) -> Any:
        return card_from_v03(value)

    def down(self, value: Any, path: str) -> Any:
        return card_to_v03(value)


@dataclass(frozen=True)
class _Op:
    params: Conv
    result: Conv
    params_optional: bool = False  #: 0.3 params may be absent (``null``)


#: params that differ only by 0.3 ``metadata`` (TaskIdParams) and 1.0 ``tenant``
_PLAIN = ObjectConv(None, drop_up=("metadata",))
_PUSH_REF = _PushConfigRefConv()

OPS: dict[str, _Op] = {
    "SendMessage": _Op(SEND_PARAMS, SEND_RESULT),
    "SendStreamingMessage": _Op(SEND_PARAMS, STREAM_RESULT),
    # 0.3 TaskQueryParams.metadata has no 1.0 field (lossy)
    "GetTask": _Op(ObjectConv(None, {"historyLength": HISTORY}, drop_up=("metadata",)), TASK),
    "ListTasks": _Op(
        ObjectConv(None, {"status": STATE}), _ListTasksResultConv(), params_optional=True
    ),
    "CancelTask": _Op(ObjectConv(None), TASK),  # TaskIdParams.metadata is kept by 1.0
    "SubscribeToTask": _Op(_PLAIN, STREAM_RESULT),
    "CreateTaskPushNotificationConfig": _Op(_CreatePushConfigConv(), TASK_PUSH_CONFIG),
    "GetTaskPushNotificationConfig": _Op(_PUSH_REF, TASK_PUSH_CONFIG),
    "ListTaskPushNotificationConfigs": _Op(
        ObjectConv(
            None,
            rename={"id": "taskId"},
            drop_up=("metadata",),
            drop_down=("tenant", "pageSize", "pageToken"),
        ),
        _PushConfigListConv(),
    ),
    "DeleteTaskPushNotificationConfig": _Op(_PUSH_REF, _EmptyConv()),
    "GetExtendedAgentCard": _Op(_PLAIN, _CardConv(), params_optional=True),
}


def request_from_v03(operation: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """0.3 JSON-RPC ``params`` -> the 1.0 request dict (ProtoJSON) of ``operation``."""
    op = OPS[operation]
    if params is None and op.params_optional:
        params = {}
    result: dict[str, Any] = op.params.up(params, "")
    return result


def request_to_v03(operation: str, request: dict[str, Any] | None) -> dict[str, Any]:
    """A 1.0 request dict -> the 0.3 JSON-RPC ``params`` (``tenant`` is dropped)."""
    op = OPS[operation]
    if request is None and op.params_optional:
        request = {}
    result: dict[str, Any] = op.params.down(request, "")
    return result


def result_to_v03(operation: str, result: dict[str, Any]) -> Any:
    """A 1.0 result dict -> the 0.3 result; for streaming operations one StreamResponse -> one
    0.3 event (with ``kind``, and ``final`` on status updates)."""
    return OPS[operation].result.down(result, "")


def result_from_v03(operation: str, result: Any) -> dict[str, Any]:
    """A 0.3 result -> the 1.0 result dict; for streaming operations one 0.3 event -> one
    StreamResponse dict."""
    out: dict[str, Any] = OPS[operation].result.up(result, "")
    return out


def error_to_v03(error: dict[str, Any]) -> dict[str, Any]:
    """A 1.0 JSON-RPC error object -> its 0.3 form.

    The codes are the same in both versions (0.3 §8; -32008..-32011 are new in 1.0 but lie in
    JSON-RPC's server-error range, which 0.3 clients accept). ``data`` stays: 0.3 types it as
    any value, and its ``google.rpc.ErrorInfo`` is the best detail a 0.3 client can get.
    """
    obj = as_object(error, "error")
    code = obj.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        fail("error.code", "an integer is required")
    out: dict[str, Any] = {"code": code, "message": str(obj.get("message") or "Error")}
    if obj.get("data") is not None:
        out["data"] = obj["data"]
    return out
