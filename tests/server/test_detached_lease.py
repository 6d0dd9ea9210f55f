"""The leases' event hook (``after_final``, server/leases.py): a detached task, whose runner
returned and kept its lease, gives the lease back when its background work ends it."""

from __future__ import annotations

import asyncio
from typing import Any

from simple_a2a.protocol.models import Message
from simple_a2a.protocol.requests import SendMessageConfiguration, SendMessageRequest
from simple_a2a.server import AgentExecutor, RequestContext, server
from simple_a2a.server.context import CallContext
from tests.support.agents import make_card


class _Detaching(AgentExecutor):
    """Starts its task and leaves it running (``ctx.detach()``): the test ends it."""

    def __init__(self) -> None:
        self.handles: list[Any] = []

    async def execute(self, ctx: RequestContext) -> None:
        await ctx.start()
        self.handles.append(ctx.detach())


async def test_a_detached_task_gives_its_lease_back_when_it_ends() -> None:
    agent = _Detaching()
    srv = server(make_card(), agent)
    await srv.startup()
    try:
        handler = srv.handler
        leases = handler.leases
        assert leases is not None
        request = SendMessageRequest(
            message=Message.user("go"),
            configuration=SendMessageConfiguration(return_immediately=True),
        )
        answer = await handler.handle("SendMessage", request, CallContext())
        task_id = answer.task.id
        for _ in range(100):
            if agent.handles and task_id not in handler._executions:
                break
            await asyncio.sleep(0.01)
        assert agent.handles and task_id not in handler._executions
        assert leases.holds(task_id)  # detached: the runner returned and kept it
        await agent.handles[0].complete()
        assert not leases.holds(task_id)  # released by the final hook
    finally:
        await srv.shutdown()
