"""``simple-a2a mcp URL``: an A2A agent as an MCP server (stdio or streamable HTTP).

The MCP SDK (the ``mcp`` extra) is imported only when the command runs. Over stdio, stdout is
the MCP connection: nothing else may be printed there (notes go to stderr).
"""

from __future__ import annotations

from typing import Any, cast

import click

MISSING_EXTRA = "the mcp command needs the mcp extra: pip install 'simple-a2a[mcp]'"


def _parse_header(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> Any:
    from .commands import _parse_headers  # the global -H's parser (commands imports this module)

    return _parse_headers(ctx, param, values)


@click.command("mcp")
@click.argument("url")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: for an MCP client that spawns the command; http: streamable HTTP.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="(http) Interface.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--path", default="/mcp", show_default=True, help="(http) The MCP endpoint.")
@click.option(
    "--tools",
    type=click.Choice(["skills", "send"]),
    default="skills",
    show_default=True,
    help="A tool per skill of the agent's card, or one send tool.",
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    callback=_parse_header,
    metavar="'NAME: VALUE'",
    help="Send this HTTP header to the agent (repeatable; adds to the global -H).",
)
@click.option("--name", help="The MCP server's name (default: the card's name).")
@click.pass_obj
def mcp(
    settings: Any,
    url: str,
    transport: str,
    host: str,
    port: int,
    path: str,
    tools: str,
    headers: dict[str, str],
    name: str | None,
) -> None:
    """Serve the A2A agent at URL as an MCP server: its skills (or one send tool) as tools.

    The global -H/--token/--api-key options go to the agent. Over http, anyone who reaches
    the port calls the agent with them: keep it on loopback.
    Example: simple-a2a mcp http://localhost:9292 --transport http --port 8000
    """
    try:
        import mcp as _sdk  # noqa: F401
    except ImportError:
        raise click.UsageError(MISSING_EXTRA) from None
    import anyio
    import httpx

    from simple_a2a.client import AsyncClient
    from simple_a2a.mcp import ToolMode, mcp_server

    from .commands import DEFAULT_TIMEOUT, with_scheme

    async def serve() -> None:
        timeout = settings.timeout or DEFAULT_TIMEOUT
        async with AsyncClient(
            with_scheme(url),
            headers={**settings.headers, **headers},
            bearer_token=settings.token,
            api_key=settings.api_key,
            timeout=httpx.Timeout(timeout, read=None),
        ) as agent:
            server = mcp_server(agent, tools=cast(ToolMode, tools), name=name)
            if transport == "stdio":
                await server.run_stdio()
            else:
                settings.out.note(f"MCP server for {url}: http://{host}:{port}{path}")
                await server.run_http(host=host, port=port, path=path)

    anyio.run(serve)
