"""simple-a2a's agent for the A2A integration test kit (github.com/a2aproject/a2a-itk).

The kit starts it as ``uv run main.py --httpPort H --grpcPort G`` (cwd ``itk/``), waits for
``GET /.well-known/agent-card.json``, then sends it ``itk.Instruction`` messages: answer with
a text, run steps, or call another agent over a given transport (README.md here; the contract
is summed up in docs/interop.md). Stopped with SIGTERM.

Served on 127.0.0.1: JSON-RPC at ``/jsonrpc`` (and ``/jsonrpc/``), HTTP+JSON under ``/rest``
(1.0 routes, 0.3 under ``/rest/v1/...``), both A2A 1.0 and 0.3 at the same URLs; gRPC
(``lf.a2a.v1.A2AService``, A2A 1.0, and ``a2a.v1.A2AService``, A2A 0.3) on the gRPC port.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import instruction as itk

from simple_a2a import AgentExecutor, AsyncClient, RequestContext, server
from simple_a2a.protocol import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    Message,
    Part,
    Task,
    TaskNotCancelableError,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from simple_a2a.server.push import PushSettings

log = logging.getLogger("itk.agent")

INSTRUCTION_MEDIA_TYPE = "application/x-protobuf"
INSTRUCTION_FILENAME = "instruction.bin"
HELD_MARKER = "task-finished"
HOLD_INTERVAL = 2.0  # seconds between the held task's status updates
HOLD_LIMIT = 10.0  # a held task nobody cancels completes after this long (as python v1.0 / TS)
CALL_TIMEOUT = 120.0  # an outbound call waits for the whole rest of the chain
PUSH_TOKEN = "itk-token"
# a blocking send answers once its webhooks took the final event: the kit reads them right after
PUSH_WAIT = 10.0
BINDINGS = {
    "jsonrpc": "JSONRPC",
    "http_json": "HTTP+JSON",
    "http+json": "HTTP+JSON",
    "rest": "HTTP+JSON",
    "grpc": "GRPC",
}


def agent_card(http_port: int, grpc_port: int) -> AgentCard:
    """The hybrid card: 1.0 ``supportedInterfaces`` (each binding in 1.0, then 0.3) plus the
    0.3 fields the server derives from the 0.3 entries (``url``, ``preferredTransport``,
    ``additionalInterfaces``). The gRPC URL is bare ``host:port``: Python peers hand it to
    ``grpc.aio.insecure_channel``, which refuses a scheme. One gRPC port serves both versions
    (the service name is the version: ``lf.a2a.v1`` 1.0, ``a2a.v1`` 0.3)."""
    base = f"http://127.0.0.1:{http_port}"
    urls = (
        (f"{base}/jsonrpc/", "JSONRPC"),
        (f"{base}/rest/", "HTTP+JSON"),
        (f"127.0.0.1:{grpc_port}", "GRPC"),
    )
    interfaces = [
        AgentInterface(url=url, protocol_binding=binding, protocol_version=version)
        for url, binding in urls
        for version in ("1.0", "0.3")
    ]
    return AgentCard(
        name="simple-a2a ITK agent",
        description="Follows the A2A integration test kit's instructions (simple-a2a).",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
        supported_interfaces=interfaces,
    )


# -- the instruction inside a message ------------------------------------------------------------


def _parse(data: bytes) -> itk.Instruction | None:
    try:
        parsed = itk.decode(data)
    except itk.DecodeError:
        return None
    return parsed if parsed.has_step else None


def _unbase64(data: bytes | str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def extract_instruction(message: Message) -> itk.Instruction | None:
    """The part carrying the instruction (by media type or file name), parsed as is, else as
    base64 (python v0.3 over REST/gRPC encodes the bytes twice); else any text part as base64."""
    for part in message.parts:
        if part.is_raw and (
            part.media_type == INSTRUCTION_MEDIA_TYPE or part.filename == INSTRUCTION_FILENAME
        ):
            raw = part.decoded_bytes()
            found = _parse(raw)
            if found is None and (decoded := _unbase64(raw)) is not None:
                found = _parse(decoded)
            if found is not None:
                return found
    for part in message.parts:
        decoded = _unbase64(part.text.strip()) if part.text is not None else None
        if decoded is not None and (found := _parse(decoded)) is not None:
            return found
    return None


# -- running an instruction ------------------------------------------------------------------------


async def run(instruction: itk.Instruction) -> list[str]:
    """The texts an instruction produces: steps concatenate (CONCAT is the only generator)."""
    if instruction.return_response is not None:
        return [instruction.return_response.response]
    if instruction.steps is not None:
        results: list[str] = []
        for step in instruction.steps:
            results += await run(step)
        return results
    assert instruction.call_agent is not None
    return await call_agent(instruction.call_agent)


def _texts(message: Message | None) -> list[str]:
    if message is None:
        return []
    return [part.text for part in message.parts if part.text is not None]


def _event_texts(event: Any) -> list[str]:
    """Texts of a stream event: a Message, or the status message of a Task or status update."""
    if isinstance(event, Message):
        return _texts(event)
    if isinstance(event, Task | TaskStatusUpdateEvent):
        return _texts(event.status.message)
    return []


def _push_config(call: itk.CallAgent) -> TaskPushNotificationConfig | None:
    if call.behavior != "push_notification":
        return None
    url = call.push_url if "://" in call.push_url else f"http://{call.push_url}"
    return TaskPushNotificationConfig(url=url.rstrip("/") + "/notifications", token=PUSH_TOKEN)


async def call_agent(call: itk.CallAgent) -> list[str]:
    """Send ``call.instruction`` to the agent at ``call.agent_card_uri`` over ``call.transport``;
    the client reads the card and speaks 1.0 where offered, else 0.3."""
    binding = BINDINGS.get(call.transport.strip().lower())
    if binding is None:
        raise ValueError(f"unknown transport {call.transport!r}")
    message = Message.user(
        Part.from_raw(
            call.instruction, media_type=INSTRUCTION_MEDIA_TYPE, filename=INSTRUCTION_FILENAME
        )
    )
    log.info("calling %s over %s (%s)", call.agent_card_uri, binding, call.behavior or "send")
    async with AsyncClient(call.agent_card_uri, bindings=[binding], timeout=CALL_TIMEOUT) as client:
        if call.behavior == "resubscribe":
            return await _resubscribe(client, message)
        push = _push_config(call)
        if call.streaming:
            texts: list[str] = []
            async for event in client.stream(message, push_config=push):
                texts += _event_texts(event)
            return texts
        result = await client.send(message, push_config=push)
        return _texts(result) if isinstance(result, Message) else _texts(result.status.message)


async def _resubscribe(client: AsyncClient, message: Message) -> list[str]:
    """Stream the send until a task id shows, drop the stream (the task goes on), subscribe,
    read until the held task's marker, then cancel it."""
    task_id = None
    stream = client.stream(message)
    async for event in stream:
        task_id = getattr(event, "task_id", None) or (event.id if isinstance(event, Task) else None)
        if task_id:
            break
    await _aclose(stream)
    if not task_id:
        raise RuntimeError("the stream ended without a task id")
    texts: list[str] = []
    subscription = client.subscribe(task_id)
    try:
        async for event in subscription:
            found = list(_history_texts(event)) + _event_texts(event)
            done = False
            for text in found:
                texts.append(text.replace("\n" + HELD_MARKER, "").replace(HELD_MARKER, ""))
                if HELD_MARKER in text:
                    done = True
                    break
            if done:
                break
    finally:
        await _aclose(subscription)
    with contextlib.suppress(TaskNotCancelableError):
        await client.cancel(task_id)
    return texts


