"""The MCP bridge: any A2A agent as an MCP server (docs/mcp.md).

``mcp_server("http://localhost:9292")`` is an MCP server (the official ``mcp`` SDK's) whose
tools call the agent: one per skill of its card, or one ``send`` tool. ``simple-a2a mcp URL``
runs it over stdio or streamable HTTP. Needs the ``mcp`` extra: ``pip install
'simple-a2a[mcp]'``; ``import simple_a2a`` never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping

from simple_a2a.client import AsyncClient

from ._answers import OUTPUT_SCHEMA, AnswerLimits
from ._bridge import (
    CANCEL_TIMEOUT,
    MAX_PROGRESS_CHARS,
    SKILL_METADATA_KEY,
    A2AMCPServer,
    ToolMode,
)
from ._tools import INPUT_SCHEMA, SEND_TOOL

__all__ = [
    "CANCEL_TIMEOUT",
    "INPUT_SCHEMA",
    "MAX_PROGRESS_CHARS",
    "OUTPUT_SCHEMA",
    "SEND_TOOL",
    "SKILL_METADATA_KEY",
    "A2AMCPServer",
    "AnswerLimits",
    "ToolMode",
    "mcp_server",
]


def mcp_server(
    url_or_client: str | AsyncClient,
    *,
    tools: ToolMode = "skills",
    headers: Mapping[str, str] | None = None,
    bearer_token: str | None = None,
    name: str | None = None,
    max_answer_chars: int = AnswerLimits.max_answer_chars,
    max_file_bytes: int = AnswerLimits.max_file_bytes,
    timeout: float = 30.0,
) -> A2AMCPServer:
    """An MCP server exposing the A2A agent at ``url_or_client``.

    - ``tools="skills"``: a tool per skill of the card (a card without skills: the ``send``
      tool); ``tools="send"``: one ``send`` tool, described by the card;
    - ``headers`` / ``bearer_token``: sent to the agent with every request (ignored when a
      client is given: it has its own);
    - ``name``: the MCP server's name (default: the card's, read when it starts);
    - ``max_answer_chars`` (100,000) and ``max_file_bytes`` (1 MiB): what one tool result may
      hold of the answer's text and of its files' bytes; the rest is cut, with a note;
    - ``timeout``: seconds per request to the agent (a blocking send waits for the task).
    """
    return A2AMCPServer(
        url_or_client,
        tools=tools,
        headers=headers,
        bearer_token=bearer_token,
        name=name,
        limits=AnswerLimits(max_answer_chars=max_answer_chars, max_file_bytes=max_file_bytes),
        timeout=timeout,
    )
