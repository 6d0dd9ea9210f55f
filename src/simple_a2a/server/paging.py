"""What a read returns of a task: history trimming (spec §3.2.4) and ListTasks page tokens
(spec §3.1.4), shared by the request handler's read operations."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime

from ..protocol import errors as e
from ..protocol.models import Task

MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 50


def trim_history(task: Task, history_length: int | None, cap: int | None) -> Task:
    """Spec §3.2.4: unset → server default (all, up to ``cap``); 0 → none; n → the last n."""
    if history_length is not None and history_length < 0:
        raise e.InvalidParamsError("historyLength must be >= 0", field="historyLength")
    limit = history_length if history_length is not None else cap
    if limit is not None and cap is not None:
        limit = min(limit, cap)
    if limit is None or len(task.history) <= limit:
        return task
    return task.model_copy(update={"history": task.history[-limit:] if limit else []})


def encode_page_token(task: Task) -> str:
    ts = task.status.timestamp.isoformat() if task.status.timestamp else ""
    raw = json.dumps([ts, task.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(token: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        ts, task_id = json.loads(raw)
        return datetime.fromisoformat(ts), str(task_id)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise e.InvalidParamsError("pageToken is not a token this server issued") from exc