def _history_texts(event: Any) -> Iterable[str]:
    if isinstance(event, Task):
        for message in event.history:
            if message.role.name.endswith("AGENT"):
                yield from _texts(message)


async def _aclose(stream: AsyncIterator[Any]) -> None:
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()


class ItkExecutor(AgentExecutor):
    """One task per request; async and reentrant (a chain can come back to this agent while
    one of its tasks awaits the call that leads there)."""

    async def execute(self, ctx: RequestContext) -> None:
        found = extract_instruction(ctx.message)
        if found is None:
            await ctx.fail("No valid instruction found in request")
            return
        await ctx.start()  # WORKING, no message (the Task snapshot, SUBMITTED, comes first)
        try:
            text = "\n".join(await run(found))
        except Exception as exc:  # the chain broke further down: this task fails, with why
            log.warning("instruction failed: %r", exc)
            await ctx.fail(f"instruction failed: {type(exc).__name__}: {exc}")
            return
        if not found.holds():
            await ctx.complete(message=text)
            return
        held = f"{text}\n{HELD_MARKER}"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + HOLD_LIMIT
        while not ctx.is_cancelled:
            await ctx.emit_status(held)
            if loop.time() >= deadline:
                await ctx.complete(message=held)
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ctx.cancelled.wait(), HOLD_INTERVAL)


def _configure_logging() -> None:
    level = os.environ.get("ITK_LOG_LEVEL", "INFO").upper()
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if level == "DEBUG":  # the kit collects logs/agent_current.log
        logs = Path(__file__).resolve().parent / "logs"
        logs.mkdir(exist_ok=True)
        handlers.append(logging.FileHandler(logs / "agent_current.log"))
    logging.basicConfig(
        level=getattr(logging, level, logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
    )


async def main(http_port: int, grpc_port: int) -> None:
    agent = server(
        agent_card(http_port, grpc_port),
        ItkExecutor(),
        jsonrpc_path="/jsonrpc",
        rest_prefix="/rest",
        # the runner's and the peers' webhooks listen on loopback
        push=PushSettings(
            allow_hosts=["127.0.0.1", "localhost"], signing=None, await_delivery=PUSH_WAIT
        ),
        shutdown_grace=2.0,
    )
    grpc_server = await agent.grpc_server(grpc_port, "127.0.0.1")  # first: the kit never probes it
    log.info("gRPC on 127.0.0.1:%d, HTTP on 127.0.0.1:%d", grpc_port, http_port)
    try:
        await agent.serve("127.0.0.1", http_port)  # returns on SIGTERM / SIGINT
    finally:
        await grpc_server.stop(1.0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--httpPort", type=int, required=True)
    parser.add_argument("--grpcPort", type=int, required=True)
    args = parser.parse_args()
    _configure_logging()
    asyncio.run(main(args.httpPort, args.grpcPort))
