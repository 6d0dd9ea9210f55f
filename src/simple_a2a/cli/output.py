"""Everything the ``simple-a2a`` command prints goes through :class:`Output`.

Two modes: for people (rich tables and colours on stdout, spinners and notes on stderr) and
``--json`` for programs (the ProtoJSON of each result on stdout, one object per line, nothing
else on stdout). Errors are one red line on stderr in both modes.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

import click
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from simple_a2a.client import TaskAccumulator
from simple_a2a.protocol._base import A2AModel
from simple_a2a.protocol.card import AgentCard, SecurityScheme
from simple_a2a.protocol.models import (
    Artifact,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from simple_a2a.protocol.requests import (
    ListTaskPushNotificationConfigsResponse,
    ListTasksResponse,
    StreamEvent,
    StreamResponse,
)

__all__ = ["Output", "StreamView", "state_name"]

STATE_STYLES = {
    TaskState.COMPLETED: "green",
    TaskState.FAILED: "red",
    TaskState.REJECTED: "red",
    TaskState.CANCELED: "yellow",
    TaskState.INPUT_REQUIRED: "magenta",
    TaskState.AUTH_REQUIRED: "magenta",
}


def state_name(state: TaskState) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` -> ``input-required`` (the short spelling of 0.3)."""
    return state.value.removeprefix("TASK_STATE_").lower().replace("_", "-")


def styled_state(state: TaskState) -> Text:
    return Text(state_name(state), style=f"bold {STATE_STYLES.get(state, 'cyan')}")


def part_text(part: Part) -> str:
    """A part as text: its text, its JSON data, its URL, or a note about its bytes."""
    if part.is_text:
        return str(part.content)
    if part.is_data:
        return json.dumps(part.content, ensure_ascii=False)
    if part.is_url:
        return str(part.content)
    about = ", ".join(x for x in (part.filename, part.media_type) if x)
    return f"<{len(part.decoded_bytes())} bytes{', ' + about if about else ''}>"


def parts_text(parts: Iterable[Part]) -> str:
    return "\n".join(part_text(p) for p in parts)


def _summary(task: Task) -> str:
    """One line about a task for tables: its artifacts' text, else its status message."""
    if task.text:
        return task.text.replace("\n", " ")
    message = task.status.message
    return parts_text(message.parts).replace("\n", " ") if message is not None else ""


def _yes_no(value: bool | None) -> str:
    return "yes" if value else "no"


def _scheme_text(name: str, scheme: SecurityScheme) -> str:
    if (key := scheme.api_key_security_scheme) is not None:
        return f"{name}: API key in {key.location} {key.name!r}"
    if (http := scheme.http_auth_security_scheme) is not None:
        fmt = f" ({http.bearer_format})" if http.bearer_format else ""
        return f"{name}: HTTP {http.scheme}{fmt}"
    if scheme.open_id_connect_security_scheme is not None:
        return (
            f"{name}: OpenID Connect {scheme.open_id_connect_security_scheme.open_id_connect_url}"
        )
    if scheme.mtls_security_scheme is not None:
        return f"{name}: mutual TLS"
    return f"{name}: OAuth 2.0"


def _kv_table() -> Table:
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    return table


