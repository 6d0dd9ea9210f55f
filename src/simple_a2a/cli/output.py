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
from dataclasses import dataclass
from typing import Any

import click
from rich import box
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


LONG_STAMP = "%Y-%m-%d %H:%M:%S"
SHORT_STAMP = "%m-%d %H:%M"
MIN_TEXT = 10  # narrower than this, the text column is left out
COLUMN_GAP = 3  # SIMPLE_HEAD without edges: a space, the (blank) rule, a space


@dataclass(frozen=True)
class TaskLayout:
    columns: tuple[str, ...]
    stamp_format: str
    text_width: int
    hidden: tuple[str, ...]


def _task_layout(tasks: list[Task], width: int) -> TaskLayout:
    """The widest of the task table's layouts that fits ``width`` with every id whole."""
    stamps = [t.status.timestamp for t in tasks if t.status.timestamp is not None]

    def need(column: str, stamp_format: str = LONG_STAMP) -> int:
        values: list[str] = {
            "id": [t.id for t in tasks],
            "context": [t.context_id or "" for t in tasks],
            "state": [state_name(t.state) for t in tasks],
            "updated": [s.strftime(stamp_format) for s in stamps],
        }[column]
        return max([len(column), *map(len, values)])

    text = max([len("text"), *(len(_summary(t)) for t in tasks)])
    candidates = [
        (("id", "context", "state", "updated", "text"), LONG_STAMP),
        (("id", "state", "updated", "text"), LONG_STAMP),
        (("id", "state", "updated", "text"), SHORT_STAMP),
        (("id", "state", "text"), SHORT_STAMP),
        (("id", "state", "updated"), SHORT_STAMP),
        (("id", "state"), SHORT_STAMP),
    ]
    for columns, stamp_format in candidates:
        fixed = [c for c in columns if c != "text"]
        used = sum(need(c, stamp_format) for c in fixed) + COLUMN_GAP * (len(columns) - 1)
        room = width - used
        if "text" in columns and room < MIN_TEXT:
            continue
        if room >= 0:
            hidden = tuple(c for c in ("context", "updated", "text") if c not in columns)
            return TaskLayout(columns, stamp_format, min(room, text), hidden)
    return TaskLayout(("id",), SHORT_STAMP, 0, ("context", "state", "updated", "text"))


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

    def _task_table(self, tasks: list[Task], next_page_token: str) -> RenderableType:
        """One line per task; ids are never cut: on a narrow terminal the other columns give
        way (the context first, then the text, the date of ``updated``, ``updated``)."""
        layout = _task_layout(tasks, self.console.width)
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for column in layout.columns:
            is_text = column == "text"
            table.add_column(
                column,
                no_wrap=True,
                overflow="ellipsis" if is_text else "fold",
                width=layout.text_width if is_text else None,
                min_width=None if is_text else len(column),
            )
        for task in tasks:
            stamp = task.status.timestamp
            cells: dict[str, RenderableType] = {
                "id": task.id,
                "context": task.context_id or "",
                "state": styled_state(task.state),
                "updated": stamp.strftime(layout.stamp_format) if stamp else "",
                "text": _summary(task),
            }
            table.add_row(*(cells[column] for column in layout.columns))
        footer = f"{len(tasks)} task(s)"
        if layout.hidden:
            footer += f" ({', '.join(layout.hidden)} not shown: narrow terminal; see --json)"
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
