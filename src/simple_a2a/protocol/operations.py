"""The 11 A2A operations as an introspectable table (spec §5.3; ``A2AService`` in a2a.proto).

The Python form of the Ruby seed's ``A2A::Protocol::Protobuf.operations``: bindings route by it,
clients call by it, and a test proves it matches the proto's ``service`` block.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import requests as rq
from ._base import A2AModel
from .card import AgentCard
from .models import Task, TaskPushNotificationConfig


@dataclass(frozen=True)
class Operation:
    name: str  #: the 1.0 name, also the 1.0 JSON-RPC method
    v03_method: str | None  #: the 0.3 JSON-RPC method
    legacy_methods: tuple[str, ...]  #: the Ruby seed's older names, served as aliases
    http_method: str  #: REST verb
    path: str  #: REST path template (spec §11.3); ``/{tenant}`` + path is the tenant variant
    v03_path: str | None  #: 0.3 REST path (``/v1/...``)
    request_type: type[A2AModel]
    response_type: type[A2AModel]
    streaming: bool = False
    #: the REST body is the request itself (``body: "*"``) rather than query parameters
    has_body: bool = False

    @property
    def jsonrpc_method(self) -> str:
        return self.name

    @property
    def tenant_path(self) -> str:
        return "/{tenant}" + self.path

    @property
    def all_methods(self) -> tuple[str, ...]:
        """Every JSON-RPC method name that reaches this operation."""
        v03 = (self.v03_method,) if self.v03_method else ()
        return (self.name, *v03, *self.legacy_methods)


#: The 11 operations in the order of the proto's ``service`` block, one
#: [Operation][simple_a2a.protocol.operations.Operation] each (JSON-RPC method, REST route, 0.3
#: names, request and response models).
OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "SendMessage",
        "message/send",
        ("tasks/send",),
        "POST",
        "/message:send",
        "/v1/message:send",
        rq.SendMessageRequest,
        rq.SendMessageResponse,
        has_body=True,
    ),
    Operation(
        "SendStreamingMessage",
        "message/stream",
        ("tasks/sendSubscribe",),
        "POST",
        "/message:stream",
        "/v1/message:stream",
        rq.SendMessageRequest,
        rq.StreamResponse,
        streaming=True,
        has_body=True,
    ),
    Operation(
        "GetTask",
        "tasks/get",
        (),
        "GET",
        "/tasks/{id}",
        "/v1/tasks/{id}",
        rq.GetTaskRequest,
        Task,
    ),
    Operation(
        "ListTasks",
        "tasks/list",
        (),
        "GET",
        "/tasks",
        "/v1/tasks",
        rq.ListTasksRequest,
        rq.ListTasksResponse,
    ),
    Operation(
        "CancelTask",
        "tasks/cancel",
        (),
        "POST",
        "/tasks/{id}:cancel",
        "/v1/tasks/{id}:cancel",
        rq.CancelTaskRequest,
        Task,
        has_body=True,
    ),
    Operation(
        "SubscribeToTask",
        "tasks/resubscribe",
        (),
        "GET",
        "/tasks/{id}:subscribe",
        "/v1/tasks/{id}:subscribe",
        rq.SubscribeToTaskRequest,
        rq.StreamResponse,
        streaming=True,
    ),
    Operation(
        "CreateTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/set",
        ("tasks/pushNotification/set",),
        "POST",
        "/tasks/{task_id}/pushNotificationConfigs",
        "/v1/tasks/{task_id}/pushNotificationConfigs",
        TaskPushNotificationConfig,
        TaskPushNotificationConfig,
        has_body=True,
    ),
    Operation(
        "GetTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/get",
        ("tasks/pushNotification/get",),
        "GET",
        "/tasks/{task_id}/pushNotificationConfigs/{id}",
        "/v1/tasks/{task_id}/pushNotificationConfigs/{id}",
        rq.GetTaskPushNotificationConfigRequest,
        TaskPushNotificationConfig,
    ),
    Operation(
        "ListTaskPushNotificationConfigs",
        "tasks/pushNotificationConfig/list",
        ("tasks/pushNotification/list",),
        "GET",
        "/tasks/{task_id}/pushNotificationConfigs",
        "/v1/tasks/{task_id}/pushNotificationConfigs",
        rq.ListTaskPushNotificationConfigsRequest,
        rq.ListTaskPushNotificationConfigsResponse,
    ),
    Operation(
        "GetExtendedAgentCard",
        "agent/getAuthenticatedExtendedCard",
        (),
        "GET",
        "/extendedAgentCard",
        "/v1/card",
        rq.GetExtendedAgentCardRequest,
        AgentCard,
    ),
    Operation(
        "DeleteTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/delete",
        ("tasks/pushNotification/delete",),
        "DELETE",
        "/tasks/{task_id}/pushNotificationConfigs/{id}",
        "/v1/tasks/{task_id}/pushNotificationConfigs/{id}",
        rq.DeleteTaskPushNotificationConfigRequest,
        rq.Empty,
    ),
)

OPERATIONS_BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}

#: Every JSON-RPC method name we serve, 1.0, 0.3 and legacy, to its operation.
OPERATIONS_BY_METHOD: dict[str, Operation] = {
    method: op for op in OPERATIONS for method in op.all_methods
}

#: JSON-RPC method names that exist only in 0.3 (or the Ruby seed's legacy names).
V03_METHODS: frozenset[str] = frozenset(
    m for op in OPERATIONS for m in op.all_methods if m != op.name
)


def operation(name_or_method: str) -> Operation:
    """Look up an operation by its 1.0 name or any JSON-RPC method name that reaches it."""
    op = OPERATIONS_BY_NAME.get(name_or_method) or OPERATIONS_BY_METHOD.get(name_or_method)
    if op is None:
        raise KeyError(name_or_method)
    return op
