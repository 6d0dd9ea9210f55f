"""The A2A 1.0 core objects (spec §4.1-§4.3; ``a2a.proto`` is normative).

Python attributes are snake_case; the wire is ProtoJSON (see :mod:`._base`).
"""

from __future__ import annotations

import json
import operator
import os
import time
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import Field, PrivateAttr, model_validator

from ._base import A2AModel, Base64Bytes, Struct, Timestamp, now, repeated, trusted

T = TypeVar("T")
_E = TypeVar("_E", bound="ProtoEnum")


def new_id() -> str:
    """A time-ordered UUID (version 7, RFC 9562 §5.7) as text: 48 bits of Unix time in
    milliseconds, then 74 random bits.

    Why not version 4: ids made one after another sort together, so a SQL store adds a new
    task's rows (its key, its events, its history) next to the previous task's, on the pages
    the last commit already wrote, instead of on a random page of every index; on SQLite that
    halved the pages each SendMessage writes (issue #19). The time in the id is the task's
    creation time, which its status timestamp tells anyway.
    """
    global _MS_PREFIX
    ms = time.time_ns() // 1_000_000
    known, prefix = _MS_PREFIX
    if ms != known:  # the text of the time and the version digit, once per millisecond
        t = ms.to_bytes(6, "big").hex()
        prefix = f"{t[:8]}-{t[8:]}-7"
        _MS_PREFIX = (ms, prefix)  # (one tuple: a thread reads both or neither)
    # 80 random bits, as hex; 6 are replaced: the version nibble (the "7" of the prefix) and
    # the variant's two top bits of the fourth group (RFC 9562 §4.1: 10xx, so 8, 9, a or b).
    r = os.urandom(10).hex()
    return f"{prefix}{r[1:4]}-{_VARIANT[r[4]]}{r[5:8]}-{r[8:]}"


#: The last millisecond :func:`new_id` saw, and the start of its ids (an id's time part was
#: formatted anew for each of a request's three ids: issue #36).
_MS_PREFIX = (-1, "")
#: A hex digit with its top two bits set to the RFC 9562 variant ``10``.
_VARIANT = dict(zip("0123456789abcdef", "89ab" * 4, strict=True))


class ProtoEnum(str, Enum):
    """A proto enum: its JSON form is the value name; integers are accepted on input."""

    # ``value`` as C code (a property over ``attrgetter``) instead of Enum's Python descriptor:
    # the serializer reads it for every enum it writes (7 times per SendMessage), and a Python
    # frame each cost ~0.25 us of a ~1 us serialisation (issue #19). Same value, read-only.
    # (Hidden from type checkers, which would take it for a member.)
    if not TYPE_CHECKING:
        value = property(operator.attrgetter("_value_"))

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            members = list(cls)
            if 0 <= value < len(members):
                return members[value]
        return None

    def __str__(self) -> str:
        return str(self.value)


class TaskState(ProtoEnum):
    """The task lifecycle states (spec §4.1.3)."""

    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        return self in INTERRUPTED_STATES


#: No transition leaves these states (spec §4.1.3).
TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
#: The task waits for the client; a stream closes here (spec §3.1.2).
INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
#: Where a blocking SendMessage returns and a stream ends.
FINAL_STATES = TERMINAL_STATES | INTERRUPTED_STATES
ACTIVE_STATES = frozenset({TaskState.SUBMITTED, TaskState.WORKING})


class Role(ProtoEnum):
    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


class _ClassOrInstance(Generic[T]):
    """``Part.text("hi")`` builds a part; ``part.text`` reads the field.

    A non-data descriptor: the instance's own field value (in ``__dict__``) wins on instances,
    the factory answers on the class.
    """

    def __init__(self, name: str, factory: Callable[..., T]) -> None:
        self.name = name
        self.factory = factory

    def __get__(self, obj: Any, cls: Any) -> Any:
        if obj is None:
            return self.factory
        return obj.__dict__.get(self.name)


#: The members of the proto ``Part``'s ``content`` oneof.
_CONTENT = ("text", "raw", "url", "data")


