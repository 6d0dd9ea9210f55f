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
from typing import Any

__all__ = ["FIELDS", "bind", "current", "library_logger", "reset"]

#: The record attributes the filter sets.
FIELDS = ("a2a_operation", "a2a_caller", "a2a_task_id", "a2a_context_id")
_EMPTY: dict[str, Any] = {}
_CONTEXT: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
    "simple_a2a_log_context", default=_EMPTY
)


def current() -> dict[str, Any]:
    """The fields bound for the code running now."""
    return _CONTEXT.get()


def bind(**fields: Any) -> contextvars.Token[dict[str, Any]]:
    """Add fields (``operation=``, ``caller=``, ``task_id=``, ``context_id=``) to the current
    context; pass the token to :func:`reset` to undo. ``None`` values are ignored."""
    merged = dict(_CONTEXT.get())
    merged.update({f"a2a_{k}": v for k, v in fields.items() if v is not None})
    return _CONTEXT.set(merged)


def reset(token: contextvars.Token[dict[str, Any]]) -> None:
    _CONTEXT.reset(token)


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        bound = _CONTEXT.get()
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
