"""Request and response messages of the 11 operations (spec §3.2; ``a2a.proto``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ._base import A2AModel, Struct, Timestamp, repeated
from .models import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)


class SendMessageConfiguration(A2AModel):
    accepted_output_modes: list[str] = repeated()
    task_push_notification_config: TaskPushNotificationConfig | None = None
    history_length: int | None = None
    return_immediately: bool | None = None


class SendMessageRequest(A2AModel):
    tenant: str | None = None
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: Struct | None = None


class GetTaskRequest(A2AModel):
    tenant: str | None = None
    id: str = Field(min_length=1)
    history_length: int | None = None


class ListTasksRequest(A2AModel):
    tenant: str | None = None
    context_id: str | None = None
    status: TaskState | None = None
    page_size: int | None = None
    page_token: str | None = None
    history_length: int | None = None
    status_timestamp_after: Timestamp | None = None
    include_artifacts: bool | None = None


class ListTasksResponse(A2AModel):
    tasks: list[Task] = Field(default_factory=list)
    next_page_token: str = ""
    page_size: int = 0
    total_size: int = 0


class CancelTaskRequest(A2AModel):
    tenant: str | None = None
    id: str = Field(min_length=1)
    metadata: Struct | None = None


class GetTaskPushNotificationConfigRequest(A2AModel):
    tenant: str | None = None
    task_id: str = Field(min_length=1)
    id: str = Field(min_length=1)


class DeleteTaskPushNotificationConfigRequest(A2AModel):
    tenant: str | None = None
    task_id: str = Field(min_length=1)
    id: str = Field(min_length=1)


class SubscribeToTaskRequest(A2AModel):
    tenant: str | None = None
    id: str = Field(min_length=1)


class ListTaskPushNotificationConfigsRequest(A2AModel):
    tenant: str | None = None
    task_id: str = Field(min_length=1)
    page_size: int | None = None
    page_token: str | None = None


class ListTaskPushNotificationConfigsResponse(A2AModel):
    configs: list[TaskPushNotificationConfig] = repeated()
    next_page_token: str | None = None


class GetExtendedAgentCardRequest(A2AModel):
    tenant: str | None = None


class Empty(A2AModel):
    """``google.protobuf.Empty``: the result of DeleteTaskPushNotificationConfig."""


def _exactly_one(model: A2AModel, names: tuple[str, ...]) -> None:
    present = [n for n in names if model.__dict__.get(n) is not None]
    if len(present) != 1:
        fields = type(model).model_fields
        wire = [fields[n].alias or n for n in names]
        found = [fields[n].alias or n for n in present]
        raise ValueError(
            f"exactly one of {', '.join(wire)} must be set (found: {', '.join(found) or 'none'})"
        )


class SendMessageResponse(A2AModel):
    """Either the task or a direct message reply (spec §3.1.1)."""

    task: Task | None = None
    message: Message | None = None

    @model_validator(mode="after")
    def _oneof(self) -> SendMessageResponse:
        _exactly_one(self, ("task", "message"))
        return self

    @property
    def payload(self) -> Task | Message:
        return self.task if self.task is not None else self.message  # type: ignore[return-value]


StreamEvent = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent


class StreamResponse(A2AModel):
    """One event of a stream or a push notification (spec §3.2.3, §4.3.3)."""

    task: Task | None = None
    message: Message | None = None
    status_update: TaskStatusUpdateEvent | None = None
    artifact_update: TaskArtifactUpdateEvent | None = None

    @model_validator(mode="after")
    def _oneof(self) -> StreamResponse:
        _exactly_one(self, ("task", "message", "status_update", "artifact_update"))
        return self

    @property
    def payload(self) -> StreamEvent:
        # Every field is in the model's __dict__ (validated or ``trusted``), and a model is
        # always truthy: the first one set, without a loop of lookups (two events per task
        # change are applied through here, issue #36).
        d = self.__dict__
        event = d["task"] or d["message"] or d["status_update"] or d["artifact_update"]
        if event is None:
            raise ValueError("empty StreamResponse")
        return event  # type: ignore[no-any-return]

    @classmethod
    def of(cls, event: StreamEvent) -> StreamResponse:
        """Wrap a task, message, status update or artifact update."""
        return cls(**{_EVENT_FIELD[type(event)]: event})


_EVENT_FIELD: dict[type[Any], str] = {
    Task: "task",
    Message: "message",
    TaskStatusUpdateEvent: "status_update",
    TaskArtifactUpdateEvent: "artifact_update",
}
