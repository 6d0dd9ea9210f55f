"""What every framework adapter shares: the streamed answer, cancellation, conversation state,
failure messages, and a remote agent seen as a tool.

An adapter is translation only, in both directions:

- *serve*: a framework's agent becomes an :class:`~simple_a2a.server.AgentExecutor`. The model's
  text deltas go out as chunks of one artifact (:class:`TextStream`); the conversation of a
  ``contextId`` is the framework's own record of it, kept in the server's storage
  (``ctx.load_state`` / ``ctx.save_state``, :func:`load_json` / :func:`save_json`); a tool that
  needs a human ends the turn ``input-required`` and the next message is its answer; a cancel
  cancels the framework's run (:func:`run_until_cancelled`); an error fails the task with
  :func:`failure_message`.
- *call*: :class:`RemoteAgent` is a remote A2A agent behind one ``ask(text)`` coroutine, which
  each adapter wraps as the framework's tool (the card's skills are the tool's description).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from ..client import AsyncClient
from ..protocol.models import Artifact, Message, Part, Task, TaskState, new_id
from ..server.context import RequestContext
from ..server.executor import FAILURE_MESSAGE

T = TypeVar("T")

#: The name of the artifact a streamed answer builds.
ANSWER_ARTIFACT = "answer"


class TextStream:
    """The model's answer as one artifact, streamed (spec §3.2.3 ``TaskArtifactUpdateEvent``).

    Each :meth:`write` sends its delta at once as a chunk (``append`` after the first), so a
    streaming client shows tokens as they come. :meth:`close` sends the whole answer once more as
    the artifact itself (``append: false`` replaces the chunks, ``lastChunk: true``): the stored
    task then has the answer as one text part, not one part per token, and a client that
    folds the stream by the spec (append extends, no append replaces) ends with the same.
    """

    def __init__(self, ctx: RequestContext, *, name: str = ANSWER_ARTIFACT) -> None:
        self._ctx = ctx
        self._name = name
        self.artifact_id = new_id()
        self._deltas: list[str] = []

    @property
    def text(self) -> str:
        """Everything written so far."""
        return "".join(self._deltas)

    async def write(self, delta: str) -> None:
        if not delta:
            return
        first = not self._deltas
        self._deltas.append(delta)
        await self._ctx.emit_artifact(self._artifact(delta), append=not first)

    async def close(self, final_text: str | None = None) -> None:
        """Send the answer as the artifact: ``final_text`` if the framework's final output
        differs from the deltas (a structured output), else what was written. Nothing is sent
        for an empty answer."""
        text = self.text if final_text is None else final_text
        if text:
            await self._ctx.emit_artifact(self._artifact(text), append=False, last_chunk=True)

    def _artifact(self, text: str) -> Artifact:
        return Artifact(artifact_id=self.artifact_id, name=self._name, parts=[Part(text=text)])


class RunCancelled(Exception):
    """The client canceled the task; the framework's run was cancelled."""


async def run_until_cancelled(ctx: RequestContext, work: Awaitable[T]) -> T:
    """Await ``work`` (the framework's run) as a task of its own, and cancel it when the client
    cancels the A2A task (``ctx.cancelled``): :class:`RunCancelled` is raised once the
    framework's run has really stopped. Cancelling the caller cancels the run too."""
    run: asyncio.Future[T] = asyncio.ensure_future(work)
    cancel: asyncio.Future[Any] = asyncio.ensure_future(ctx.cancelled.wait())
    try:
        await asyncio.wait([run, cancel], return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancel.cancel()
        if not run.done():
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)
    if run.cancelled():
        raise RunCancelled
    return run.result()


def failure_message(exc: BaseException) -> str:
    """What a failed task says about an error in the framework or the model: the kind of
    error, never its text or traceback (it may carry prompts, keys or internal addresses)."""
    return f"{FAILURE_MESSAGE} ({type(exc).__name__})"


async def load_json(ctx: RequestContext, key: str) -> Any:
    """The JSON value :func:`save_json` kept for this conversation, or None."""
    raw = await ctx.load_state(key)
    return None if raw is None else json.loads(raw)


async def save_json(ctx: RequestContext, key: str, value: Any) -> None:
    await ctx.save_state(key, json.dumps(value, separators=(",", ":")).encode())


_TOOL_NAME = re.compile(r"[^a-zA-Z0-9_-]+")


def tool_name(name: str) -> str:
    """A tool name every framework and model API takes (``[a-zA-Z0-9_-]{1,64}``)."""
    cleaned = _TOOL_NAME.sub("_", name).strip("_")[:64]
    return cleaned or "remote_agent"


#: Answers that approve a tool call waiting for the user's approval (compared lowercased).
APPROVALS = frozenset({"yes", "y", "ok", "approve", "approved", "allow", "true"})


def approves(answer: str) -> bool:
    """Whether the user's ``answer`` to an approval question approves (:data:`APPROVALS`)."""
    return answer.strip().lower() in APPROVALS


