"""The ``simple-a2a`` command: talk to any A2A agent from a shell, or serve one.

Every command that talks to an agent takes its URL first; the global options (``-H``,
``--token``, ``--api-key``, ``--json``, ``--timeout``) come before the command. Printing goes
through :class:`~simple_a2a.cli.output.Output`; errors become exit codes in one place
(:class:`A2AGroup`, :mod:`simple_a2a.cli.errors`). Reference: docs/cli.md.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import click
import httpx

import simple_a2a
from simple_a2a.client import Client
from simple_a2a.protocol.models import Message, Task, TaskState
from simple_a2a.protocol.requests import (
    ListTaskPushNotificationConfigsResponse,
    SendMessageResponse,
    StreamEvent,
)

from .errors import ExitCode, describe, exit_code_for, interrupted, outcome_code
from .inspector import inspect
from .mcp_command import mcp
from .output import Output, StreamView

__all__ = ["cli", "run"]

DEFAULT_TIMEOUT = 30.0
UVICORN_STARTUP_FAILURE = 3  # uvicorn's exit status when it cannot bind


def with_scheme(url: str) -> str:
    """``localhost:9292`` means ``http://localhost:9292`` (as with curl)."""
    return url if "://" in url else f"http://{url}"


@dataclass
class Settings:
    """The global options, shared by every command."""

    out: Output
    headers: dict[str, str] = field(default_factory=dict)
    token: str | None = None
    api_key: str | None = None
    timeout: float | None = None

    def client(self, url: str) -> Client:
        return simple_a2a.client(
            with_scheme(url),
            headers=self.headers,
            bearer_token=self.token,
            api_key=self.api_key,
            timeout=self.timeout or DEFAULT_TIMEOUT,
        )

    @property
    def wait_timeout(self) -> float | httpx.Timeout:
        """For a blocking send: no read limit (the agent takes its time) unless --timeout."""
        return self.timeout or httpx.Timeout(DEFAULT_TIMEOUT, read=None)


pass_settings = click.make_pass_decorator(Settings)


class A2AGroup(click.Group):
    """A group that turns every error (and Ctrl-C) into one red line and an exit code;
    ``SIMPLE_A2A_DEBUG=1`` also prints the traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except (Exception, KeyboardInterrupt) as exc:
            out = ctx.obj.out if isinstance(ctx.obj, Settings) else Output()
            if os.environ.get("SIMPLE_A2A_DEBUG"):
                out.stderr.print_exception()
            out.error(describe(exc))
            ctx.exit(exit_code_for(exc))


def _parse_headers(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> Any:
    headers: dict[str, str] = {}
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise click.BadParameter(f"{value!r} is not 'Name: value'")
        headers[name.strip()] = content.strip()
    return headers


def _parse_state(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Any:
    """``completed``, ``input-required``, ``TASK_STATE_COMPLETED``: all spell a TaskState."""
    if value is None:
        return None
    name = value.strip().upper().replace("-", "_")
    try:
        return TaskState(name if name.startswith("TASK_STATE_") else f"TASK_STATE_{name}")
    except ValueError:
        raise click.BadParameter(f"unknown task state {value!r}") from None


def _finish(out: Output, result: Task | Message | None) -> None:
    """After a command that waited for a task: a hint if it needs the user, the exit code."""
    if isinstance(result, Task) and result.is_interrupted:
        out.note(
            f"The agent is waiting for you: continue with --task-id {result.id} "
            f"--context-id {result.context_id}"
        )
    code = outcome_code(result.state if isinstance(result, Task) else None)
    if code != ExitCode.OK:
        click.get_current_context().exit(code)


def _follow(out: Output, url: str, events: Iterator[StreamEvent]) -> None:
    """Print a stream (stream, subscribe) as it comes, then its summary; set the exit code.
    Interrupted (Ctrl-C) before the task ended: say how to follow or cancel it."""
    view = StreamView(out)
    try:
        with contextlib.closing(events):  # type: ignore[type-var]
            with out.waiting("Waiting for the agent…"):
                first = next(events, None)
            if first is not None:
                view.show(first)
                for event in events:
                    view.show(event)
    except BaseException as exc:
        # Ctrl-C, or an error raised while the stream was closed after it (closing a
        # connection in the middle of a read can raise its own error): the same hint.
        if not interrupted(exc):
            raise
        task = view.fold.task
        if task is not None and not task.is_terminal:
            view.summary()
            out.note(
                f"The task keeps running on the agent: follow it with "
                f"`simple-a2a subscribe {url} {task.id}`, or stop it with "
                f"`simple-a2a cancel {url} {task.id}`."
            )
        raise
    view.summary()
    _finish(out, view.fold.result)


@click.group(cls=A2AGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-H",
    "--header",
    "headers",
    multiple=True,
    callback=_parse_headers,
    metavar="'NAME: VALUE'",
    help="Send this HTTP header with every request (repeatable).",
)
@click.option("--token", metavar="TOKEN", help="Bearer token (Authorization: Bearer TOKEN).")
@click.option("--api-key", metavar="KEY", help="API key (header named by the card, or X-API-Key).")
@click.option("--json", "json_mode", is_flag=True, help="Machine output: ProtoJSON, one per line.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help=f"Seconds per request (default {DEFAULT_TIMEOUT:g}; a blocking send waits unlimited).",
)
@click.version_option(simple_a2a.__version__, prog_name="simple-a2a")
@click.pass_context
def cli(
    ctx: click.Context,
    headers: dict[str, str],
    token: str | None,
    api_key: str | None,
    json_mode: bool,
    timeout: float | None,
) -> None:
    """Talk to an A2A agent from the shell, or serve one.

    Exit codes: 0 success; 1 the task ended failed, rejected or canceled; 2 usage error;
    3 A2A error from the agent; 4 transport error; 5 authentication error; 6 serve cannot
    listen on the address.
    """
    ctx.obj = Settings(Output(json_mode), headers, token, api_key, timeout)


# -- discovery --------------------------------------------------------------------------------


@cli.command()
@click.argument("url")
@click.option("--extended", is_flag=True, help="The extended card for authenticated callers.")
@pass_settings
def card(settings: Settings, url: str, extended: bool) -> None:
    """Show the agent's card."""
    with settings.client(url) as agent:
        result = agent.extended_card() if extended else agent.agent_card()
    settings.out.result(result)


