"""The adapter conformance suite (issue #35): one set of tests every framework adapter passes.

A framework's test module subclasses :class:`AdapterConformance` and implements
:meth:`AdapterConformance.make_executor`: the framework's own agent, driven by the framework's
own test model (pydantic-ai's FunctionModel, a LangChain fake chat model, a scripted OpenAI
Agents ``Model``, an ADK ``BaseLlm``), wrapped by the adapter. The test model does what a
:class:`Script` says: it is handed a :class:`Turn` — the conversation *as the framework gave it
to the model* — and answers with a :class:`Step`. Because the script sees only what the framework
passed to its model, the multi-turn tests prove that the adapter gave the framework its history.

The agent must also have the framework's human-in-the-loop tool named ``ask_human`` with one
string argument ``question``: when the model calls it, the adapter ends the turn
``input-required`` with the question as the status message, and the user's next message (same
task id) is the tool's result, which the model then sees in ``Turn.tool_results``.

Every test talks to a real uvicorn server on loopback through our client (and one through the
official a2a-sdk 1.3.0 client), over JSON-RPC, streaming where the test says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import simple_a2a
from simple_a2a.client import AsyncClient
from simple_a2a.protocol import Task, TaskArtifactUpdateEvent, TaskState
from simple_a2a.server import AgentExecutor
from simple_a2a.storage.sqlite import SQLiteStorage
from tests.support import card
from tests.support.agents import serving

HUMAN_TOOL = "ask_human"


@dataclass(frozen=True)
class Turn:
    """What the model was given: every user message of the conversation so far, oldest first
    (the current one last), and the results of the tools it called, oldest first."""

    user_texts: list[str]
    tool_results: list[str]


@dataclass(frozen=True)
class Say:
    """Answer with these text deltas, streamed one by one (the answer is their concatenation)."""

    tokens: tuple[str, ...]


@dataclass(frozen=True)
class CallTool:
    """Call the tool ``name`` with ``args`` (in this suite: ``ask_human``)."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Fail:
    """Raise an exception from the model (a provider error)."""

    message: str


@dataclass(frozen=True)
class Hang:
    """Stream ``first``, then wait until the run is cancelled (``await script.hang()``)."""

    first: str


Step = Say | CallTool | Fail | Hang


class ModelFailure(RuntimeError):
    """The exception a test model raises for :class:`Fail`."""


@dataclass
class Script:
    """What the test model does, and what it saw. Test models call :meth:`step` once per model
    call, and for a :class:`Hang` await :meth:`hang` after streaming ``first``."""

    reply: Callable[[Turn], Step]
    turns: list[Turn] = field(default_factory=list)
    hanging: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)

    def step(self, turn: Turn) -> Step:
        self.turns.append(turn)
        return self.reply(turn)

    async def hang(self) -> None:
        self.hanging.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()  # the framework's run really stopped
            raise
        raise AssertionError("the run was not cancelled")


def say(*tokens: str) -> Callable[[Turn], Step]:
    return lambda turn: Say(tokens)


def _texts(task: Task) -> str:
    return "".join(part.text or "" for artifact in task.artifacts for part in artifact.parts)