class RemoteAgentError(Exception):
    """The remote agent failed, rejected the message or could not be reached."""


class RemoteAgent:
    """A remote A2A agent behind one coroutine: ``await agent.ask("...")`` is its answer text.

    Made with :meth:`connect` (reads the agent's card): :attr:`name` and :attr:`description`
    (the card's description and skills) describe it to a model. One ``RemoteAgent`` is one
    conversation with the remote agent: each ``ask`` continues its ``contextId``, and when the
    remote agent asks for input (``input-required``) its question is the answer and the next
    ``ask`` answers it. Answers are bounded by ``max_answer_chars`` (the rest is cut with a
    note): a remote agent cannot make the calling model read an unbounded text.
    """

    def __init__(
        self,
        client: AsyncClient | Callable[[], AsyncClient],
        *,
        name: str,
        description: str,
        max_answer_chars: int = 100_000,
    ) -> None:
        # A client (its connection pool) belongs to one event loop, and a tool is often made
        # in another (at import, in asyncio.run) than the one that calls it: with a factory a
        # new client is made for each loop that asks.
        self._make_client = client if callable(client) else None
        self._client = None if callable(client) else client
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.name = tool_name(name)
        self.description = description
        self.max_answer_chars = max_answer_chars
        self.context_id: str | None = None
        self._waiting_task: str | None = None  # a task of the remote agent waiting for input

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        name: str | None = None,
        description: str | None = None,
        headers: dict[str, str] | None = None,
        max_answer_chars: int = 100_000,
    ) -> RemoteAgent:
        async with AsyncClient(url, headers=headers) as probe:
            card = await probe.agent_card()
        skills = "; ".join(
            f"{skill.name}: {skill.description}" if skill.description else skill.name
            for skill in card.skills
        )
        about = card.description or card.name
        return cls(
            lambda: AsyncClient(card, headers=headers),
            name=name or card.name,
            description=description or (f"{about} Skills: {skills}." if skills else about),
            max_answer_chars=max_answer_chars,
        )

    @property
    def client(self) -> AsyncClient:
        """The client for the running event loop."""
        loop = asyncio.get_running_loop()
        if self._make_client is not None and (
            self._client is None or self._client_loop is not loop
        ):
            self._client, self._client_loop = self._make_client(), loop
        assert self._client is not None
        return self._client

    async def ask(self, text: str) -> str:
        """Send ``text``; the remote agent's answer (or its question, when it needs input)."""
        result = await self.client.send(
            text, context_id=self.context_id, task_id=self._waiting_task
        )
        return self._answer(result)

    async def ask_streaming(self, text: str) -> AsyncIterator[str]:
        """Send ``text`` with SendStreamingMessage; yields the answer's text as it comes."""
        task: Task | None = None
        seen: set[str] = set()  # artifact ids: a later event without append replaces, not adds
        async for event in self.client.stream(
            text, context_id=self.context_id, task_id=self._waiting_task
        ):
            if isinstance(event, Message):
                yield self._answer(event)
                return
            if isinstance(event, Task):
                task = event
            artifact = getattr(event, "artifact", None)
            if artifact is None:
                continue
            replaces = artifact.artifact_id in seen and not getattr(event, "append", False)
            seen.add(artifact.artifact_id)
            if artifact.text and not replaces:
                yield artifact.text
        if task is not None:
            self._answer(await self.client.get(task.id))  # context, waiting task, failure

    async def ask_or_error(self, text: str) -> str:
        """:meth:`ask` for a framework's tool: a failure of the remote agent is the answer too
        (``"Error: ..."``), so the model reads what failed and carries on."""
        try:
            return await self.ask(text)
        except RemoteAgentError as exc:
            return f"Error: {exc}"

    def _answer(self, result: Task | Message) -> str:
        self.context_id = result.context_id or self.context_id
        if isinstance(result, Message):
            self._waiting_task = None
            return self._bounded(result.text)
        state = result.status.state
        said = result.status.message.text if result.status.message is not None else ""
        if state in (TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED):
            self._waiting_task = result.id
            return self._bounded(said or "The agent needs more input.")
        self._waiting_task = None
        if state is not TaskState.COMPLETED:
            kind = state.value.removeprefix("TASK_STATE_").lower().replace("_", "-")
            raise RemoteAgentError(f"the agent {self.name} ended the task {kind}: {said}".strip())
        return self._bounded(result.text or said)

    def _bounded(self, text: str) -> str:
        if len(text) <= self.max_answer_chars:
            return text
        return text[: self.max_answer_chars] + f"\n[cut: the answer was {len(text)} characters]"

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


async def remote_agent(
    target: str | RemoteAgent, *, headers: dict[str, str] | None = None
) -> RemoteAgent:
    """``target`` as a :class:`RemoteAgent`: itself, or connected to by its URL (its card is
    read); what each adapter's ``remote_agent_tool`` starts with."""
    if isinstance(target, RemoteAgent):
        return target
    return await RemoteAgent.connect(target, headers=headers)