# -- messages -----------------------------------------------------------------------------------


@cli.command()
@click.argument("url")
@click.argument("text")
@click.option("--task-id", help="Continue this task (multi-turn).")
@click.option("--context-id", help="Continue this conversation.")
@click.option(
    "--no-wait",
    "--return-immediately",
    "return_immediately",
    is_flag=True,
    help="Return as soon as the task exists, without waiting for its end.",
)
@pass_settings
def send(
    settings: Settings,
    url: str,
    text: str,
    task_id: str | None,
    context_id: str | None,
    return_immediately: bool,
) -> None:
    """Send TEXT; print the task (state, artifacts) or the agent's direct reply."""
    with settings.client(url) as agent, settings.out.waiting("Waiting for the agent…"):
        result = agent.send(
            text,
            task_id=task_id,
            context_id=context_id,
            return_immediately=return_immediately,
            timeout=settings.wait_timeout,
        )
    wire = (
        SendMessageResponse(task=result)
        if isinstance(result, Task)
        else SendMessageResponse(message=result)
    )
    settings.out.result(result, wire)
    _finish(settings.out, result)


@cli.command()
@click.argument("url")
@click.argument("text")
@click.option("--task-id", help="Continue this task (multi-turn).")
@click.option("--context-id", help="Continue this conversation.")
@pass_settings
def stream(
    settings: Settings, url: str, text: str, task_id: str | None, context_id: str | None
) -> None:
    """Send TEXT and print the task's updates live (artifact chunks as they arrive)."""
    with settings.client(url) as agent:
        _follow(settings.out, url, agent.stream(text, task_id=task_id, context_id=context_id))


@cli.command()
@click.argument("url")
@click.argument("task_id", metavar="ID")
@pass_settings
def subscribe(settings: Settings, url: str, task_id: str) -> None:
    """Follow a running task: its current state, then its updates until it ends."""
    with settings.client(url) as agent:
        _follow(settings.out, url, agent.subscribe(task_id))


# -- tasks --------------------------------------------------------------------------------------


@cli.command()
@click.argument("url")
@click.argument("task_id", metavar="ID")
@click.option("--history", type=click.IntRange(min=0), help="Include the last N messages.")
@pass_settings
def get(settings: Settings, url: str, task_id: str, history: int | None) -> None:
    """Show a task."""
    with settings.client(url) as agent:
        settings.out.result(agent.get(task_id, history_length=history))


@cli.command("list")
@click.argument("url")
@click.option("--context-id", help="Only the tasks of this conversation.")
@click.option(
    "--status", callback=_parse_state, help="Only tasks in this state (e.g. completed, working)."
)
@click.option("--page-size", type=click.IntRange(1, 100), help="Tasks per page (1-100).")
@click.option("--page-token", help="Continue from this page (see the previous page's footer).")
@click.option("--all", "all_pages", is_flag=True, help="Every page (JSON: one task per line).")
@pass_settings
def list_tasks(
    settings: Settings,
    url: str,
    context_id: str | None,
    status: TaskState | None,
    page_size: int | None,
    page_token: str | None,
    all_pages: bool,
) -> None:
    """List tasks, newest first: one page, or --all."""
    filters: dict[str, Any] = {"context_id": context_id, "status": status, "page_size": page_size}
    if not settings.out.json_mode:  # the table's text column is the artifacts' text
        filters["include_artifacts"] = True
    with settings.client(url) as agent:
        if all_pages:
            settings.out.result(list(agent.list_all(**filters)))
        else:
            settings.out.result(agent.list(page_token=page_token, **filters))