class Output:
    """The one place that prints: results, streams, notes, errors, spinners."""

    def __init__(self, json_mode: bool = False) -> None:
        self.json_mode = json_mode
        self.console = Console(highlight=False)
        self.stderr = Console(stderr=True, highlight=False)
        if not self.console.is_terminal and "COLUMNS" not in os.environ:
            self.console.width = 160  # piped output: wide enough for ids and URLs

    # -- machine output --
    def json(self, value: A2AModel | dict[str, Any]) -> None:
        data = value.to_dict() if isinstance(value, A2AModel) else value
        click.echo(json.dumps(data, ensure_ascii=False, separators=(",", ":")))

    # -- results --
    def result(self, value: Any, wire: A2AModel | dict[str, Any] | None = None) -> None:
        """Print a result: rendered for people, or ``wire`` (default: ``value``) as JSON; a
        list without ``wire`` is one JSON object per line."""
        if self.json_mode:
            if wire is None and isinstance(value, list):
                for item in value:
                    self.json(item)
            else:
                self.json(wire if wire is not None else value)
        else:
            self.console.print(self.render(value))

    def render(self, value: Any) -> RenderableType:
        if isinstance(value, AgentCard):
            return self._card(value)
        if isinstance(value, Task):
            return self._task(value)
        if isinstance(value, Message):
            return Text.assemble(("agent: ", "bold"), parts_text(value.parts))
        if isinstance(value, ListTasksResponse):
            return self._task_table(value.tasks, value.next_page_token)
        if isinstance(value, TaskPushNotificationConfig):
            return self._push_table([value])
        if isinstance(value, ListTaskPushNotificationConfigsResponse):
            return self._push_table(value.configs)
        if isinstance(value, list):  # tasks, from list --all
            return self._task_table(value, "")
        return Text(str(value))

    def _card(self, card: AgentCard) -> RenderableType:
        table = _kv_table()
        table.add_row("name", card.name)
        table.add_row("description", card.description)
        table.add_row("version", card.version)
        if card.provider is not None:
            table.add_row("provider", f"{card.provider.organization} ({card.provider.url})")
        if card.documentation_url:
            table.add_row("documentation", card.documentation_url)
        interfaces = [
            f"{i.protocol_binding} {i.protocol_version}  {i.url}"
            + (f"  tenant={i.tenant}" if i.tenant else "")
            for i in card.supported_interfaces
        ]
        table.add_row("interfaces", "\n".join(interfaces) or "-")
        caps = card.capabilities
        capabilities = [
            f"streaming: {_yes_no(caps.streaming)}",
            f"push notifications: {_yes_no(caps.push_notifications)}",
            f"extended card: {_yes_no(caps.extended_agent_card)}",
        ]
        capabilities += [
            f"extension: {e.uri}" + (" (required)" if e.required else "") for e in caps.extensions
        ]
        table.add_row("capabilities", "\n".join(capabilities))
        table.add_row("input modes", ", ".join(card.default_input_modes))
        table.add_row("output modes", ", ".join(card.default_output_modes))
        schemes = [_scheme_text(n, s) for n, s in card.security_schemes.items()]
        requirements = [
            "requires " + " + ".join(sorted(r.schemes)) for r in card.security_requirements
        ]
        table.add_row("security", "\n".join(schemes + requirements) or "none")
        if not card.skills:
            table.add_row("skills", "none")
            return table
        skills = Table(title="skills", title_justify="left", title_style="bold")
        for column in ("id", "name", "description", "tags"):
            skills.add_column(column, overflow="fold")
        for skill in card.skills:
            skills.add_row(skill.id, skill.name, skill.description, ", ".join(skill.tags))
        return Group(table, Text(""), skills)

    def _task(self, task: Task) -> RenderableType:
        table = _kv_table()
        table.add_row("task", task.id)
        table.add_row("context", task.context_id or "-")
        table.add_row("state", styled_state(task.state))
        if task.status.message is not None:
            table.add_row("message", parts_text(task.status.message.parts))
        items: list[RenderableType] = [table]
        status_id = task.status.message.message_id if task.status.message else None
        for message in task.history:
            if message.message_id == status_id:
                continue  # shown as the status message
            role = message.role.value.removeprefix("ROLE_").lower()
            items.append(Text.assemble((f"{role}: ", "dim"), parts_text(message.parts)))
        items += [self._artifact(a) for a in task.artifacts]
        return Group(*items)

    @staticmethod
    def _artifact(artifact: Artifact) -> RenderableType:
        title = artifact.name or artifact.artifact_id
        return Group(Text(f"── {title}", style="bold"), Text(parts_text(artifact.parts)))

    @staticmethod
    def _task_table(tasks: list[Task], next_page_token: str) -> RenderableType:
        table = Table()
        for column in ("id", "context", "state", "updated", "text"):
            table.add_column(column, overflow="fold", no_wrap=column in ("id", "context"))
        for task in tasks:
            stamp = task.status.timestamp
            table.add_row(
                task.id,
                task.context_id or "",
                styled_state(task.state),
                stamp.strftime("%Y-%m-%d %H:%M:%S") if stamp else "",
                _summary(task)[:60],
            )
        footer = f"{len(tasks)} task(s)"
        if next_page_token:
            footer += f"; next page: --page-token {next_page_token}"
        return Group(table, Text(footer, style="dim"))

    @staticmethod
    def _push_table(configs: list[TaskPushNotificationConfig]) -> RenderableType:
        table = Table()
        for column in ("id", "task", "url", "token", "auth"):
            table.add_column(column, overflow="fold")
        for config in configs:
            auth = config.authentication.scheme if config.authentication else ""
            table.add_row(
                config.id or "", config.task_id or "", config.url, config.token or "", auth
            )
        if not configs:
            return Text("no push configs", style="dim")
        return table

    # -- notes, errors, spinners (stderr) --
    def note(self, text: str) -> None:
        """A hint for people (never in ``--json`` mode)."""
        if not self.json_mode:
            self.stderr.print(Text(text, style="dim"), soft_wrap=True)

    def error(self, line: str) -> None:
        self.stderr.print(f"[bold red]error:[/] [red]{escape(line)}[/]", soft_wrap=True)

    @contextlib.contextmanager
    def waiting(self, text: str) -> Iterator[None]:
        """A spinner while we wait, when a person is watching (a TTY, not ``--json``)."""
        if self.json_mode or not self.stderr.is_terminal:
            yield
            return
        with self.stderr.status(text):
            yield


