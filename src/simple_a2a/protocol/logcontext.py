"""Structured log fields: every record of the library's loggers carries the request it serves.

The server binds the operation, caller, task id and context id of the request being served in a
context variable (:func:`bind`); a filter on each library logger copies them onto every record
as the attributes ``a2a_operation``, ``a2a_caller``, ``a2a_task_id`` and ``a2a_context_id``
(``None`` where unknown; push delivery adds ``a2a_push_config_id``), exactly as ``logging``'s
``extra=`` would. A formatter or a JSON
handler can use them: ``%(a2a_task_id)s``. No logging framework is involved.

The loggers (docs/observability.md): ``simple_a2a.server`` (operations, executors, tasks),
``simple_a2a.push`` (push delivery), ``simple_a2a.client``, ``simple_a2a.auth`` and
``simple_a2a.storage`` (``simple_a2a.storage.postgres``), all under ``simple_a2a``.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from typing import Any, TypeAlias

__all__ = ["FIELDS", "bind", "bind_deferred", "current", "library_logger", "reset"]

#: The record attributes the filter sets.
FIELDS = ("a2a_operation", "a2a_caller", "a2a_task_id", "a2a_context_id")
_EMPTY: dict[str, Any] = {}


class _Deferred:
    """Fields bound by :func:`bind_deferred`: computed the first time a record needs them.

    Most requests log nothing, so the server binds each request's fields this way: one small
    object per request instead of building a dict that nobody reads.
    """

    __slots__ = ("_args", "_compute", "_fields", "_parent")

    def __init__(self, parent: _Bound, compute: Callable[..., dict[str, Any]], args: Any) -> None:
        self._parent, self._compute, self._args = parent, compute, args
        self._fields: dict[str, Any] | None = None

    def resolve(self) -> dict[str, Any]:
        if self._fields is None:
            self._fields = _merged(self._parent, self._compute(*self._args))
        return self._fields


_Bound: TypeAlias = dict[str, Any] | _Deferred
_CONTEXT: contextvars.ContextVar[_Bound] = contextvars.ContextVar(
    "simple_a2a_log_context", default=_EMPTY
)


def _fields_of(bound: _Bound) -> dict[str, Any]:
    return bound if type(bound) is dict else bound.resolve()  # type: ignore[union-attr]


def _merged(bound: _Bound, fields: dict[str, Any]) -> dict[str, Any]:
    merged = dict(_fields_of(bound))
    merged.update({f"a2a_{k}": v for k, v in fields.items() if v is not None})
    return merged


def current() -> dict[str, Any]:
    """The fields bound for the code running now."""
    return _fields_of(_CONTEXT.get())


def bind(**fields: Any) -> contextvars.Token[_Bound]:
    """Add fields (``operation=``, ``caller=``, ``task_id=``, ``context_id=``) to the current
    context; pass the token to :func:`reset` to undo. ``None`` values are ignored."""
    return _CONTEXT.set(_merged(_CONTEXT.get(), fields))


def bind_deferred(compute: Callable[..., dict[str, Any]], *args: Any) -> contextvars.Token[_Bound]:
    """:func:`bind` of the fields ``compute(*args)`` returns, called only if a record is logged
    in this context (at most once); pass the token to :func:`reset` to undo."""
    return _CONTEXT.set(_Deferred(_CONTEXT.get(), compute, args))


def reset(token: contextvars.Token[_Bound]) -> None:
    _CONTEXT.reset(token)


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        bound = current()
        for name in FIELDS:
            if not hasattr(record, name):  # an explicit extra= wins
                setattr(record, name, bound.get(name))
        for name, value in bound.items():  # others, such as a2a_push_config_id
            if not hasattr(record, name):
                setattr(record, name, value)
        return True


_FILTER = _ContextFilter()


def library_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with the context filter (added once)."""
    logger = logging.getLogger(name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger
