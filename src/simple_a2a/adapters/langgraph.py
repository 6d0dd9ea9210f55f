"""LangGraph graphs served over A2A, and A2A agents as LangChain tools.

See docs/adapters/langgraph.md.

Needs the ``langgraph`` extra (``langgraph`` and ``langchain-core``)::

    from langgraph.prebuilt import create_react_agent
    from simple_a2a.adapters.langgraph import ask_human, executor

    graph = create_react_agent(model, tools=[ask_human])
    simple_a2a.server(card, executor(graph)).run(port=8000)

What maps to what: the graph is any compiled graph whose state has a ``messages`` list (the
prebuilt ReAct agent, or a ``StateGraph(MessagesState)`` of your own). The A2A message is a
``HumanMessage`` put into ``messages``; the chat model's streamed chunks (``stream_mode=
"messages"``) are the answer's chunks; the last ``AIMessage`` is the artifact. The ``thread_id``
is the ``contextId``. A graph compiled without a checkpointer gets its thread's latest checkpoint
from the server's storage for each run and leaves the new one there (so a conversation survives
restarts and moves between replicas); a graph compiled with one of its own (``PostgresSaver``,
...) keeps its threads there. An ``interrupt()`` in a node or tool (as :func:`ask_human` calls)
ends the turn ``input-required`` with the interrupt's question; the next message on the task
resumes the graph with ``Command(resume=text)``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, StructuredTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt, interrupt

from ..protocol.logcontext import library_logger
from ..protocol.models import Message
from ..server.context import RequestContext
from ..server.executor import AgentExecutor
from ._common import (
    RemoteAgent,
    RunCancelled,
    TextStream,
    failure_message,
    load_json,
    remote_agent,
    run_until_cancelled,
    save_json,
)

log = library_logger("simple_a2a.adapters")

#: The conversation state's key (``ctx.save_state``).
STATE_KEY = "langgraph"


@tool
def ask_human(question: str) -> str:
    """Ask the user a question and wait for the answer."""
    # Served over A2A the task ends input-required with the question; the next message on the
    # task is what interrupt() returns when the graph resumes.
    return str(interrupt({"question": question}))


def _question(pending: Interrupt) -> str:
    value = pending.value
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("question"), str):
        return str(value["question"])
    return json.dumps(value, default=str)


def _user_content(message: Message) -> str | list[str | dict[str, Any]]:
    """An A2A message as a ``HumanMessage``'s content (spec §4.1.6 parts as LangChain's
    standard content blocks): text and data as text, images and other files as ``image`` /
    ``file`` blocks, bytes inline (base64), URLs as such. Text only is a plain string."""
    if all(part.text is not None for part in message.parts):
        return message.text
    content: list[str | dict[str, Any]] = []
    for part in message.parts:
        if part.text is not None:
            content.append({"type": "text", "text": part.text})
        elif part.raw is not None or part.url is not None:
            media_type = part.media_type or "application/octet-stream"
            block: dict[str, Any] = {
                "type": "image" if media_type.startswith("image/") else "file",
                "mime_type": media_type,
            }
            if part.raw is not None:
                block["base64"] = base64.b64encode(part.raw).decode()
            else:
                block["url"] = str(part.url)
            if part.filename:
                block["extras"] = {"filename": part.filename}
            content.append(block)
        else:
            content.append({"type": "text", "text": json.dumps(part.data, default=str)})
    return content


class _Checkpoints:
    """A thread's latest checkpoints (one per namespace: the graph's and its subgraphs'),
    with their pending writes, as JSON for ``ctx.save_state``: the saver's own serializer
    (``serde.dumps_typed``) makes the bytes. Only the latest is kept: the conversation
    resumes, but LangGraph's time travel to older checkpoints needs a checkpointer of the
    graph's own."""

    def __init__(self, saver: InMemorySaver) -> None:
        self.saver = saver

    def _dump(self, value: Any) -> list[str]:
        kind, data = self.saver.serde.dumps_typed(value)
        return [kind, base64.b64encode(data).decode()]

    def _load(self, typed: list[str]) -> Any:
        return self.saver.serde.loads_typed((typed[0], base64.b64decode(typed[1])))

    async def dump(self, thread: str) -> list[dict[str, Any]]:
        latest: dict[str, dict[str, Any]] = {}
        async for saved in self.saver.alist({"configurable": {"thread_id": thread}}):
            namespace = saved.config["configurable"].get("checkpoint_ns", "")
            if namespace in latest:  # alist gives the newest of each namespace first
                continue
            latest[namespace] = {
                "ns": namespace,
                "checkpoint": self._dump(saved.checkpoint),
                "metadata": self._dump(saved.metadata),
                "writes": [
                    [task_id, channel, self._dump(value)]
                    for task_id, channel, value in saved.pending_writes or []
                ],
            }
        return list(latest.values())

    async def load(self, thread: str, entries: list[dict[str, Any]]) -> None:
        for entry in entries:
            checkpoint = self._load(entry["checkpoint"])
            config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": entry["ns"]}}
            saved = await self.saver.aput(
                config, checkpoint, self._load(entry["metadata"]), checkpoint["channel_versions"]
            )
            by_task: dict[str, list[tuple[str, Any]]] = {}
            for task_id, channel, value in entry["writes"]:
                by_task.setdefault(task_id, []).append((channel, self._load(value)))
            for task_id, writes in by_task.items():
                await self.saver.aput_writes(saved, writes, task_id)


