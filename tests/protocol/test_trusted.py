"""``trusted``: the server's own objects built without validation are the validated objects."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from simple_a2a.protocol._base import format_timestamp, now, replaced, trusted
from simple_a2a.protocol.models import (
    Artifact,
    Message,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    trusted_status,
)
from simple_a2a.protocol.requests import SendMessageResponse, StreamResponse

TS = datetime(2025, 3, 4, 5, 6, 7, 891234, tzinfo=timezone.utc)
MSG = Message.agent("hi", task_id="t", context_id="c")
ART = Artifact.of([Part.text("a"), Part.data({"k": [1, None]})], artifact_id="a1", name="n")
STATUS = TaskStatus(state=TaskState.WORKING, message=MSG, timestamp=TS)
TASK = Task(id="t", context_id="c", status=STATUS, history=[MSG], metadata={"m": 1})

CASES: list[tuple[type[Any], dict[str, Any]]] = [
    (TaskStatus, {"state": TaskState.SUBMITTED, "timestamp": TS}),
    (TaskStatus, {"state": TaskState.COMPLETED, "message": MSG, "timestamp": TS}),
    (TaskStatus, {"state": TaskState.FAILED, "message": None, "timestamp": TS}),
    (TaskStatusUpdateEvent, {"task_id": "t", "context_id": "c", "status": STATUS}),
    (
        TaskArtifactUpdateEvent,
        {"task_id": "t", "context_id": "c", "artifact": ART, "append": None, "last_chunk": None},
    ),
    (
        TaskArtifactUpdateEvent,
        {"task_id": "t", "context_id": "c", "artifact": ART, "append": True, "last_chunk": True},
    ),
    (Task, {"id": "t", "context_id": "c", "status": STATUS, "history": [MSG], "metadata": None}),
    (Task, {"id": "t", "context_id": "c", "status": STATUS}),
    (Task, {"id": "t", "context_id": "c", "status": STATUS, "artifacts": [ART], "metadata": {}}),
    (StreamResponse, {"task": TASK}),
    (StreamResponse, {"message": MSG}),
    (
        StreamResponse,
        {"status_update": TaskStatusUpdateEvent(task_id="t", context_id="c", status=STATUS)},
    ),
    (
        StreamResponse,
        {"artifact_update": TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=ART)},
    ),
    (SendMessageResponse, {"task": TASK}),
    (SendMessageResponse, {"message": MSG}),
]


@pytest.mark.parametrize(("cls", "fields"), CASES)
def test_trusted_is_the_validated_object(cls: type[Any], fields: dict[str, Any]) -> None:
    fast = trusted(cls, **fields)
    slow = cls(**fields)
    assert type(fast) is cls
    assert fast.to_json() == slow.to_json()  # byte for byte
    assert fast.to_dict() == slow.to_dict()
    assert list(fast.__dict__) == list(slow.__dict__)  # same fields, same order
    assert fast.__dict__ == slow.__dict__
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert fast.model_copy(update={}) == slow
    assert cls.model_validate_json(fast.to_json()) == cls.model_validate_json(slow.to_json())


REPLACEMENTS: list[tuple[Any, dict[str, Any]]] = [
    (TASK, {"status": TaskStatus(state=TaskState.COMPLETED, timestamp=TS), "history": []}),
    (TASK, {"artifacts": [ART]}),
    (Task(id="t", context_id="c", status=STATUS), {"metadata": {"k": 1}}),  # an unset field
    (MSG, {"context_id": "c2", "task_id": None}),
    (ART, {"artifact_id": "a2"}),
]


@pytest.mark.parametrize(("obj", "fields"), REPLACEMENTS)
def test_replaced_is_model_copy_with_update(obj: Any, fields: dict[str, Any]) -> None:
    fast = replaced(obj, **fields)
    slow = obj.model_copy(update=fields)
    assert type(fast) is type(slow)
    assert fast.to_json() == slow.to_json()
    assert list(fast.__dict__) == list(slow.__dict__)
    assert fast.__dict__ == slow.__dict__
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert fast == slow and repr(fast) == repr(slow)
    assert fast.__dict__ is not obj.__dict__ and fast.model_fields_set is not obj.model_fields_set


def test_trusted_defaults_are_fresh() -> None:
    one = trusted(Task, id="t", context_id="c", status=STATUS)
    two = trusted(Task, id="t", context_id="c", status=STATUS)
    one.history.append(MSG)
    assert two.history == [] and one.artifacts is not two.artifacts


def test_trusted_status_matches_status_now() -> None:
    fast = trusted_status(TaskState.WORKING, MSG)
    slow = TaskStatus(state=TaskState.WORKING, message=MSG, timestamp=fast.timestamp)
    assert fast.to_json() == slow.to_json()
    assert fast.timestamp is not None and fast.timestamp.tzinfo is timezone.utc


@pytest.mark.parametrize(
    "value",
    [
        TS,
        TS.replace(microsecond=0),
        TS.replace(microsecond=999_999),
        TS.replace(tzinfo=None),
        TS.astimezone(timezone(timedelta(hours=-5, minutes=-30))),
        now(),
    ],
)
def test_format_timestamp(value: datetime) -> None:
    utc = value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value
    utc = utc.astimezone(timezone.utc)
    expected = utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    assert format_timestamp(value) == expected


def test_new_id_is_a_time_ordered_uuid7() -> None:
    """RFC 9562 §5.7: version 7, the RFC variant, the Unix time in ms in the first 48 bits;
    ids of different milliseconds sort by time (what keeps a SQL store's inserts together)."""
    import time
    import uuid

    from simple_a2a.protocol.models import new_id

    before = time.time_ns() // 1_000_000
    ids = [new_id() for _ in range(2000)]
    after = time.time_ns() // 1_000_000
    assert len(set(ids)) == 2000
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 7 and parsed.variant == uuid.RFC_4122
        assert before <= parsed.int >> 80 <= after
    # every random digit varies: the variant's four digits all occur, as does each hex digit
    # where the version and variant leave all four bits random
    assert {text[19] for text in ids} == set("89ab")
    assert all({text[i] for text in ids} == set("0123456789abcdef") for i in (15, 20, 35))
    time.sleep(0.002)
    later = new_id()
    assert all(later > text for text in ids)


def _subclasses(cls: type[Any]) -> list[type[Any]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_no_protocol_model_defines_new() -> None:
    """``trusted`` and ``replaced`` call ``object.__new__`` directly (a speed-up): right only
    while no model has a ``__new__`` of its own."""
    import simple_a2a.protocol  # noqa: F401  (every model defined)
    from simple_a2a.protocol._base import A2AModel

    models = _subclasses(A2AModel)
    assert len(models) > 30
    assert [m for m in models if m.__new__ is not object.__new__] == []


def test_no_protocol_model_redefines_the_slots_trusted_sets() -> None:
    """``trusted`` and ``replaced`` set ``__dict__`` and pydantic's three slots through
    ``BaseModel``'s own descriptors (a speed-up): right only while no model (or a base between
    it and ``BaseModel``) defines an attribute of those names."""
    from pydantic import BaseModel

    import simple_a2a.protocol  # noqa: F401  (every model defined)
    from simple_a2a.protocol._base import A2AModel

    names = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
    models = [A2AModel, *_subclasses(A2AModel)]
    assert len(models) > 30
    for model in models:
        for name in names:
            owner = next(base for base in model.__mro__ if name in base.__dict__)
            assert owner is BaseModel, (model, name, owner)


def test_text_parts_built_without_validation_are_the_validated_parts() -> None:
    """``to_parts`` builds a plain string's part with ``trusted`` (an executor's text answer);
    a ``str`` subclass still goes through validation."""
    from simple_a2a.protocol.models import to_parts

    fast, checked = to_parts("hi")[0], Part(text="hi")
    assert fast == checked
    assert list(fast.__dict__) == list(checked.__dict__)
    assert fast.model_fields_set == checked.model_fields_set
    assert fast.to_json() == checked.to_json()

    class Text(str):
        pass

    assert type(to_parts(Text("x"))[0].text) is str  # as validation makes it