@cli.command()
@click.argument("url")
@click.argument("task_id", metavar="ID")
@pass_settings
def cancel(settings: Settings, url: str, task_id: str) -> None:
    """Cancel a task; print it in its new state."""
    with settings.client(url) as agent:
        settings.out.result(agent.cancel(task_id))


# -- push notification configs ----------------------------------------------------------------


@cli.group()
def push() -> None:
    """Webhooks that receive a task's updates (the agent must support push)."""


@push.command("create")
@click.argument("url")
@click.argument("task_id")
@click.argument("webhook_url")
@click.option("--token", help="Token the agent sends back in X-A2A-Notification-Token.")
@click.option("--id", "config_id", help="The config's id (default: chosen by the agent).")
@pass_settings
def push_create(
    settings: Settings,
    url: str,
    task_id: str,
    webhook_url: str,
    token: str | None,
    config_id: str | None,
) -> None:
    """Register WEBHOOK_URL for the task's updates."""
    with settings.client(url) as agent:
        config = agent.create_push_config(task_id, webhook_url, token=token, config_id=config_id)
    settings.out.result(config)


@push.command("get")
@click.argument("url")
@click.argument("task_id")
@click.argument("config_id")
@pass_settings
def push_get(settings: Settings, url: str, task_id: str, config_id: str) -> None:
    """Show one push config of a task."""
    with settings.client(url) as agent:
        settings.out.result(agent.get_push_config(task_id, config_id))


@push.command("list")
@click.argument("url")
@click.argument("task_id")
@pass_settings
def push_list(settings: Settings, url: str, task_id: str) -> None:
    """List the push configs of a task."""
    with settings.client(url) as agent:
        configs = agent.list_push_configs(task_id)
    settings.out.result(ListTaskPushNotificationConfigsResponse(configs=configs))


@push.command("delete")
@click.argument("url")
@click.argument("task_id")
@click.argument("config_id")
@pass_settings
def push_delete(settings: Settings, url: str, task_id: str, config_id: str) -> None:
    """Delete one push config of a task."""
    with settings.client(url) as agent:
        agent.delete_push_config(task_id, config_id)
    settings.out.result(f"deleted push config {config_id} of task {task_id}", {})


# -- serving ----------------------------------------------------------------------------------


@cli.command()
@click.argument("target", metavar="MODULE:OBJECT")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=9292, show_default=True, type=click.IntRange(0, 65535))
@click.option("--store", help="Task storage: memory (default), sqlite:///path or postgresql://…")
@click.option(
    "--fanout",
    metavar="URL",
    help="With a postgresql:// store: carry the cross-replica event wake-ups on Redis Streams"
    " instead of NOTIFY, e.g. redis://127.0.0.1:6379/0 (docs/cluster.md, Event fan-out).",
)
@click.option("--name", help="The card's name (default: the object's name).")
@click.option("--description", help="The card's description (default: its docstring).")
@click.option("--agent-version", default="1.0.0", show_default=True, help="The card's version.")
@click.option(
    "--role",
    default="all",
    show_default=True,
    type=click.Choice(["all", "web", "worker"]),
    help="web: accept and queue; worker: run queued tasks; all: both (docs/cluster.md).",
)
@click.option(
    "--max-concurrent-tasks",
    type=click.IntRange(1),
    help="Executions this process runs at once (default: 100 for a worker, unbounded for all).",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
@pass_settings
def serve(
    settings: Settings,
    target: str,
    host: str,
    port: int,
    store: str | None,
    fanout: str | None,
    name: str | None,
    description: str | None,
    agent_version: str,
    role: str,
    max_concurrent_tasks: int | None,
    log_level: str,
) -> None:
    """Serve an agent: an A2AServer, an AgentExecutor (class or instance) or a function.

    Example: simple-a2a serve my_agent:echo --port 9292
    """
    from .serve import CardOptions, build_server, cannot_listen, load_object  # only when serving

    options = CardOptions(name, description, agent_version, store, role, max_concurrent_tasks)
    options.fanout = fanout
    app = build_server(load_object(target), options)
    problem = cannot_listen(host, port)
    if problem is None:
        base = f"http://{host}:{port}"
        settings.out.note(f"{app.card.name}: {base} (card at {base}/.well-known/agent-card.json)")
        try:
            app.run(host=host, port=port, log_level=log_level)
            return
        except SystemExit as exc:
            if exc.code != UVICORN_STARTUP_FAILURE:
                raise
        problem = f"cannot listen on {host}:{port} (the address was taken as the server started)"
    settings.out.error(problem)
    click.get_current_context().exit(ExitCode.CANNOT_LISTEN)


cli.add_command(inspect)
cli.add_command(mcp)


def run() -> None:
    """The command, once :func:`simple_a2a.cli.main` has found click and rich."""
    cli(prog_name="simple-a2a")
