"""The typed error of an HTTP+JSON error answer (spec §11.6), from every body peers send: the
1.0 ``google.rpc.Status``, the 0.3 SDKs' flat bodies, and bare statuses."""

from __future__ import annotations

from typing import Any

from simple_a2a.protocol.errors import (
    ALL_ERRORS,
    A2AError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    error_from_jsonrpc,
    error_from_rest,
)

ERRORS_BY_NAME = {cls.__name__: cls for cls in ALL_ERRORS}

#: Operations whose path names a task: a 404 without a typed body there means the task is
#: unknown (spec §5.4, §11.6), not that the route is (which a bare 404 means elsewhere).
TASK_PATH_OPERATIONS = frozenset(
    {
        "GetTask",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    }
)

#: The statuses the 0.3 Python SDK's REST app answers with a bare ``{"message"}`` body
#: (its ``A2AErrorToHttpStatus``), read when no typed body says more.
FLAT_BODY_STATUSES: dict[int, type[A2AError]] = {
    409: TaskNotCancelableError,
    415: ContentTypeNotSupportedError,
    422: InvalidParamsError,
    501: UnsupportedOperationError,
    502: InvalidAgentResponseError,
}


def rest_error(operation: str, body: Any, status: int) -> A2AError:
    """The typed error of an HTTP+JSON error answer.

    Besides the 1.0 ``google.rpc.Status`` body, reads the 0.3 SDKs' flat bodies
    (``{"code": <JSON-RPC code>, "message"}`` or ``{"type": "TaskNotFoundError", ...}``), and a
    bare 404 on a task path as :class:`TaskNotFoundError`.
    """
    if isinstance(body, dict) and not isinstance(body.get("error"), dict):
        code, name = body.get("code"), body.get("type")
        if isinstance(code, int) and code < 0:
            return error_from_jsonrpc({"code": code, "message": body.get("message") or ""})
        if isinstance(name, str) and (cls := ERRORS_BY_NAME.get(name)) is not None:
            return cls(str(body.get("message") or name))
        if (cls := FLAT_BODY_STATUSES.get(status)) is not None:
            return cls(str(body.get("message") or f"HTTP {status}"))
    err = error_from_rest(body, status)
    if status == 404 and operation in TASK_PATH_OPERATIONS and type(err) is not TaskNotFoundError:
        has_reason = isinstance(body, dict) and isinstance(body.get("error"), dict)
        if not (has_reason and body["error"].get("details")):
            return TaskNotFoundError(err.message)
    return err
