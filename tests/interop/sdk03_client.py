"""The official Python SDK 0.3.26's client driving an agent, run as a process from
``.venv-sdk03`` (``scripts/peers``): ``python sdk03_client.py BASE_URL TRANSPORT HOOK_URL``.
Not imported by the test suite.

Runs every operation the SDK's 0.3 client has against the agent's card (the agent's echo/steps/
slow/reply commands, tests/support/agents.py) and prints one JSON object: step → what came
back, or ``"error: <class name> <code>"`` when the step raised (over gRPC the SDK's client lets
grpc's ``AioRpcError`` through: ``"error: AioRpcError <status> <error named by the message>"``).

With ``SCENARIO=rate_limit`` in the environment it runs :func:`rate_limited` instead.

Over gRPC it also calls, through the SDK's own generated stub and protobuf messages
(``a2a.grpc``), the rpcs its ``Client`` has no method for: list and delete push configs, and
``GetAgentCard``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    GetTaskPushNotificationConfigParams,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TextPart,
)

import grpc


def message(text: str, **ids: Any) -> Message:
    return Message(
        role=Role.user, parts=[Part(root=TextPart(text=text))], message_id=uuid.uuid4().hex, **ids
    )


async def last_task(client: Any, msg: Message) -> Task:
    result: Any = None
    async for event in client.send_message(msg):
        result = event
    return result[0] if isinstance(result, tuple) else result


async def step(results: dict[str, Any], name: str, coro: Any) -> Any:
    try:
        value = await coro
    except Exception as exc:  # the step's outcome is what the test checks
        error = getattr(exc, "error", None)
        code = getattr(error, "code", None) or getattr(exc, "status_code", None)
        if isinstance(exc, grpc.aio.AioRpcError):  # the SDK's gRPC transport lets them through
            code = f"{exc.code().name} {(exc.details() or '').partition(':')[0]}"
        results[name] = f"error: {type(exc).__name__} {code}"
        return None
    return value


def sdk_client(http: httpx.AsyncClient, card: Any, transport: str, **options: Any) -> Any:
    config = ClientConfig(
        httpx_client=http,
        supported_transports=[transport],
        grpc_channel_factory=grpc.aio.insecure_channel,  # for "GRPC"
        **options,
    )
    return ClientFactory(config).create(card)


async def rate_limited(base: str, transport: str) -> dict[str, Any]:
    """``SCENARIO=rate_limit``: against an agent allowing one running task per caller, a second
    message while the first runs is refused (our RateLimitError); then the first is canceled."""
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        polling = sdk_client(http, card, transport, polling=True, streaming=False)
        held = await step(out, "held", last_task(polling, message("slow")))
        if held is not None:
            out["held"] = held.status.state.value
        refused = await step(out, "refused", last_task(polling, message("slow")))
        if refused is not None:
            out["refused"] = refused.status.state.value
        if held is not None:
            canceled = await step(out, "cancel", polling.cancel_task(TaskIdParams(id=held.id)))
            if canceled is not None:
                out["cancel"] = canceled.status.state.value
    return out


async def main(base: str, transport: str, hook: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(timeout=10) as http:
        card = await A2ACardResolver(http, base).get_agent_card()

        def client(**options: Any) -> Any:
            return sdk_client(http, card, transport, **options)

        unary = client(streaming=False)
        streaming = client(streaming=True)
        polling = client(polling=True, streaming=False)
        task = await step(out, "send", last_task(unary, message("echo hi")))
        if task is not None:
            out["send"] = [task.status.state.value, task.artifacts[0].parts[0].root.text]
            got = await step(out, "get", unary.get_task(TaskQueryParams(id=task.id)))
            if got is not None:
                out["get"] = [got.id == task.id, got.status.state.value]
            follow = message("echo again", context_id=task.context_id)
            again = await step(out, "multi_turn", last_task(unary, follow))
            if again is not None:
                out["multi_turn"] = again.context_id == task.context_id
        reply = await step(out, "reply", last_task(unary, message("reply there")))
        if reply is not None:
            out["reply"] = reply.parts[0].root.text
        events: list[Any] = []

        async def stream() -> None:
            async for event in streaming.send_message(message("steps 3")):
                events.append(event)

        await step(out, "stream", stream())
        out.setdefault("stream", [e[0].status.state.value for e in events[-1:]])
        await step(out, "get_missing", unary.get_task(TaskQueryParams(id="missing")))
        out.setdefault("get_missing", "no error")
        # cancel and subscribe (the SDK calls it resubscribe)
        slow = await step(out, "slow", last_task(polling, message("slow")))
        if slow is not None:
            seen: list[Any] = []

            async def follow_up() -> None:
                async for event in streaming.resubscribe(TaskIdParams(id=slow.id)):
                    seen.append(event)

            follower = asyncio.create_task(follow_up())
            watch = TaskPushNotificationConfig(
                task_id=slow.id,
                push_notification_config=PushNotificationConfig(id="w", url=hook, token="tok"),
            )
            watched = await step(out, "push_running", unary.set_task_callback(watch))
            if watched is not None:
                out["push_running"] = slow.id
            await asyncio.sleep(0.3)
            canceled = await step(out, "cancel", unary.cancel_task(TaskIdParams(id=slow.id)))
            if canceled is not None:
                out["cancel"] = canceled.status.state.value
            await step(out, "subscribe", asyncio.wait_for(follower, 5))
            out.setdefault("subscribe", [e[0].status.state.value for e in seen[-1:]])
            await step(out, "cancel_again", unary.cancel_task(TaskIdParams(id=slow.id)))
            out.setdefault("cancel_again", "no error")
        if task is not None:
            config = TaskPushNotificationConfig(
                task_id=task.id,
                push_notification_config=PushNotificationConfig(id="c1", url=hook, token="tok"),
            )
            created = await step(out, "set_push", unary.set_task_callback(config))
            if created is not None:
                out["set_push"] = created.push_notification_config.id
            params = GetTaskPushNotificationConfigParams(
                id=task.id, push_notification_config_id="c1"
            )
            got_push = await step(out, "get_push", unary.get_task_callback(params))
            if got_push is not None:
                out["get_push"] = got_push.push_notification_config.url
            if transport == "GRPC":
                await grpc_stub_operations(out, card, unary, task.id, hook)
    return out


async def grpc_stub_operations(
    out: dict[str, Any], card: Any, unary: Any, task_id: str, hook: str
) -> None:
    """A second push config read back by its id, then what the SDK's ``Client`` lacks, through
    its generated stub: list and delete push configs, ``GetAgentCard``."""
    from a2a.grpc import a2a_pb2, a2a_pb2_grpc

    second = TaskPushNotificationConfig(
        task_id=task_id, push_notification_config=PushNotificationConfig(id="c2", url=hook)
    )
    await step(out, "set_push_2", unary.set_task_callback(second))
    params = GetTaskPushNotificationConfigParams(id=task_id, push_notification_config_id="c2")
    got = await step(out, "get_push_2", unary.get_task_callback(params))
    if got is not None:
        out["get_push_2"] = got.push_notification_config.id
    url = next(i.url for i in card.additional_interfaces or [] if i.transport == "GRPC")
    async with grpc.aio.insecure_channel(url) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        listing = a2a_pb2.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task_id}")
        listed = await step(out, "list_push", stub.ListTaskPushNotificationConfig(listing))
        if listed is not None:
            out["list_push"] = sorted(c.push_notification_config.id for c in listed.configs)
        name = f"tasks/{task_id}/pushNotificationConfigs/c1"
        delete = a2a_pb2.DeleteTaskPushNotificationConfigRequest(name=name)
        deleted = await step(out, "delete_push", stub.DeleteTaskPushNotificationConfig(delete))
        if deleted is not None:
            out["delete_push"] = "deleted"
        listed = await step(out, "list_push_after", stub.ListTaskPushNotificationConfig(listing))
        if listed is not None:
            out["list_push_after"] = [c.push_notification_config.id for c in listed.configs]
        answer = await step(out, "card", stub.GetAgentCard(a2a_pb2.GetAgentCardRequest()))
        if answer is not None:
            out["card"] = answer.name


if __name__ == "__main__":
    if os.environ.get("SCENARIO") == "rate_limit":
        print(json.dumps(asyncio.run(rate_limited(sys.argv[1], sys.argv[2]))))
    else:
        print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))))