class Part(A2AModel):
    """One piece of content: exactly one of ``text``, ``raw``, ``url`` or ``data`` (spec §4.1.6).

    Build one with ``Part.text("hi")``, ``Part.data({...})``, ``Part.raw(b"...",
    media_type=...)`` or ``Part.url("https://...")`` (also ``Part.from_text`` etc.).
    """

    text: str | None = None
    raw: Base64Bytes | None = None
    url: str | None = None
    data: Any = None
    metadata: Struct | None = None
    filename: str | None = None
    media_type: str | None = None

    # A "before" model validator, not "after": pydantic runs an "after" one again on every Part
    # *instance* a Message or Artifact is validated with (it wraps the model, instances
    # included), so a streamed chunk's part was checked twice (issue #36). A "before" one runs
    # inside the model's own validation, once per part built from data. It reads the input: the
    # four names are their own camelCase aliases, and no field's validation turns a value into
    # None or back, so "not None" here is "not None" in the fields.
    @model_validator(mode="before")
    @classmethod
    def _one_content(cls, data: Any) -> Any:
        # (a dict first: isinstance against the Mapping ABC alone is a Python call; and the
        # four lookups inline, without a comprehension's frame, for the common valid part)
        if isinstance(data, (dict, Mapping)) and (
            (data.get("text") is not None)
            + (data.get("raw") is not None)
            + (data.get("url") is not None)
            + (data.get("data") is not None)
            != 1
        ):
            present = [name for name in _CONTENT if data.get(name) is not None]
            found = ", ".join(present) if present else "none"
            raise ValueError(
                "a part must have exactly one of text, raw, url or data (found: " + found + ")"
            )
        return data  # (anything else is not a part: the model's validation refuses it)

    # -- factories (typed names; the short names are attached below the class) --
    @classmethod
    def from_text(cls, text: str, *, media_type: str | None = None, **kw: Any) -> Part:
        return cls(text=text, media_type=media_type, **kw)

    @classmethod
    def from_data(cls, data: Any, *, media_type: str | None = None, **kw: Any) -> Part:
        return cls(data=data, media_type=media_type, **kw)

    @classmethod
    def from_raw(
        cls,
        raw: bytes,
        *,
        media_type: str | None = None,
        filename: str | None = None,
        **kw: Any,
    ) -> Part:
        return cls(raw=raw, media_type=media_type, filename=filename, **kw)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        media_type: str | None = None,
        filename: str | None = None,
        **kw: Any,
    ) -> Part:
        return cls(url=url, media_type=media_type, filename=filename, **kw)

    # -- predicates --
    @property
    def is_text(self) -> bool:
        return self.__dict__.get("text") is not None

    @property
    def is_raw(self) -> bool:
        return self.__dict__.get("raw") is not None

    @property
    def is_url(self) -> bool:
        return self.__dict__.get("url") is not None

    @property
    def is_data(self) -> bool:
        return self.__dict__.get("data") is not None

    @property
    def is_file(self) -> bool:
        """A file part: raw bytes or a URL (0.3's ``FilePart``)."""
        return self.is_raw or self.is_url

    @property
    def content(self) -> Any:
        d = self.__dict__
        for name in ("text", "raw", "url", "data"):
            if d.get(name) is not None:
                return d[name]
        return None

    def decoded_bytes(self) -> bytes:
        """The bytes of the part: raw content, text as UTF-8, data as JSON."""
        d = self.__dict__
        if d.get("raw") is not None:
            return bytes(d["raw"])
        if d.get("text") is not None:
            return str(d["text"]).encode()
        if d.get("data") is not None:
            return json.dumps(d["data"]).encode()
        raise ValueError("a URL part has no inline bytes; fetch its url")


Part.text = _ClassOrInstance("text", Part.from_text)  # type: ignore[assignment]
Part.data = _ClassOrInstance("data", Part.from_data)
Part.raw = _ClassOrInstance("raw", Part.from_raw)  # type: ignore[assignment]
Part.url = _ClassOrInstance("url", Part.from_url)  # type: ignore[assignment]

PartLike = str | Part | dict[str, Any]


def to_parts(content: PartLike | Iterable[PartLike]) -> list[Part]:
    """Accept a string, a part, or a list of either; return parts."""
    if isinstance(content, (str, Part, dict)):
        content = [content]
    parts: list[Part] = []
    for item in content:
        if isinstance(item, Part):
            parts.append(item)
        elif type(item) is str:  # nothing to check: built without validation
            parts.append(trusted(Part, text=item))
        elif isinstance(item, str):  # a subclass: validated, so the part holds a plain str
            parts.append(Part(text=item))
        else:
            parts.append(Part.from_dict(item))
    return parts


def _join_text(parts: list[Part]) -> str:
    return "\n".join(p.__dict__["text"] for p in parts if p.__dict__.get("text") is not None)


