"""``simple-a2a inspect URL``: the inspector's page for any agent, served on loopback."""

from __future__ import annotations

import webbrowser

import click

from simple_a2a.server.background import free_port

#: The names a loopback-bound inspector answers to (anything else is refused: DNS rebinding).
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@click.command()
@click.argument("url")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Interface to listen on; anything but loopback lets other machines drive the agent.",
)
@click.option("--port", default=0, type=click.IntRange(0, 65535), help="Default: a free port.")
@click.option(
    "--binding",
    "bindings",
    multiple=True,
    type=click.Choice(["JSONRPC", "HTTP+JSON", "GRPC"], case_sensitive=False),
    help="Binding(s) the client may choose, in order (default: the card's order).",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a web browser.")
@click.pass_obj
def inspect(
    settings: object, url: str, host: str, port: int, bindings: tuple[str, ...], open_browser: bool
) -> None:
    """Inspect any A2A agent (1.0 or 0.3) in a local web page: its card, a chat, task events,
    the task list and every request and response on the wire.

    The global -H/--token/--api-key options are sent to the agent and never shown on the page.
    Example: simple-a2a inspect http://localhost:9292 --open
    """
    import uvicorn

    from simple_a2a.inspector import inspector_app

    from .commands import DEFAULT_TIMEOUT, Settings

    assert isinstance(settings, Settings)
    if "://" not in url:
        url = f"http://{url}"
    loopback = host in LOOPBACK
    app = inspector_app(
        url,
        headers=settings.headers,
        bearer_token=settings.token,
        api_key=settings.api_key,
        bindings=list(bindings) or None,
        allowed_hosts=LOOPBACK if loopback else None,
        timeout=settings.timeout or DEFAULT_TIMEOUT,
    )
    port = port or free_port(host)
    page = f"http://{'127.0.0.1' if loopback else host}:{port}/"
    if not loopback:
        settings.out.note(f"warning: listening on {host}: anyone who can reach it can use {url}")
    click.echo(f"Inspecting {url} at {page} (Ctrl-C to stop)")
    if open_browser:
        webbrowser.open(page)
    uvicorn.run(app, host=host, port=port, log_level="warning")
