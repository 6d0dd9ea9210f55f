"""Real parts for the MCP bridge tests: our A2A agent on loopback, the bridge over streamable
HTTP (uvicorn in a thread) or over stdio (``python -m simple_a2a.cli mcp URL`` as a real
subprocess), and the official ``mcp`` SDK's client in front of either."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

import simple_a2a
from mcp import Client, StdioServerParameters
from simple_a2a.auth import BearerAuth
from simple_a2a.mcp import mcp_server
from tests.support.agents import serving

from .agent import BLOCKING_CARD, CARD, paint_shop

TOKEN = "s3cret-mcp"


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    with serving(simple_a2a.server(CARD, paint_shop).app) as url:
        yield url


@pytest.fixture(scope="module")
def blocking_url() -> Iterator[str]:
    """The same agent without streaming (calls are blocking SendMessage)."""
    with serving(simple_a2a.server(BLOCKING_CARD, paint_shop).app) as url:
        yield url


@pytest.fixture(scope="module")
def guarded_url() -> Iterator[str]:
    """The agent behind a bearer token."""
    app = simple_a2a.server(CARD, paint_shop, auth=BearerAuth(tokens={TOKEN: "alice"})).app
    with serving(app) as url:
        yield url


@contextlib.contextmanager
def bridge_over_http(agent: str, **options: Any) -> Iterator[str]:
    """The bridge for ``agent`` served over streamable HTTP; yields the MCP endpoint's URL."""
    server = mcp_server(agent, **options)
    with serving(server.http_app()) as url:
        yield f"{url}/mcp"


@pytest.fixture(scope="module")
def mcp_http_url(agent_url: str) -> Iterator[str]:
    with bridge_over_http(agent_url) as url:
        yield url


def cli_params(*args: str) -> StdioServerParameters:
    """``python -m simple_a2a.cli <args>`` with this checkout's package on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = ["-m", "simple_a2a.cli", *args]
    return StdioServerParameters(command=sys.executable, args=command, env=env)


Connect = Callable[..., contextlib.AbstractAsyncContextManager[Client]]


@pytest.fixture(params=["http", "stdio"])
def connect(request: pytest.FixtureRequest, agent_url: str) -> Connect:
    """``async with connect() as client``: the official MCP client talking to the bridge of
    ``agent_url``, over streamable HTTP or over a spawned ``simple-a2a mcp`` (stdio)."""
    transport = request.param

    @contextlib.asynccontextmanager
    async def open_client(*cli_args: str) -> AsyncIterator[Client]:
        if transport == "http":
            target: Any = request.getfixturevalue("mcp_http_url")
        else:
            target = cli_params("mcp", agent_url, *cli_args)
        async with Client(target, read_timeout_seconds=30) as client:
            yield client

    return open_client
