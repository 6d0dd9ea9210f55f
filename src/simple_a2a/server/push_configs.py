"""The push notification config operations of the request handler (spec §3.1.7-§3.1.10).

A base class of :class:`~.handler.RequestHandler`, kept in its own module: the one group of
operations that never touches an execution. It reads a task only to check that the caller may
see it, and keeps webhook configs in ``storage.push_configs``; SendMessage uses its checks too
(a config given with the message, spec §3.2.2 ``taskPushNotificationConfig``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol import errors as e
from ..protocol import requests as rq
from ..protocol.card import AgentCard
from ..protocol.models import TaskPushNotificationConfig, new_id
from ..storage.base import Storage, StoredTask
from .context import CallContext
from .limits import Limits, check_caller_config_count, check_config_count, config_page

if TYPE_CHECKING:
    from .push import PushService


class PushConfigOperations:
    """CreateTaskPushNotificationConfig, Get, List and Delete; the handler provides the rest."""

    card: AgentCard
    storage: Storage
    limits: Limits
    #: push delivery (docs/push.md); None without the capability
    push: PushService | None

    if TYPE_CHECKING:  # RequestHandler's: TaskNotFound unless the caller may see the task

        async def _visible_task(self, task_id: str, call: CallContext) -> StoredTask: ...

    async def create_task_push_notification_config(
        self, request: TaskPushNotificationConfig, call: CallContext
    ) -> TaskPushNotificationConfig:
        self._require_push()
        if not request.task_id:
            raise e.InvalidParamsError("taskId is required", field="taskId")
        await self._visible_task(request.task_id, call)
        return await self._store_push_config(
            await self._checked_push_config(request), request.task_id, call
        )

    async def _checked_push_config(
        self, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        """A webhook config, validated once (URL scheme, SSRF guard) before anything is stored."""
        if not config.url.startswith(("http://", "https://")):
            raise e.InvalidParamsError("url must be an http(s) URL", field="url")
        if self.push is not None:
            await self.push.validate_config(config)
        return config

    async def _store_push_config(
        self, config: TaskPushNotificationConfig, task_id: str, call: CallContext
    ) -> TaskPushNotificationConfig:
        config = config.model_copy(update={"task_id": task_id, "id": config.id or new_id()})
        if call.version.startswith("0."):  # 0.3 §9.5: its notifications are 0.3 Tasks
            config = config.with_protocol_version(call.version)
        existing = await self.storage.push_configs.list(task_id)
        check_config_count(self.limits, existing, config)
        replacing = any(c.id == config.id for c in existing)
        store = self.storage.push_configs
        await check_caller_config_count(self.limits, store, call.owner, replacing)
        await store.put(config)
        if self.push is not None:
            await self.push.config_created(config)
        return config

    async def get_task_push_notification_config(
        self, request: rq.GetTaskPushNotificationConfigRequest, call: CallContext
    ) -> TaskPushNotificationConfig:
        self._require_push()
        await self._visible_task(request.task_id, call)
        config = await self.storage.push_configs.get(request.task_id, request.id)
        if config is None:
            raise e.TaskNotFoundError(
                f"push notification config {request.id!r} not found for task {request.task_id}",
                task_id=request.task_id,
            )
        return config

    async def list_task_push_notification_configs(
        self, request: rq.ListTaskPushNotificationConfigsRequest, call: CallContext
    ) -> rq.ListTaskPushNotificationConfigsResponse:
        self._require_push()
        await self._visible_task(request.task_id, call)
        configs = await self.storage.push_configs.list(request.task_id)
        return config_page(self.limits, configs, request)

    async def delete_task_push_notification_config(
        self, request: rq.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> rq.Empty:
        self._require_push()
        await self._visible_task(request.task_id, call)
        await self.storage.push_configs.delete(request.task_id, request.id)  # idempotent
        if self.push is not None:
            await self.push.config_deleted(request.task_id, request.id)
        return rq.Empty()

    def _require_push(self) -> None:
        if not self.card.capabilities.push_notifications:
            raise e.PushNotificationNotSupportedError()
