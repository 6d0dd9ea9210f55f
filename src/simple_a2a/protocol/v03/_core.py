"""The converter kit and the 0.3 ⇄ 1.0 shapes of the core objects (tasks, messages, parts...).

A converter knows both directions of one wire shape: ``up`` reads the 0.3 form and returns the
1.0 (ProtoJSON) form, ``down`` does the reverse. Objects are described by tables (the fields
that need converting, renames, the 0.3 ``kind`` discriminator) rather than code, so each
difference listed in ``spec/v1.0/whats-new-v1.md`` is one line here.

Everything works on plain JSON values and never mutates its input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NoReturn

import pydantic

from .._base import Timestamp, format_timestamp
from ..errors import InvalidParamsError
from ..models import FINAL_STATES, ProtoEnum, Role, TaskState

#: Returned by a field converter to remove the field from the output.
OMIT: Any = object()


def fail(path: str, problem: str) -> NoReturn:
    field = path or "(root)"
    raise InvalidParamsError(f"Invalid parameters: {field}: {problem}", field=field)


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def as_object(value: Any, path: str) -> dict[str, Any]:
    """A shallow copy of a JSON object, or :class:`InvalidParamsError` naming ``path``."""
    if not isinstance(value, Mapping):
        fail(path, f"expected an object, got {type(value).__name__}")
    return dict(value)


def as_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        fail(path, f"expected an array, got {type(value).__name__}")
    return value


def require_str(obj: Mapping[str, Any], key: str, path: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        fail(join(path, key), "a non-empty string is required")
    return value


class Conv:
    """One wire shape in both directions."""

    def up(self, value: Any, path: str) -> Any:  # 0.3 -> 1.0
        raise NotImplementedError

    def down(self, value: Any, path: str) -> Any:  # 1.0 -> 0.3
        raise NotImplementedError


class EnumConv(Conv):
    """A proto enum: 0.3 kebab-case values ⇄ 1.0 ``SCREAMING_SNAKE`` names.

    Either form is accepted in either direction (a value already in the target form passes).
    """

    def __init__(self, enum: type[ProtoEnum], v03_to_v10: dict[str, str]) -> None:
        self.enum = enum
        self.up_map = v03_to_v10
        self.down_map = {v10: v03 for v03, v10 in v03_to_v10.items()}

    def up(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and value in self.up_map:
            return self.up_map[value]
        if isinstance(value, str) and value in self.down_map:
            return value
        fail(path, f"unknown value {value!r} (expected one of {', '.join(self.up_map)})")

    def down(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and value in self.up_map:
            return value
        try:
            name = self.enum(value).value  # also accepts the enum's integer form
        except (ValueError, TypeError):
            fail(path, f"unknown value {value!r}")
        if name not in self.down_map:
            fail(path, f"{name} has no A2A 0.3 equivalent")
        return self.down_map[name]


class TimestampConv(Conv):
    """0.3 timestamps are loose ISO 8601; 1.0 wants UTC with milliseconds (whats-new-v1.md:
    TaskStatus Object). Upward they are normalised; downward the 1.0 form is valid 0.3."""

    _adapter: pydantic.TypeAdapter[datetime] = pydantic.TypeAdapter(Timestamp)

    def up(self, value: Any, path: str) -> Any:
        try:
            return format_timestamp(self._adapter.validate_python(value))
        except pydantic.ValidationError:
            fail(path, f"not an ISO 8601 timestamp: {value!r}")

    def down(self, value: Any, path: str) -> Any:
        return value


class NotConv(Conv):
    """A boolean that flips meaning (0.3 ``blocking`` ⇄ 1.0 ``returnImmediately``)."""

    def up(self, value: Any, path: str) -> Any:
        if not isinstance(value, bool):
            fail(path, "expected a boolean")
        return not value

    down = up


class HistoryLengthConv(Conv):
    """0.3 ``historyLength: 0`` means unlimited (0.3 a2a.proto, SendMessageConfiguration), 1.0
    ``0`` means no history (v1.0 specification.md §3.2.4): 0 maps to unset both ways."""

    def up(self, value: Any, path: str) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            fail(path, "expected an integer")
        return OMIT if value == 0 else value

    down = up


class ListConv(Conv):
    def __init__(self, item: Conv) -> None:
        self.item = item

    def up(self, value: Any, path: str) -> Any:
        return [self.item.up(v, join(path, i)) for i, v in enumerate(as_list(value, path))]

    def down(self, value: Any, path: str) -> Any:
        return [self.item.down(v, join(path, i)) for i, v in enumerate(as_list(value, path))]


Hook = Callable[[dict[str, Any], str], None]


class ObjectConv(Conv):
    """An object that differs between versions only in a few fields.

    ``fields`` convert nested values (keyed by the 0.3 name), ``rename`` maps 0.3 names to 1.0
    names, ``kind`` is the 0.3 discriminator (removed upward, added downward), ``drop_up`` and
    ``drop_down`` are fields the other version does not have. Unlisted fields pass through.
    """

    def __init__(
        self,
        kind: str | None = None,
        fields: dict[str, Conv] | None = None,
        *,
        rename: dict[str, str] | None = None,
        drop_up: tuple[str, ...] = (),
        drop_down: tuple[str, ...] = ("tenant",),
        post_up: Hook | None = None,
        post_down: Hook | None = None,
    ) -> None:
        self.kind = kind
        self.fields = fields or {}
        self.rename = rename or {}
        self.unrename = {v10: v03 for v03, v10 in self.rename.items()}
        self.drop_up = drop_up
        self.drop_down = drop_down
        self.post_up = post_up
        self.post_down = post_down

    def _convert(self, obj: dict[str, Any], path: str, up: bool) -> None:
        for name, conv in self.fields.items():
            if obj.get(name) is None:
                obj.pop(name, None)
                continue
            value = (conv.up if up else conv.down)(obj[name], join(path, name))
            if value is OMIT:
                del obj[name]
            else:
                obj[name] = value

    def up(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        kind = obj.pop("kind", None)
        if self.kind and kind is not None and kind != self.kind:
            fail(join(path, "kind"), f"expected {self.kind!r}, got {kind!r}")
        for name in self.drop_up:
            obj.pop(name, None)
        self._convert(obj, path, up=True)
        obj = {self.rename.get(k, k): v for k, v in obj.items()}
        if self.post_up:
            self.post_up(obj, path)
        return obj

    def down(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        for name in self.drop_down:
            obj.pop(name, None)
        obj = {self.unrename.get(k, k): v for k, v in obj.items()}
        self._convert(obj, path, up=False)
        if self.kind:
            obj["kind"] = self.kind
        if self.post_down:
            self.post_down(obj, path)
        return obj


# --------------------------------------------------------------------------- parts

#: Marks a 0.3 DataPart that wraps a non-object 1.0 ``data`` value as ``{"value": ...}``; the
#: same convention as the official a2a-sdk's v0.3 compat layer, so the two interoperate.
DATA_PART_COMPAT = "data_part_compat"
_FILE_KEYS = (("raw", "bytes"), ("url", "uri"))
_FILE_META = (("mediaType", "mimeType"), ("filename", "name"))


def _infer_part_kind(part: Mapping[str, Any]) -> str | None:
    return next((k for k in ("text", "file", "data") if k in part), None)


class PartConv(Conv):
    """whats-new-v1.md, Part Type Unification: 0.3 TextPart / FilePart / DataPart with ``kind``
    ⇄ the single 1.0 Part (``text`` | ``raw`` | ``url`` | ``data``, ``mediaType``, ``filename``).

    Lossy downward: ``mediaType`` and ``filename`` of text and data parts (0.3 has no place).
    """

    def up(self, value: Any, path: str) -> Any:
        part = as_object(value, path)
        kind = part.get("kind") or _infer_part_kind(part)
        out: dict[str, Any] = {}
        if kind == "text":
            out["text"] = part.get("text")
        elif kind == "file":
            file = as_object(part.get("file"), join(path, "file"))
            key = next((v10 for v10, v03 in _FILE_KEYS if file.get(v03) is not None), None)
            if key is None:
                fail(join(path, "file"), "a file needs 'bytes' or 'uri'")
            out[key] = file[dict(_FILE_KEYS)[key]]
            out.update({v10: file[v03] for v10, v03 in _FILE_META if file.get(v03) is not None})
        elif kind == "data":
            out["data"] = part.get("data")
        else:
            fail(join(path, "kind"), f"unknown part kind {kind!r} (expected text, file or data)")
        metadata = part.get("metadata")
        if kind == "data" and isinstance(metadata, dict) and metadata.get(DATA_PART_COMPAT):
            out["data"] = as_object(out["data"], join(path, "data")).get("value")
            metadata = {k: v for k, v in metadata.items() if k != DATA_PART_COMPAT} or None
        if metadata is not None:
            out["metadata"] = metadata
        return out

    def down(self, value: Any, path: str) -> Any:
        part = as_object(value, path)
        present = [k for k in ("text", "raw", "url", "data") if part.get(k) is not None]
        if len(present) != 1:
            fail(path, "a part must have exactly one of text, raw, url or data")
        key = present[0]
        metadata = part.get("metadata")
        out: dict[str, Any]
        if key == "text":
            out = {"kind": "text", "text": part["text"]}
        elif key == "data":
            data = part["data"]
            if not isinstance(data, dict):
                data = {"value": data}
                metadata = {**(metadata or {}), DATA_PART_COMPAT: True}
            out = {"kind": "data", "data": data}
        else:
            file = {dict(_FILE_KEYS)[key]: part[key]}
            file.update({v03: part[v10] for v10, v03 in _FILE_META if part.get(v10) is not None})
            out = {"kind": "file", "file": file}
        if metadata is not None:
            out["metadata"] = metadata
        return out


# --------------------------------------------------------------------------- core objects

#: whats-new-v1.md, Enum Value Changes (Complete Mapping); 0.3's ``unknown`` is UNSPECIFIED.
STATE = EnumConv(
    TaskState,
    {
        "submitted": "TASK_STATE_SUBMITTED",
        "working": "TASK_STATE_WORKING",
        "completed": "TASK_STATE_COMPLETED",
        "failed": "TASK_STATE_FAILED",
        "canceled": "TASK_STATE_CANCELED",
        "rejected": "TASK_STATE_REJECTED",
        "input-required": "TASK_STATE_INPUT_REQUIRED",
        "auth-required": "TASK_STATE_AUTH_REQUIRED",
        "unknown": "TASK_STATE_UNSPECIFIED",
    },
)
ROLE = EnumConv(Role, {"user": "ROLE_USER", "agent": "ROLE_AGENT"})

#: 0.3 ``final`` is true on the last event of a stream: a terminal or interrupted state, where
#: our streams close (v1.0 specification.md §3.1.2).
FINAL_V03_STATES = frozenset(STATE.down_map[s.value] for s in FINAL_STATES)


def _status_final(event: dict[str, Any], path: str) -> None:
    status = event.get("status")
    state = status.get("state") if isinstance(status, dict) else None
    event["final"] = state in FINAL_V03_STATES


def _task_context_down(task: dict[str, Any], path: str) -> None:
    # 0.3 requires Task.contextId; 1.0 makes it optional. "" stands for unset (proto3).
    task.setdefault("contextId", "")


def _task_context_up(task: dict[str, Any], path: str) -> None:
    if task.get("contextId") == "":
        del task["contextId"]


PART = PartConv()
MESSAGE = ObjectConv("message", {"role": ROLE, "parts": ListConv(PART)})
STATUS = ObjectConv(None, {"state": STATE, "message": MESSAGE, "timestamp": TimestampConv()})
ARTIFACT = ObjectConv(None, {"parts": ListConv(PART)})
TASK = ObjectConv(
    "task",
    {"status": STATUS, "artifacts": ListConv(ARTIFACT), "history": ListConv(MESSAGE)},
    post_up=_task_context_up,
    post_down=_task_context_down,
)
STATUS_UPDATE = ObjectConv(
    "status-update", {"status": STATUS}, drop_up=("final",), post_down=_status_final
)
ARTIFACT_UPDATE = ObjectConv("artifact-update", {"artifact": ARTIFACT})


class OneofConv(Conv):
    """1.0 wraps a payload in a member (``{"task": ...}``); 0.3 sends the object with ``kind``.

    whats-new-v1.md, Stream Event Discriminator Pattern. A 0.3 object without ``kind`` is
    recognised by its required fields.
    """

    _SIGNATURES = (
        ("artifact-update", "artifact"),
        ("status-update", "taskId"),
        ("task", "status"),
        ("message", "messageId"),
    )

    def __init__(self, members: dict[str, ObjectConv]) -> None:
        self.members = members
        self.by_kind = {conv.kind: name for name, conv in members.items()}

    def up(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        kind = obj.get("kind") or next((k for k, f in self._SIGNATURES if f in obj), None)
        member = self.by_kind.get(kind)
        if member is None:
            expected = ", ".join(str(k) for k in self.by_kind)
            fail(join(path, "kind"), f"unexpected kind {kind!r} (expected {expected})")
        return {member: self.members[member].up(obj, path)}

    def down(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        present = [m for m in self.members if obj.get(m) is not None]
        if len(present) != 1:
            fail(path, f"exactly one of {', '.join(self.members)} must be set")
        return self.members[present[0]].down(obj[present[0]], join(path, present[0]))


SEND_RESULT = OneofConv({"task": TASK, "message": MESSAGE})
STREAM_RESULT = OneofConv(
    {
        "task": TASK,
        "message": MESSAGE,
        "statusUpdate": STATUS_UPDATE,
        "artifactUpdate": ARTIFACT_UPDATE,
    }
)


# --------------------------------------------------------------------------- push configs


class PushConfigConv(Conv):
    """0.3 PushNotificationConfig ⇄ the 1.0 TaskPushNotificationConfig fields.

    whats-new-v1.md, PushNotificationConfig Object: 0.3 ``authentication.schemes[]`` ⇄ 1.0
    ``authentication.scheme``. Lossy upward: schemes after the first; an empty scheme list drops
    the authentication. 1.0 ``taskId`` and ``tenant`` are not part of the inner 0.3 object.
    """

    _PLAIN = ("id", "url", "token")

    def up(self, value: Any, path: str) -> Any:
        cfg = as_object(value, path)
        out = {k: cfg[k] for k in self._PLAIN if cfg.get(k) is not None}
        if cfg.get("authentication") is not None:
            auth_path = join(path, "authentication")
            auth = as_object(cfg["authentication"], auth_path)
            schemes = as_list(auth.get("schemes") or [], join(auth_path, "schemes"))
            if schemes:
                out["authentication"] = {"scheme": schemes[0]}
                if auth.get("credentials") is not None:
                    out["authentication"]["credentials"] = auth["credentials"]
        return out

    def down(self, value: Any, path: str) -> Any:
        cfg = as_object(value, path)
        out = {k: cfg[k] for k in self._PLAIN if cfg.get(k) is not None}
        if cfg.get("authentication") is not None:
            auth = as_object(cfg["authentication"], join(path, "authentication"))
            out["authentication"] = {"schemes": [auth.get("scheme", "")]}
            if auth.get("credentials") is not None:
                out["authentication"]["credentials"] = auth["credentials"]
        return out


PUSH_CONFIG = PushConfigConv()


class TaskPushConfigConv(Conv):
    """0.3 ``{taskId, pushNotificationConfig: {...}}`` ⇄ the flattened 1.0 object (whats-new-v1.md,
    Push Notification Operations: "TaskPushNotificationConfig flattened")."""

    def up(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        inner = PUSH_CONFIG.up(
            obj.get("pushNotificationConfig"), join(path, "pushNotificationConfig")
        )
        return {"taskId": obj["taskId"], **inner} if obj.get("taskId") is not None else inner

    def down(self, value: Any, path: str) -> Any:
        obj = as_object(value, path)
        return {
            "taskId": obj.get("taskId", ""),
            "pushNotificationConfig": PUSH_CONFIG.down(obj, path),
        }


TASK_PUSH_CONFIG = TaskPushConfigConv()