def _input(ctx: RequestContext, state: dict[str, Any]) -> Any:
    """The run's input: the message added to ``messages``, or — when it answers the task's
    pending interrupts — ``Command(resume=...)``. Several interrupts waiting at once (parallel
    nodes or tools each asking) all get the one answer: LangGraph wants them named then."""
    if state.get("pending_task") != ctx.task_id:
        return {"messages": [HumanMessage(content=_user_content(ctx.message))]}
    waiting = state.get("interrupts") or []
    if len(waiting) > 1:
        return Command(resume=dict.fromkeys(waiting, ctx.text))
    return Command(resume=ctx.text)


class LangGraphExecutor(AgentExecutor):
    """A compiled LangGraph graph as an A2A executor (module docstring). ``config`` is merged
    into every run's config (``configurable`` values, callbacks, ``recursion_limit``);
    ``state_key`` names the conversation state in the server's storage."""

    def __init__(
        self,
        graph: Pregel[Any, Any, Any, Any],
        *,
        config: dict[str, Any] | None = None,
        state_key: str = STATE_KEY,
    ) -> None:
        self.graph = graph
        self.config = config or {}
        self.state_key = state_key
        # The graph's own checkpointer, if it was compiled with one (not True/False/None).
        own = graph.checkpointer
        self._own_saver = own if isinstance(own, BaseCheckpointSaver) else None

    async def execute(self, ctx: RequestContext) -> None:
        state = await load_json(ctx, self.state_key) or {}
        thread = ctx.context_id
        saver = self._own_saver
        checkpoints = None
        if saver is None:
            checkpoints = _Checkpoints(InMemorySaver())
            await checkpoints.load(thread, state.get("checkpoints") or [])
            saver = checkpoints.saver
        graph = self.graph.copy(update={"checkpointer": saver})
        configurable = {**self.config.get("configurable", {}), "thread_id": thread}
        config: Any = {**self.config, "configurable": configurable}
        graph_input = _input(ctx, state)
        stream = TextStream(ctx)

        async def run() -> None:
            async for chunk, _meta in graph.astream(graph_input, config, stream_mode="messages"):
                if isinstance(chunk, AIMessage):
                    await stream.write(chunk.text)

        try:
            await run_until_cancelled(ctx, run())
            snapshot = await graph.aget_state(config)
        except RunCancelled:
            return None
        except Exception as exc:
            log.exception("LangGraph run failed for task %s", ctx.task_id)
            await ctx.fail(failure_message(exc))
            return None
        asked = [_question(pending) for pending in snapshot.interrupts]
        saved = {
            "checkpoints": await checkpoints.dump(thread) if checkpoints is not None else None,
            "pending_task": ctx.task_id if asked else None,
            "interrupts": [pending.id for pending in snapshot.interrupts],
        }
        await save_json(ctx, self.state_key, saved)
        if asked:
            await ctx.require_input("\n".join(asked))
            return None
        messages = snapshot.values.get("messages") if isinstance(snapshot.values, dict) else None
        last = messages[-1] if messages else None
        await stream.close(last.text if isinstance(last, AIMessage) else None)
        return None


def executor(
    graph: Pregel[Any, Any, Any, Any],
    *,
    config: dict[str, Any] | None = None,
    state_key: str = STATE_KEY,
) -> LangGraphExecutor:
    """Serve ``graph`` over A2A: ``simple_a2a.server(card, executor(graph))``."""
    return LangGraphExecutor(graph, config=config, state_key=state_key)


async def remote_agent_tool(
    target: str | RemoteAgent,
    *,
    name: str | None = None,
    headers: dict[str, str] | None = None,
) -> BaseTool:
    """A remote A2A agent (its URL, or a :class:`RemoteAgent`) as a LangChain tool for any
    graph or agent: named and described by its card, one argument ``message``, the agent's
    answer as the result. A failure of the remote agent is the tool's result too (the model
    reads it and carries on)."""
    remote = await remote_agent(target, headers=headers)

    async def call_remote_agent(message: str) -> str:
        return await remote.ask_or_error(message)

    return StructuredTool.from_function(
        coroutine=call_remote_agent,
        name=name or remote.name,
        description=remote.description,
    )


__all__ = [
    "STATE_KEY",
    "LangGraphExecutor",
    "ask_human",
    "executor",
    "remote_agent_tool",
]
