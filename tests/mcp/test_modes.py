"""The bridge's other shapes, over streamable HTTP with the official MCP client: one send
tool, an agent that does not stream, answers bounded, files, direct messages, an agent that
cannot be reached, and the official A2A SDK 1.3.0's agent behind the bridge."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from mcp import Client
from tests.conftest import free_port

from .agent import PNG
from .conftest import bridge_over_http
from .test_bridge import text_of


async def test_one_send_tool_described_by_the_card(agent_url: str) -> None:
    with bridge_over_http(agent_url, tools="send") as url:
        async with Client(url) as client:
            tools = (await client.list_tools()).tools
            result = await client.call_tool("send", {"message": "skill"})
    assert [tool.name for tool in tools] == ["send"]
    description = tools[0].description or ""
    assert "Paint shop: Paints things." in description
    assert "Paint: Paints a thing in a color." in description and "Quote" in description
    assert text_of(result) == "skill None"  # no skill named: the agent chooses


async def test_an_agent_that_does_not_stream_answers_without_progress(blocking_url: str) -> None:
    seen: list[Any] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    with bridge_over_http(blocking_url) as url:
        async with Client(url) as client:
            result = await client.call_tool(
                "paint", {"message": "steps 2"}, progress_callback=progress
            )
            asked = await client.call_tool("paint", {"message": "ask"})
    assert text_of(result) == "0 1 " and result.structured_content["state"] == "completed"
    assert seen == []  # a blocking SendMessage has nothing to report before its answer
    assert asked.structured_content["state"] == "input-required"


async def test_answers_are_bounded(agent_url: str) -> None:
    with bridge_over_http(agent_url, max_answer_chars=100, max_file_bytes=len(PNG)) as url:
        async with Client(url) as client:
            long = await client.call_tool("paint", {"message": "long"})
            files = await client.call_tool("paint", {"message": "file"})
    assert text_of(long) == "x" * 100 + "\n[cut: the answer was 500 characters]"
    # The PNG fits the byte budget, the PDF after it does not: left out, with a note.
    kinds = [block.type for block in files.content]
    assert kinds == ["text", "image", "resource_link"]
    assert "a.pdf (8 bytes)" in text_of(files)


async def test_files_as_images_embedded_resources_and_links(agent_url: str) -> None:
    with bridge_over_http(agent_url) as url:
        async with Client(url) as client:
            result = await client.call_tool("paint", {"message": "file"})
    text, image, embedded, link = result.content
    assert text.type == "text" and text.text == "here you are"
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    assert embedded.type == "resource"
    assert embedded.resource.mime_type == "application/pdf"
    assert base64.b64decode(embedded.resource.blob) == b"%PDF-1.4"
    assert embedded.resource.uri.endswith("/a.pdf")
    assert link.type == "resource_link" and link.uri == "https://example.com/invoice.pdf"
    assert link.name == "invoice.pdf" and link.mime_type == "application/pdf"


async def test_a_direct_message_is_the_answer(agent_url: str) -> None:
    with bridge_over_http(agent_url) as url:
        async with Client(url) as client:
            result = await client.call_tool("paint", {"message": "reply hi"})
    assert text_of(result) == "reply: hi"
    assert result.structured_content["state"] == "message"


@pytest.fixture
def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


async def test_an_unreachable_agent(dead_url: str) -> None:
    with bridge_over_http(dead_url) as url:
        async with Client(url) as client:
            with pytest.raises(MCPError, match=f"cannot reach the A2A agent at {dead_url}"):
                await client.list_tools()  # a tool per skill needs the card
            called = await client.call_tool("paint", {"message": "hi"})
    assert called.is_error
    assert text_of(called).startswith(f"cannot reach the A2A agent at {dead_url}")
    with bridge_over_http(dead_url, tools="send") as url:
        async with Client(url) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["send"]
            sent = await client.call_tool("send", {"message": "hi"})
    assert sent.is_error and "cannot reach the A2A agent" in text_of(sent)
    assert "Traceback" not in text_of(sent)


async def test_an_a2a_error_is_a_tool_error(agent_url: str) -> None:
    with bridge_over_http(agent_url) as url:
        async with Client(url) as client:
            result = await client.call_tool("paint", {"message": "hi", "task_id": "no-such-task"})
    assert result.is_error
    assert text_of(result).startswith("the A2A agent answered TaskNotFoundError")
    assert result.structured_content is None  # no task to continue


async def test_an_unknown_tool_is_a_tool_error(agent_url: str) -> None:
    with bridge_over_http(agent_url) as url:
        async with Client(url) as client:
            result = await client.call_tool("nope", {"message": "hi"})
    assert result.is_error
    assert (
        text_of(result) == "invalid call: unknown tool 'nope'; the tools are ['paint', "
        "'quote_price_v2']"
    )


@pytest.fixture(scope="module")
def sdk_agent() -> Iterator[Any]:
    from tests.client.sdk_agent import build_app
    from tests.client.servers import ServerThread

    with ServerThread(build_app) as server:
        yield server


@pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs")
async def test_the_official_sdk_agent_behind_the_bridge(sdk_agent: Any) -> None:
    seen: list[str | None] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    with bridge_over_http(sdk_agent.url) as url:
        async with Client(url) as client:
            tools = (await client.list_tools()).tools
            echoed = await client.call_tool("echo", {"message": "echo hi"})
            counted = await client.call_tool(
                "echo", {"message": "count 3"}, progress_callback=progress
            )
    assert [tool.name for tool in tools] == ["echo"]
    assert text_of(echoed) == "echo: echo hi"
    assert echoed.structured_content["state"] == "completed"
    assert text_of(counted) == "0 1 2 "
    assert [m for m in seen if m and m[0].isdigit()] == ["0 ", "1 ", "2 "]
