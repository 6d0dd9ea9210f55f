"""``simple-a2a serve MODULE:OBJECT``: find the object, make it an :class:`A2AServer`.

OBJECT may be an ``A2AServer`` (served as it is), an ``AgentExecutor`` instance or class, or a
function (plain or decorated with ``@agent``); for the last three a card is built from
``--name`` / ``--description`` (defaulting to the object's name and docstring).
"""

from __future__ import annotations

import importlib
import inspect
import os
import socket
import sys
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlencode

import click

from simple_a2a.protocol.card import AgentCapabilities, AgentCard, AgentSkill
from simple_a2a.server import A2AServer, AgentExecutor, server
from simple_a2a.server.executor import FunctionExecutor
from simple_a2a.server.workqueue import QueueSettings, Role

__all__ = ["CardOptions", "build_server", "cannot_listen", "load_object"]

DEFAULT_DESCRIPTION = "An A2A agent served by simple-a2a."


def load_object(spec: str) -> Any:
    """Import ``MODULE:OBJECT`` (OBJECT may be dotted); the current directory is importable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise click.BadParameter(f"{spec!r} is not MODULE:OBJECT (e.g. my_agent:echo)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import {module_name!r}: {exc}") from exc
    for name in attr.split("."):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            raise click.BadParameter(f"{module_name!r} has no attribute {attr!r}") from None
    return obj


def cannot_listen(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (in use, not permitted, unknown host), or None.

    Tried before the server starts, with the options uvicorn binds with, so that the failure is
    one plain line and the "serving" line is never printed for a server that never served.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return f"cannot listen on {host}:{port}: {reason[:1].lower()}{reason[1:]}"
    return None


@dataclass
class CardOptions:
    name: str | None = None
    description: str | None = None
    version: str = "1.0.0"
    storage: str | None = None
    #: ``--role`` and ``--max-concurrent-tasks`` (docs/cluster.md, Roles and caps)
    role: str = "all"
    max_concurrent_tasks: int | None = None
    #: ``--fanout``: the PostgreSQL storage's event fan-out (docs/cluster.md, Event fan-out)
    fanout: str | None = None


def _name_and_doc(obj: Any) -> tuple[str, str | None]:
    if isinstance(obj, FunctionExecutor):
        return obj.__name__, obj.fn.__doc__
    if isinstance(obj, AgentExecutor):
        return type(obj).__name__, type(obj).__doc__
    return getattr(obj, "__name__", type(obj).__name__), getattr(obj, "__doc__", None)


def _card_for(obj: Any, options: CardOptions) -> AgentCard:
    default_name, doc = _name_and_doc(obj)
    name = options.name or default_name
    summary = inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ") if doc else ""
    description = options.description or summary or DEFAULT_DESCRIPTION
    skill = AgentSkill(id=default_name, name=name, description=description, tags=["simple-a2a"])
    return AgentCard(
        name=name,
        description=description,
        version=options.version,
        capabilities=AgentCapabilities(streaming=True),
        skills=[skill],
    )


def build_server(obj: Any, options: CardOptions) -> A2AServer:
    """The server for ``obj`` (see the module docstring)."""
    if isinstance(obj, A2AServer):
        flags: dict[str, object] = {"--name": options.name, "--description": options.description}
        flags |= {
            "--store": options.storage,
            "--max-concurrent-tasks": options.max_concurrent_tasks,
            "--fanout": options.fanout,
        }
        flags["--role"] = options.role != obj.role
        given = [flag for flag, value in flags.items() if value]
        if given:
            raise click.UsageError(
                f"{', '.join(given)}: the object is already an A2AServer with its own card, "
                "storage and role; these options apply to executors and functions only"
            )
        return obj
    if inspect.isclass(obj) and issubclass(obj, AgentExecutor):
        obj = obj()
    elif not isinstance(obj, AgentExecutor) and not callable(obj):
        raise click.BadParameter(
            f"{obj!r} is neither an A2AServer, an AgentExecutor nor a function"
        )
    queue = None
    if options.max_concurrent_tasks is not None:
        queue = QueueSettings(max_concurrent_tasks=options.max_concurrent_tasks)
    role = cast("Role", options.role)
    storage = _with_fanout(options.storage, options.fanout)
    try:
        return server(_card_for(obj, options), obj, storage=storage, role=role, queue=queue)
    except ValueError as exc:  # a bad storage URL, or a role the storage cannot serve
        raise click.BadParameter(str(exc), param_hint="--store") from exc


def _with_fanout(storage: str | None, fanout: str | None) -> str | None:
    """The ``--store`` URL carrying ``--fanout`` as its ``fanout=`` parameter (``open_storage``)."""
    if fanout is None:
        return storage
    from simple_a2a.storage.fanout import fanout_from

    if not storage or not storage.startswith(("postgresql://", "postgres://")):
        raise click.BadParameter(
            "an event fan-out needs the PostgreSQL storage (--store postgresql://…)",
            param_hint="--fanout",
        )
    try:
        fanout_from(fanout)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--fanout") from exc
    return f"{storage}{'&' if '?' in storage else '?'}{urlencode({'fanout': fanout})}"