class AdapterConformance:
    """Subclass it and implement :meth:`make_executor`."""

    def make_executor(self, script: Script) -> AgentExecutor:
        raise NotImplementedError

    # -- the harness --------------------------------------------------------------------------

    @contextlib.contextmanager
    def served(self, script: Script, storage: Any = None) -> Iterator[str]:
        options = {} if storage is None else {"storage": storage}
        app = simple_a2a.server(
            card("Adapter under test", streaming=True), self.make_executor(script), **options
        )
        with serving(app.app) as url:
            yield url

    # -- the scenarios ------------------------------------------------------------------------

    async def test_stream_sends_deltas_then_the_answer(self) -> None:
        script = Script(say("Hel", "lo", ", world"))
        with self.served(script) as url:
            async with AsyncClient(url) as client:
                events = [event async for event in client.stream("hi")]
                task = await client.get(events[0].id if isinstance(events[0], Task) else "")
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        deltas = [c.artifact.text for c in chunks if not c.last_chunk]
        assert "".join(deltas) == "Hello, world" and len(deltas) >= 2, deltas
        assert [bool(c.append) for c in chunks[: len(deltas)]] == [False] + [True] * (
            len(deltas) - 1
        )
        final = chunks[-1]
        assert final.last_chunk and not final.append and final.artifact.text == "Hello, world"
        assert len({c.artifact.artifact_id for c in chunks}) == 1  # one artifact, built up
        assert task.status.state is TaskState.COMPLETED
        assert [a.text for a in task.artifacts] == ["Hello, world"]  # one part, not one per token
        assert script.turns[0].user_texts == ["hi"]

    async def test_send_blocking_answers_with_the_artifact(self) -> None:
        with self.served(Script(say("four"))) as url:
            async with AsyncClient(url) as client:
                task = await client.send("2+2?")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert _texts(task) == "four"

    async def _two_turns(self, urls: Iterator[str], script: Script) -> Task:
        first_url = next(urls)
        async with AsyncClient(first_url) as client:
            first = await client.send("my name is Ada")
        assert isinstance(first, Task) and first.status.state is TaskState.COMPLETED
        second_url = next(urls)
        async with AsyncClient(second_url) as client:
            second = await client.send("what is my name?", context_id=first.context_id)
        assert isinstance(second, Task) and second.id != first.id
        assert second.context_id == first.context_id
        return second

    @staticmethod
    def _recall(turn: Turn) -> Step:
        return Say((f"turn {len(turn.user_texts)}: ", " | ".join(turn.user_texts)))

    async def test_multi_turn_gives_the_framework_its_history(self) -> None:
        script = Script(self._recall)
        with self.served(script) as url:
            second = await self._two_turns(iter([url, url]), script)
        assert _texts(second) == "turn 2: my name is Ada | what is my name?"
        assert script.turns[-1].user_texts == ["my name is Ada", "what is my name?"]

    async def test_conversation_survives_a_restart_on_sqlite(self, tmp_path: Path) -> None:
        script = Script(self._recall)
        path = tmp_path / "tasks.db"

        def urls() -> Iterator[str]:
            for _ in range(2):  # a new server process state each turn, one file
                with self.served(script, storage=SQLiteStorage(path)) as url:
                    yield url

        second = await self._two_turns(urls(), script)
        assert _texts(second) == "turn 2: my name is Ada | what is my name?"

    async def test_conversations_are_apart(self) -> None:
        script = Script(self._recall)
        with self.served(script) as url:
            async with AsyncClient(url) as client:
                await client.send("one")
                other = await client.send("two")  # no context id: a new conversation
        assert isinstance(other, Task) and _texts(other) == "turn 1: two"

    @staticmethod
    def _ask_then_answer(turn: Turn) -> Step:
        if not turn.tool_results:
            return CallTool(HUMAN_TOOL, {"question": "Which color?"})
        return Say(("You chose ", turn.tool_results[-1]))

    async def test_a_human_tool_is_input_required_and_the_answer_its_result(self) -> None:
        script = Script(self._ask_then_answer)
        with self.served(script) as url:
            async with AsyncClient(url) as client:
                asked = await client.send("paint it")
                assert isinstance(asked, Task)
                assert asked.status.state is TaskState.INPUT_REQUIRED, asked.status
                assert asked.status.message is not None
                assert "Which color?" in asked.status.message.text
                done = await client.send("blue", task_id=asked.id, context_id=asked.context_id)
        assert isinstance(done, Task) and done.id == asked.id
        assert done.status.state is TaskState.COMPLETED, done.status
        assert _texts(done) == "You chose blue"
        assert script.turns[-1].tool_results == ["blue"]

    async def test_input_required_survives_a_restart_on_sqlite(self, tmp_path: Path) -> None:
        script = Script(self._ask_then_answer)
        path = tmp_path / "tasks.db"
        with self.served(script, storage=SQLiteStorage(path)) as url:
            async with AsyncClient(url) as client:
                asked = await client.send("paint it")
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        with self.served(script, storage=SQLiteStorage(path)) as url:
            async with AsyncClient(url) as client:
                done = await client.send("green", task_id=asked.id, context_id=asked.context_id)
        assert isinstance(done, Task) and _texts(done) == "You chose green"

    async def test_cancel_stops_the_framework_run(self) -> None:
        script = Script(lambda turn: Hang("thinking"))
        with self.served(script) as url:
            async with AsyncClient(url) as client:
                stream = client.stream("take your time")
                task_id = ""
                async for event in stream:
                    if isinstance(event, Task):
                        task_id = event.id
                    if isinstance(event, TaskArtifactUpdateEvent):
                        break  # the first delta arrived: the run is under way
                await stream.aclose()
                assert await asyncio.to_thread(script.hanging.wait, 10)
                canceled = await client.cancel(task_id)
                assert canceled.status.state is TaskState.CANCELED
                assert await asyncio.to_thread(script.cancelled.wait, 10)
                assert (await client.get(task_id)).status.state is TaskState.CANCELED

    async def test_a_model_error_fails_the_task_with_a_safe_message(self) -> None:
        script = Script(lambda turn: Fail("provider said: key sk-secret is invalid"))
        with self.served(script) as url:
            async with AsyncClient(url) as client:
                task = await client.send("hi")
        assert isinstance(task, Task) and task.status.state is TaskState.FAILED
        said = task.status.message.text if task.status.message else ""
        assert said and "sk-secret" not in said and "Traceback" not in said

    async def test_the_official_sdk_client_streams_the_answer(self) -> None:
        from a2a.helpers.proto_helpers import new_text_message
        from a2a.types import Role, SendMessageRequest

        from tests.server.test_sdk_interop import make_client

        script = Script(say("from ", "the ", "sdk"))
        with self.served(script) as url:
            sdk = await make_client(url, ("JSONRPC", "1.0"), streaming=True)
            try:
                request = SendMessageRequest(message=new_text_message("go", role=Role.ROLE_USER))
                events = [event async for event in sdk.send_message(request)]
            finally:
                await sdk.close()
        updates = [e.artifact_update for e in events if e.HasField("artifact_update")]
        deltas = [u.artifact.parts[0].text for u in updates if not u.last_chunk]
        assert "".join(deltas) == "from the sdk"
        assert updates[-1].last_chunk and updates[-1].artifact.parts[0].text == "from the sdk"


__all__ = [
    "HUMAN_TOOL",
    "AdapterConformance",
    "CallTool",
    "Fail",
    "Hang",
    "ModelFailure",
    "Say",
    "Script",
    "Step",
    "Turn",
]

pytestmark = pytest.mark.asyncio