class StreamView:
    """Prints the events of a stream as they come: artifact chunks joined on one line, status
    changes on their own lines; ``summary()`` at the end. Folds the events into the task."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.fold = TaskAccumulator()
        self.events = 0
        self.started = time.monotonic()
        self._line_of: str | None = None  # the artifact whose chunks are on the current line

    @property
    def state(self) -> TaskState | None:
        return self.fold.task.state if self.fold.task is not None else None

    def show(self, event: StreamEvent) -> None:
        self.events += 1
        self.fold.apply(event)
        if self.out.json_mode:
            self.out.json(StreamResponse.of(event))
        elif isinstance(event, TaskArtifactUpdateEvent):
            self._chunk(event)
        elif isinstance(event, Task):
            self._line(Text.assemble(("task ", "dim"), event.id, " ", styled_state(event.state)))
            for artifact in event.artifacts:
                self._line(Text(parts_text(artifact.parts)))
        elif isinstance(event, TaskStatusUpdateEvent):
            line = Text.assemble(("[", "dim"), styled_state(event.status.state), ("]", "dim"))
            if event.status.message is not None:
                line.append(" " + parts_text(event.status.message.parts))
            self._line(line)
        else:
            self._line(self.out.render(event))

    def _chunk(self, event: TaskArtifactUpdateEvent) -> None:
        artifact_id = event.artifact.artifact_id
        if not (event.append and self._line_of == artifact_id):
            self._end_line()
        self.out.console.print(
            parts_text(event.artifact.parts), end="", markup=False, soft_wrap=True
        )
        self._line_of = artifact_id
        if event.last_chunk:
            self._end_line()

    def _line(self, renderable: RenderableType) -> None:
        self._end_line()
        self.out.console.print(renderable, soft_wrap=True)

    def _end_line(self) -> None:
        if self._line_of is not None:
            self.out.console.print()
            self._line_of = None

    def summary(self) -> None:
        """The closing line: final state, artifacts, events, elapsed time (not in --json)."""
        self._end_line()
        elapsed = time.monotonic() - self.started
        task = self.fold.task
        what = (
            f"{state_name(task.state)} · {len(task.artifacts)} artifact(s)"
            if task is not None
            else "message"
        )
        line = f"── {what} · {self.events} event(s) · {elapsed:.2f} s"
        if not self.out.json_mode:
            self.out.console.print(Text(line, style="dim"))