class Message(A2AModel):
    """One turn of communication between a client and an agent (spec §4.1.4)."""

    message_id: str = Field(min_length=1)
    context_id: str | None = None
    task_id: str | None = None
    role: Role
    parts: list[Part] = Field(min_length=1)
    metadata: Struct | None = None
    extensions: list[str] = repeated()
    reference_task_ids: list[str] = repeated()

    @classmethod
    def user(cls, content: PartLike | Iterable[PartLike], **kw: Any) -> Message:
        """A user message from a string, parts, or a list of either."""
        kw.setdefault("message_id", new_id())
        return cls(role=Role.USER, parts=to_parts(content), **kw)

    @classmethod
    def agent(cls, content: PartLike | Iterable[PartLike], **kw: Any) -> Message:
        """An agent message from a string, parts, or a list of either."""
        kw.setdefault("message_id", new_id())
        return cls(role=Role.AGENT, parts=to_parts(content), **kw)

    @property
    def text(self) -> str:
        """The text parts, joined by newlines."""
        return _join_text(self.parts)


class Artifact(A2AModel):
    """An output of a task (spec §4.1.7)."""

    artifact_id: str = Field(min_length=1)
    name: str | None = None
    description: str | None = None
    parts: list[Part] = Field(min_length=1)
    metadata: Struct | None = None
    extensions: list[str] = repeated()

    @classmethod
    def of(
        cls,
        content: PartLike | Iterable[PartLike],
        *,
        name: str | None = None,
        artifact_id: str | None = None,
        **kw: Any,
    ) -> Artifact:
        """An artifact from a string, parts, or a list of either."""
        return cls(artifact_id=artifact_id or new_id(), name=name, parts=to_parts(content), **kw)

    @property
    def text(self) -> str:
        return _join_text(self.parts)


class TaskStatus(A2AModel):
    state: TaskState
    message: Message | None = None
    timestamp: Timestamp | None = None


class Task(A2AModel):
    """The unit of work (spec §4.1.1)."""

    id: str = Field(min_length=1)
    context_id: str | None = None
    status: TaskStatus
    artifacts: list[Artifact] = repeated()
    history: list[Message] = repeated()
    metadata: Struct | None = None

    @property
    def state(self) -> TaskState:
        return self.status.state

    @property
    def is_terminal(self) -> bool:
        return self.status.state in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        return self.status.state in INTERRUPTED_STATES

    @property
    def is_final(self) -> bool:
        """Terminal or interrupted: a blocking send returns, a stream closes."""
        return self.status.state in FINAL_STATES

    @property
    def text(self) -> str:
        """Text of every artifact, joined; handy for simple agents."""
        return "\n".join(a.text for a in self.artifacts if a.text)


class TaskStatusUpdateEvent(A2AModel):
    task_id: str = Field(min_length=1)
    context_id: str = Field(min_length=1)
    status: TaskStatus
    metadata: Struct | None = None


class TaskArtifactUpdateEvent(A2AModel):
    task_id: str = Field(min_length=1)
    context_id: str = Field(min_length=1)
    artifact: Artifact
    append: bool | None = None
    last_chunk: bool | None = None
    metadata: Struct | None = None


class AuthenticationInfo(A2AModel):
    scheme: str = Field(min_length=1)
    credentials: str | None = None


class TaskPushNotificationConfig(A2AModel):
    """A webhook registered for a task (spec §4.3.1)."""

    tenant: str | None = None
    id: str | None = None
    task_id: str | None = None
    url: str = Field(min_length=1)
    token: str | None = None
    authentication: AuthenticationInfo | None = None
    #: The A2A version the config was registered with ("0.3" or None for 1.x): a 0.3
    #: registration gets 0.3 notifications (0.3 §9.5). Not part of the wire object; storage
    #: keeps it with the config.
    _protocol_version: str | None = PrivateAttr(default=None)

    @property
    def protocol_version(self) -> str | None:
        return self._protocol_version

    def with_protocol_version(self, version: str | None) -> TaskPushNotificationConfig:
        """A copy remembering the version it was registered with."""
        copy = self.model_copy()
        copy._protocol_version = version
        return copy


def status_now(state: TaskState, message: Message | None = None) -> TaskStatus:
    return TaskStatus(state=state, message=message, timestamp=now())


def trusted_status(state: TaskState, message: Message | None = None) -> TaskStatus:
    """:func:`status_now` for the server's own states (``state`` a member, ``message`` a model
    or None): built without validation, see :func:`~simple_a2a.protocol._base.trusted`."""
    return trusted(TaskStatus, state=state, message=message, timestamp=now())
