"""The MCP tools of one A2A agent: one per card skill, or a single ``send`` tool.

A tool's name is its skill's id made to fit MCP's tool names (``[A-Za-z0-9._-]{1,128}``,
MCP SEP-986), unique within the server; its description is the skill's description and
examples (spec §4.4.5 ``AgentSkill``). Every tool takes the same input: the ``message`` to
send, and ``context_id`` / ``task_id`` to continue a conversation or answer a task that asked
for input (spec §3.4 multi-turn).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp.types as types

from simple_a2a.protocol.card import AgentCard, AgentSkill

from ._answers import OUTPUT_SCHEMA

SEND_TOOL = "send"
_NOT_A_NAME_CHAR = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 128
#: A card's text in a tool description is bounded: a card is the agent's to write.
MAX_DESCRIPTION_CHARS = 4_000
MAX_EXAMPLES = 5

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"type": "string", "description": "What to send to the agent."},
        "context_id": {
            "type": "string",
            "description": "Continue this conversation (the contextId of an earlier result).",
        },
        "task_id": {
            "type": "string",
            "description": "Answer this task (the taskId of a result whose state is "
            "input-required).",
        },
    },
    "required": ["message"],
    "additionalProperties": False,
}


class ArgumentsError(ValueError):
    """The tool's arguments do not match :data:`INPUT_SCHEMA`."""


@dataclass(frozen=True)
class ToolCall:
    """What a tool call asks of the agent."""

    message: str
    context_id: str | None
    task_id: str | None
    skill_id: str | None  # None for the send tool


def tool_name(text: str, taken: set[str]) -> str:
    """``text`` as an MCP tool name not in ``taken`` (``_2``, ``_3``... on a clash)."""
    base = _NOT_A_NAME_CHAR.sub("_", text).strip("_")[:_MAX_NAME] or "skill"
    name, n = base, 1
    while name in taken:
        n += 1
        suffix = f"_{n}"
        name = base[: _MAX_NAME - len(suffix)] + suffix
    return name


def _bounded(text: str) -> str:
    if len(text) <= MAX_DESCRIPTION_CHARS:
        return text
    return text[: MAX_DESCRIPTION_CHARS - 1] + "…"


def _skill_description(card: AgentCard, skill: AgentSkill) -> str:
    lines = [skill.description or skill.name, f"(A skill of the A2A agent {card.name}.)"]
    if skill.examples:
        shown = "; ".join(repr(e) for e in skill.examples[:MAX_EXAMPLES])
        lines.append(f"Examples: {shown}")
    return _bounded("\n".join(lines))


def _send_description(card: AgentCard | None) -> str:
    if card is None:
        return "Send a message to the A2A agent and return its answer."
    lines = [f"Send a message to the A2A agent {card.name}: {card.description}".strip()]
    if card.skills:
        lines.append("Skills: " + "; ".join(f"{s.name}: {s.description}" for s in card.skills))
    return _bounded("\n".join(lines))


@dataclass(frozen=True)
class Toolset:
    """The tools listed and how a name maps back to a skill."""

    tools: list[types.Tool]
    skill_of: dict[str, str | None]  # tool name -> skill id (None: the send tool)

    @classmethod
    def build(cls, card: AgentCard | None, mode: str) -> Toolset:
        """``mode`` ``"skills"``: a tool per skill (a card without skills gets the send
        tool); ``"send"``: the send tool only."""
        if mode == "skills" and card is not None and card.skills:
            taken: set[str] = set()
            tools: list[types.Tool] = []
            skill_of: dict[str, str | None] = {}
            for skill in card.skills:
                name = tool_name(skill.id, taken)
                taken.add(name)
                skill_of[name] = skill.id
                tools.append(_tool(name, skill.name, _skill_description(card, skill)))
            return cls(tools, skill_of)
        title = card.name if card is not None else None
        return cls([_tool(SEND_TOOL, title, _send_description(card))], {SEND_TOOL: None})

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolCall:
        if name not in self.skill_of:
            raise ArgumentsError(f"unknown tool {name!r}; the tools are {sorted(self.skill_of)}")
        args = dict(arguments or {})
        extra = sorted(set(args) - set(INPUT_SCHEMA["properties"]))
        if extra:
            raise ArgumentsError(f"unknown arguments: {', '.join(extra)}")
        message = args.get("message")
        if not isinstance(message, str) or not message:
            raise ArgumentsError("'message' must be a non-empty string")
        ids = {key: args.get(key) for key in ("context_id", "task_id")}
        for key, value in ids.items():
            if value is not None and (not isinstance(value, str) or not value):
                raise ArgumentsError(f"{key!r} must be a non-empty string when given")
        return ToolCall(message, ids["context_id"], ids["task_id"], self.skill_of[name])


def _tool(name: str, title: str | None, description: str) -> types.Tool:
    return types.Tool(
        name=name,
        title=title,
        description=description,
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
    )
