"""``simple-a2a mcp URL`` as a real process: streamable HTTP on a port, credentials for the
agent (``--header``, the global ``--token``), and the MCP SDK loaded only when it runs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from mcp import Client
from tests.conftest import free_port

from .conftest import TOKEN, cli_params
from .test_bridge import text_of

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


@pytest.fixture
def http_bridge(agent_url: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    command = [sys.executable, "-m", "simple_a2a.cli", "mcp", agent_url, "--transport", "http"]
    process = subprocess.Popen(
        [*command, "--port", str(port), "--tools", "send"],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "simple-a2a mcp did not listen"
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.terminate()
        process.wait(10)


async def test_the_command_serves_streamable_http(
    http_bridge: tuple[str, subprocess.Popen[str]], agent_url: str
) -> None:
    url, process = http_bridge
    async with Client(url) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ["send"]
        result = await client.call_tool("send", {"message": "hi"})
    assert text_of(result) == "echo: hi"
    process.terminate()
    out, err = process.communicate(timeout=10)
    assert out == ""
    assert f"MCP server for {agent_url}: {url}" in err  # a note, on stderr


@pytest.mark.parametrize(
    "credentials",
    [["mcp", "--header", f"Authorization: Bearer {TOKEN}"], ["--token", TOKEN, "mcp"]],
    ids=["--header", "--token"],
)
async def test_credentials_reach_the_agent(guarded_url: str, credentials: list[str]) -> None:
    where = credentials.index("mcp")
    args = [*credentials[: where + 1], guarded_url, *credentials[where + 1 :]]
    async with Client(cli_params(*args)) as client:
        result = await client.call_tool("paint", {"message": "hi"})
    assert not result.is_error and text_of(result) == "echo: hi"


async def test_without_credentials_the_refusal_is_a_tool_error(guarded_url: str) -> None:
    async with Client(cli_params("mcp", guarded_url)) as client:
        result = await client.call_tool("paint", {"message": "hi"})
    assert result.is_error
    assert text_of(result).startswith("the A2A agent answered AuthenticationError")


def test_the_sdk_loads_only_when_the_command_runs() -> None:
    code = (
        "import sys, simple_a2a, simple_a2a.cli.commands; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=ENV, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
