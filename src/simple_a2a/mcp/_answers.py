"""An A2A result as an MCP tool result: the answer's content, bounded, and where the
conversation stands (``structuredContent``: task id, context id, state).

Text and data parts become one text block (data as JSON); a file part with bytes becomes an
image block (``image/*``) or an embedded blob resource, a file part by URL a resource link.
The answer's text is cut at ``max_answer_chars`` and the embedded bytes at ``max_file_bytes``
(each with a note saying so), so an agent cannot make the MCP client hold an unbounded answer.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from simple_a2a.protocol.models import Message, Part, Task, TaskState

#: The states after which a continuing call must name the task (spec §4.1.3: interrupted).
WAITING = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
#: The terminal states that are not a success: the tool result is an error.
UNSUCCESSFUL = frozenset({TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED})

#: ``structuredContent`` of every tool result that reached the agent (its output schema).
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "taskId": {
            "type": ["string", "null"],
            "description": "The A2A task; pass it as task_id to answer an input-required task.",
        },
        "contextId": {
            "type": ["string", "null"],
            "description": "The A2A conversation; pass it as context_id to continue it.",
        },
        "state": {
            "type": "string",
            "description": "The task's state (completed, input-required, auth-required, "
            "failed, rejected, canceled, working, submitted), or 'message' for a direct reply.",
        },
    },
    "required": ["taskId", "contextId", "state"],
}


def state_name(state: TaskState) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` -> ``input-required`` (the spelling users read)."""
    return state.value.removeprefix("TASK_STATE_").lower().replace("_", "-")


@dataclass(frozen=True)
class AnswerLimits:
    """What one tool result may hold; the defaults are documented in docs/mcp.md."""

    max_answer_chars: int = 100_000  #: text of the answer (all text and data parts)
    max_file_bytes: int = 1_048_576  #: bytes of the files embedded in one result, in total


class _Content:
    """Collects the blocks of one result within :class:`AnswerLimits`."""

    def __init__(self, limits: AnswerLimits) -> None:
        self.limits = limits
        self.texts: list[str] = []
        self.files: list[types.ContentBlock] = []
        self.file_bytes = 0
        self.left_out: list[str] = []

    def add(self, part: Part, where: str) -> None:
        if part.text is not None:
            self.texts.append(part.text)
        elif part.raw is not None:
            self._add_bytes(part, where)
        elif part.url is not None:
            name = part.filename or part.url.rstrip("/").rsplit("/", 1)[-1] or part.url
            self.files.append(
                types.ResourceLink(name=name, uri=part.url, mime_type=part.media_type)
            )
        elif part.data is not None:
            self.texts.append(json.dumps(part.data, ensure_ascii=False))

    def _add_bytes(self, part: Part, where: str) -> None:
        raw = part.raw or b""
        name = part.filename or where
        if self.file_bytes + len(raw) > self.limits.max_file_bytes:
            self.left_out.append(f"{name} ({len(raw)} bytes)")
            return
        self.file_bytes += len(raw)
        data = base64.b64encode(raw).decode("ascii")
        media_type = part.media_type or "application/octet-stream"
        if media_type.startswith("image/"):
            self.files.append(types.ImageContent(data=data, mime_type=media_type))
        else:
            uri = f"a2a:{where}" + (f"/{part.filename}" if part.filename else "")
            blob = types.BlobResourceContents(uri=uri, mime_type=media_type, blob=data)
            self.files.append(types.EmbeddedResource(resource=blob))

    def blocks(self, prefix: str = "", suffix: str = "") -> list[types.ContentBlock]:
        text = "\n".join(t for t in [prefix, *self.texts] if t)
        limit = self.limits.max_answer_chars
        if len(text) > limit:
            text = text[:limit] + f"\n[cut: the answer was {len(text)} characters]"
        if self.left_out:
            text += (
                f"\n[left out, over the {self.limits.max_file_bytes} bytes of files a result "
                f"may embed: {', '.join(self.left_out)}]"
            )
        if suffix:
            text = f"{text}\n\n{suffix}" if text else suffix
        head: list[types.ContentBlock] = [types.TextContent(text=text)] if text else []
        return head + self.files


def tool_result(result: Task | Message, limits: AnswerLimits) -> types.CallToolResult:
    """The MCP tool result for what the agent answered (a task in any state or a message)."""
    content = _Content(limits)
    if isinstance(result, Message):
        for i, part in enumerate(result.parts):
            content.add(part, f"message/{result.message_id}/{i}")
        return types.CallToolResult(
            content=content.blocks() or [types.TextContent(text="(empty answer)")],
            structured_content={
                "taskId": result.task_id,
                "contextId": result.context_id,
                "state": "message",
            },
        )
    state = result.status.state
    said = result.status.message
    structured = {"taskId": result.id, "contextId": result.context_id, "state": state_name(state)}
    if state in UNSUCCESSFUL or state in WAITING or (said is not None and not result.artifacts):
        # What the agent says of the task (its question, its failure) comes first.
        for i, part in enumerate(said.parts if said is not None else []):
            content.add(part, f"tasks/{result.id}/status/{i}")
    if state not in UNSUCCESSFUL and state not in WAITING:
        for artifact in result.artifacts:
            for i, part in enumerate(artifact.parts):
                content.add(part, f"tasks/{result.id}/artifacts/{artifact.artifact_id}/{i}")
    prefix = suffix = ""
    if state in UNSUCCESSFUL:
        prefix = f"The agent ended the task {state_name(state)}."
    elif state is TaskState.INPUT_REQUIRED:
        suffix = (
            f"[The agent needs an answer: call again with task_id={result.id} "
            f"and context_id={result.context_id}.]"
        )
    elif state is TaskState.AUTH_REQUIRED:
        suffix = (
            f"[The agent needs authentication (out of band), then a call with "
            f"task_id={result.id} and context_id={result.context_id}.]"
        )
    elif state is not TaskState.COMPLETED:
        suffix = f"[The task is {state_name(state)}.]"
    blocks = content.blocks(prefix, suffix) or [types.TextContent(text="(empty answer)")]
    return types.CallToolResult(
        content=blocks, structured_content=structured, is_error=state in UNSUCCESSFUL
    )


def error_result(text: str) -> types.CallToolResult:
    """A tool error the model can read (MCP: errors of the tool are results with isError)."""
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
