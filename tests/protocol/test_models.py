"""ProtoJSON behaviour of every model, and the convenience API (spec §4, §5.5-§5.7)."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from simple_a2a.protocol import (
    ACTIVE_STATES,
    FINAL_STATES,
    INTERRUPTED_STATES,
    TERMINAL_STATES,
    AgentCard,
    Artifact,
    InvalidParamsError,
    JSONParseError,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from simple_a2a.protocol._base import A2AModel, format_timestamp
from tests.protocol._factories import MODELS, ONEOFS, full, strategy_for, walk, wire_name

CLASSES = sorted(MODELS.values(), key=lambda c: c.__name__)
#: examples per model class; raise it (A2A_EXAMPLES=500) for a thorough run
EXAMPLES = int(os.environ.get("A2A_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _msg(**kw: Any) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}], **kw}


def _errors(exc: pytest.ExceptionInfo[InvalidParamsError]) -> dict[str, str]:
    return {v["field"]: v["description"] for v in exc.value.field_violations}


# ------------------------------------------------------------------ round trips (hypothesis)


def _no_nulls_no_empty_repeated(m: A2AModel, d: dict[str, Any]) -> None:
    for name, info in type(m).model_fields.items():
        key = wire_name(info, name)
        if key in d:
            assert d[key] is not None, key
            if getattr(info, "exclude_if", None) is not None:
                assert d[key] not in ([], {}), f"empty repeated field {key} written"
    assert not any("_" in k for k in d), d


def _enum_numbers(m: A2AModel, d: dict[str, Any]) -> None:
    for name, info in type(m).model_fields.items():
        value = m.__dict__.get(name)
        if isinstance(value, Enum):
            d[wire_name(info, name)] = list(type(value)).index(value)


unknown_fields = st.dictionaries(
    st.from_regex(r"zz[A-Za-z]{1,6}", fullmatch=True),
    st.integers() | st.text(max_size=4) | st.lists(st.integers(), max_size=2),
    min_size=1,
    max_size=2,
)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_wire_properties(cls: type[A2AModel]) -> None:
    """For generated instances of every model:

    - spec §5.5: ``from_dict(to_dict(m)) == m`` and ``from_json(to_json(m)) == m``; the output
      is camelCase, with no null and no empty repeated field (§5.7);
    - the proto (snake_case) names are accepted on input;
    - spec §5.7: unrecognized fields, at any depth, are ignored;
    - ProtoJSON: an enum's number is accepted in place of its name.
    """

    @SETTINGS
    @given(model=strategy_for(cls), extra=unknown_fields)
    def check(model: A2AModel, extra: dict[str, Any]) -> None:
        wire = model.to_dict()
        walk(model, wire, _no_nulls_no_empty_repeated)
        assert cls.from_dict(wire) == model
        assert cls.from_json(model.to_json()) == model

        snake = model.model_dump(mode="json", by_alias=False, exclude_none=True)
        assert cls.from_dict(snake) == model

        noisy = model.to_dict()
        walk(model, noisy, lambda _m, d: d.update(extra))
        assert cls.from_dict(noisy) == model

        numbered = model.to_dict()
        walk(model, numbered, _enum_numbers)
        assert cls.from_dict(numbered) == model

    check()


def test_enum_number_out_of_range_and_bool_rejected() -> None:
    """An unknown enum number, or a boolean, is not a role: the error names the field."""
    for bad in (9, True, -1, 1.5):
        with pytest.raises(InvalidParamsError) as exc:
            Message.from_dict(_msg(role=bad))
        assert "role" in _errors(exc)
    assert Message.from_dict(_msg(role=2)).role is Role.AGENT


# ------------------------------------------------------------------ deterministic full objects


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_field_set_round_trips(cls: type[A2AModel]) -> None:
    """Every field set at once (every oneof member in turn) survives the wire."""
    for member in ONEOFS.get(cls, (None,)):
        model = full(cls, member)
        assert cls.from_json(model.to_json()) == model
        assert cls.from_dict(model.to_dict()) == model


def test_wire_names_are_camel_case() -> None:
    """Spec §5.5: ``message_id`` is written ``messageId`` etc."""
    wire = full(SendMessageRequest).to_dict()
    assert set(wire["message"]) == {
        "messageId",
        "contextId",
        "taskId",
        "role",
        "parts",
        "metadata",
        "extensions",
        "referenceTaskIds",
    }
    assert set(wire["configuration"]) == {
        "acceptedOutputModes",
        "taskPushNotificationConfig",
        "historyLength",
        "returnImmediately",
    }


def test_none_and_empty_repeated_omitted() -> None:
    """Spec §5.7: unset optional fields and empty repeated fields are not written."""
    msg = Message.user("hi", message_id="m")
    assert msg.to_dict() == {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    task = Task(id="t", status=TaskStatus(state=TaskState.WORKING))
    assert task.to_dict() == {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}
    assert b"null" not in task.to_json()


# ------------------------------------------------------------------ Part oneof


@pytest.mark.parametrize(
    "part",
    [
        {},
        {"metadata": {"a": 1}, "mediaType": "text/plain"},
        {"text": "a", "url": "https://x"},
        {"text": "a", "data": {"k": 1}},
        {"raw": "AAE=", "url": "https://x"},
        {"text": "a", "raw": "AAE=", "url": "u", "data": 1},
    ],
)
def test_part_oneof(part: dict[str, Any]) -> None:
    """Spec §4.1.6: a part has exactly one of text, raw, url, data; zero or two is an invalid
    params error naming the part (``message.parts[0]``)."""
    with pytest.raises(InvalidParamsError) as exc:
        SendMessageRequest.from_dict({"message": _msg(parts=[part])}, field_prefix="params")
    errors = _errors(exc)
    assert list(errors) == ["params.message.parts[0]"]
    assert "exactly one of text, raw, url or data" in errors["params.message.parts[0]"]


@pytest.mark.parametrize(
    "part",
    [
        {},
        {"text": "a", "url": "https://x"},
        {"text": None},
        {"raw": "AAE=", "data": None, "url": "u"},
    ],
)
def test_part_oneof_on_every_way_in(part: dict[str, Any]) -> None:
    """The oneof is checked however a part is made: JSON text, a dict, keyword arguments, nested
    in an artifact given as data; a null member is absent (ProtoJSON)."""
    with pytest.raises(InvalidParamsError, match="exactly one of text, raw, url or data"):
        Artifact.from_json(json.dumps({"artifactId": "a", "parts": [part]}))
    with pytest.raises(InvalidParamsError, match="exactly one of text, raw, url or data"):
        Artifact.from_dict({"artifactId": "a", "parts": [part]})
    with pytest.raises(ValidationError, match="exactly one of text, raw, url or data"):
        Part(**part)
    with pytest.raises(ValidationError, match="exactly one of text, raw, url or data"):
        Message(message_id="m", role=Role.USER, parts=[part])


def test_part_instance_is_not_checked_again_by_its_message_or_artifact() -> None:
    """A part is checked once, when it is made: a Message or Artifact built with Part instances
    runs none of the part's own validation again (it ran twice per streamed chunk, #36)."""
    parts = [Part.text("a"), Part.data({"k": 1})]
    called: list[str] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)

    sys.setprofile(watch)
    try:
        artifact = Artifact(artifact_id="a", parts=parts)
        message = Message(message_id="m", role=Role.AGENT, parts=parts)
    finally:
        sys.setprofile(None)
    assert "_one_content" not in called
    assert artifact.parts == parts and message.parts == parts


@pytest.mark.parametrize("content", [{"text": ""}, {"data": False}, {"data": 0}, {"data": []}])
def test_part_falsy_content_is_content(content: dict[str, Any]) -> None:
    """An empty string or a falsy JSON value is still the part's content."""
    part = Part.from_dict(content)
    assert part.to_dict() == content


# ------------------------------------------------------------------ required fields and types


def test_missing_parts_named() -> None:
    """Spec §9.5 example: a message without parts is reported as ``message.parts``."""
    with pytest.raises(InvalidParamsError) as exc:
        SendMessageRequest.from_dict({"message": {"messageId": "m", "role": "ROLE_USER"}})
    assert "message.parts" in _errors(exc)
    assert "message.parts" in str(exc.value)
    detail = exc.value.to_jsonrpc()["data"][1]
    assert detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert detail["fieldViolations"][0]["field"] == "message.parts"


def test_empty_parts_rejected() -> None:
    """Spec §5.7: a REQUIRED array must contain at least one element."""
    with pytest.raises(InvalidParamsError) as exc:
        Message.from_dict(_msg(parts=[]), field_prefix="message")
    assert "message.parts" in _errors(exc)


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"parts": "hello"}, "message.parts"),
        ({"parts": ["hello"]}, "message.parts[0]"),
        ({"parts": [{"text": 5}]}, "message.parts[0].text"),
        ({"role": 1.5}, "message.role"),
        ({"role": "user"}, "message.role"),
        ({"role": None}, "message.role"),
        ({"messageId": 7}, "message.messageId"),
        ({"messageId": ""}, "message.messageId"),
        ({"metadata": "x"}, "message.metadata"),
        ({"extensions": "x"}, "message.extensions"),
        ({"referenceTaskIds": [1]}, "message.referenceTaskIds[0]"),
        ({"parts": [{"raw": "not base64!"}]}, "message.parts[0].raw"),
    ],
)
def test_bad_types_name_the_field(patch: dict[str, Any], field: str) -> None:
    """Spec §3.3.2 validation errors: a wrong type is an InvalidParamsError naming the field
    (never a bare traceback); the message is safe to show."""
    with pytest.raises(InvalidParamsError) as exc:
        Message.from_dict(_msg(**patch), field_prefix="message")
    assert field in _errors(exc), _errors(exc)
    assert field in exc.value.message
    assert "Traceback" not in exc.value.message


@pytest.mark.parametrize("bad", [None, [], "x", 3, [{"messageId": "m"}]])
def test_not_an_object(bad: Any) -> None:
    """A params value that is not an object is an invalid params error, not a crash."""
    with pytest.raises(InvalidParamsError):
        SendMessageRequest.from_dict(bad)


def test_nested_path_in_stream_response() -> None:
    """Errors deep inside a oneof member name the full path."""
    with pytest.raises(InvalidParamsError) as exc:
        StreamResponse.from_dict(
            {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "DONE"}}}
        )
    assert "statusUpdate.status.state" in _errors(exc)


def test_snake_case_errors_name_the_snake_field() -> None:
    """A client that sent snake_case sees its own field name in the error."""
    with pytest.raises(InvalidParamsError) as exc:
        Message.from_dict({"message_id": 5, "role": "ROLE_USER", "parts": [{"text": "x"}]})
    assert "message_id" in _errors(exc)


def test_from_json_invalid_json_is_parse_error() -> None:
    """Spec §9.5: malformed JSON is -32700 JSONParseError, not invalid params."""
    with pytest.raises(JSONParseError):
        Message.from_json(b'{"messageId": "m", ')
    with pytest.raises(InvalidParamsError):
        Message.from_json(b'{"messageId": "m"}')


# ------------------------------------------------------------------ bytes and timestamps


@given(st.binary(max_size=64))
@SETTINGS
def test_raw_base64_standard_and_url_safe(raw: bytes) -> None:
    """ProtoJSON bytes: written standard base64 with padding; read standard or URL-safe,
    padded or not."""
    part = Part.raw(raw, media_type="application/octet-stream")
    wire = part.to_dict()["raw"]
    assert wire == base64.b64encode(raw).decode()
    for text in (
        wire,
        wire.rstrip("="),
        base64.urlsafe_b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
    ):
        assert Part.from_dict({"raw": text}).decoded_bytes() == raw


def test_raw_rejects_garbage() -> None:
    """Not base64 at all: an error naming ``raw``."""
    for bad in ("!!!!", "a", "ab$d", "+/-_", "a-b$cd", "YQ-_!!", "YWJj\x00"):
        with pytest.raises(InvalidParamsError) as exc:
            Part.from_dict({"raw": bad})
        assert "raw" in _errors(exc), bad


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 1, 0, 0, 1),
        max_value=datetime(9999, 12, 30),
        timezones=st.sampled_from(
            [timezone.utc, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
        ),
    )
)
@SETTINGS
def test_timestamp_format(moment: datetime) -> None:
    """Spec §5.6.1: ``YYYY-MM-DDTHH:mm:ss.sssZ``, always UTC, millisecond precision; any offset
    on input is normalised to UTC."""
    status = TaskStatus(state=TaskState.WORKING, timestamp=moment)
    text = status.to_dict()["timestamp"]
    assert TIMESTAMP.match(text), text
    utc = moment.astimezone(timezone.utc)
    assert text == utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    # read back: the same instant, to the millisecond
    back = TaskStatus.from_dict({"state": "TASK_STATE_WORKING", "timestamp": text}).timestamp
    assert back is not None and back.tzinfo is not None
    assert abs(back - moment) < timedelta(milliseconds=1)
    # an offset on input is accepted and means the same instant
    offset = moment.isoformat()
    assert TaskStatus.from_dict({"state": 2, "timestamp": offset}).timestamp == moment


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-03-15T10:15:00Z", "2024-03-15T10:15:00.000Z"),
        ("2024-03-15T10:15:00.5Z", "2024-03-15T10:15:00.500Z"),
        ("2025-04-17T17:47:09.680794Z", "2025-04-17T17:47:09.680Z"),
        ("2024-03-15T12:15:00+02:00", "2024-03-15T10:15:00.000Z"),
        ("2024-03-15T10:15:00.123z", "2024-03-15T10:15:00.123Z"),
        ("2024-03-15T10:15:00", "2024-03-15T10:15:00.000Z"),
        ("2024-03-15T10:15:00.123456789Z", "2024-03-15T10:15:00.123Z"),
        ("2024-03-15T10:15:00.12Z", "2024-03-15T10:15:00.120Z"),
        ("2024-03-15T10:15:00.9999Z", "2024-03-15T10:15:00.999Z"),
        ("2024-03-15T05:45:00-0430", "2024-03-15T10:15:00.000Z"),
        ("2024-03-15 10:15:00Z", "2024-03-15T10:15:00.000Z"),
    ],
)
def test_timestamp_inputs(text: str, expected: str) -> None:
    """Spec §5.6.1: ISO 8601 inputs (with or without fraction, ``Z`` or offset) come out in the
    canonical form."""
    req = ListTasksRequest.from_dict({"statusTimestampAfter": text})
    assert req.to_dict() == {"statusTimestampAfter": expected}


@pytest.mark.parametrize(
    "bad", ["yesterday", "2024-13-01T00:00:00Z", "2024-03-15", "2024-03-15T25:00:00Z", "", "1Z"]
)
def test_timestamp_garbage_named(bad: str) -> None:
    """A string that is not an ISO 8601 date-time is an error naming the field."""
    with pytest.raises(InvalidParamsError) as exc:
        TaskStatus.from_dict({"state": 1, "timestamp": bad}, field_prefix="status")
    assert "status.timestamp" in _errors(exc)


def test_format_timestamp_naive_is_utc() -> None:
    assert format_timestamp(datetime(2025, 1, 2, 3, 4, 5, 6789)) == "2025-01-02T03:04:05.006Z"


# ------------------------------------------------------------------ convenience API


def test_message_factories() -> None:
    """Message.user/agent from a string, parts or a mixed list; ``.text`` joins text parts."""
    msg = Message.user("hi")
    assert msg.role is Role.USER and msg.text == "hi" and msg.message_id
    assert Message.user("a").message_id != Message.user("a").message_id
    mixed = Message.agent(["one", Part.data({"k": 1}), {"text": "two"}], context_id="c")
    assert mixed.role is Role.AGENT and mixed.context_id == "c"
    assert mixed.text == "one\ntwo"
    assert [p.is_data for p in mixed.parts] == [False, True, False]
    assert Message.user(Part.url("https://x")).text == ""


def test_part_factories_and_predicates() -> None:
    """Part.text/data/raw/url build parts (the Ruby seed's factories); the predicates tell them
    apart; on an instance ``part.text`` is the field."""
    t, d, r, u = (
        Part.text("hello"),
        Part.data({"a": [1]}),
        Part.raw(b"\x00\x01", media_type="application/octet-stream", filename="f.bin"),
        Part.url("https://example.com/f.png", media_type="image/png"),
    )
    assert t.text == "hello" and d.data == {"a": [1]} and r.raw == b"\x00\x01"
    assert u.url == "https://example.com/f.png" and u.media_type == "image/png"
    assert [(p.is_text, p.is_data, p.is_raw, p.is_url, p.is_file) for p in (t, d, r, u)] == [
        (True, False, False, False, False),
        (False, True, False, False, False),
        (False, False, True, False, True),
        (False, False, False, True, True),
    ]
    assert [p.content for p in (t, d, r, u)] == ["hello", {"a": [1]}, b"\x00\x01", u.url]
    assert d.text is None and t.data is None
    assert r.to_dict() == {
        "raw": "AAE=",
        "mediaType": "application/octet-stream",
        "filename": "f.bin",
    }
    assert Part.from_text("x") == Part.text("x") == Part(text="x")


def test_decoded_bytes() -> None:
    """decoded_bytes: the raw bytes, text as UTF-8, data as JSON; a URL part has none."""
    assert Part.raw(b"\xff").decoded_bytes() == b"\xff"
    assert Part.text("é").decoded_bytes() == "é".encode()
    assert Part.data({"a": 1}).decoded_bytes() == b'{"a": 1}'
    with pytest.raises(ValueError):
        Part.url("https://x").decoded_bytes()


def test_artifact_of() -> None:
    """Artifact.of builds an artifact with a fresh id from text or parts."""
    a = Artifact.of("result", name="r")
    assert a.artifact_id and a.name == "r" and a.text == "result"
    b = Artifact.of([Part.text("x"), Part.data(1)], artifact_id="fixed")
    assert b.artifact_id == "fixed" and len(b.parts) == 2
    assert Artifact.of("x").artifact_id != Artifact.of("x").artifact_id


def _section_states(word: str) -> set[TaskState]:
    """The states the proto's TaskState comments call ``terminal`` / ``interrupted``."""
    from tests.protocol._spec import PROTO_PATH

    text = PROTO_PATH.read_text()
    block = text[text.index("enum TaskState") :]
    block = block[: block.index("}")]
    found: set[TaskState] = set()
    comment = ""
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("//"):
            comment += line
        elif "=" in line:
            if f"{word} state" in comment:
                found.add(TaskState(line.split("=")[0].strip()))
            comment = ""
    return found


def test_state_sets_match_the_spec() -> None:
    """Spec §4.1.3 / a2a.proto TaskState: terminal = completed, failed, canceled, rejected;
    interrupted = input-required, auth-required."""
    assert _section_states("terminal") == TERMINAL_STATES
    assert _section_states("interrupted") == INTERRUPTED_STATES
    assert len(TERMINAL_STATES) == 4 and len(INTERRUPTED_STATES) == 2
    assert FINAL_STATES == TERMINAL_STATES | INTERRUPTED_STATES
    assert {TaskState.SUBMITTED, TaskState.WORKING} == ACTIVE_STATES
    assert not TERMINAL_STATES & INTERRUPTED_STATES
    for state in TaskState:
        assert state.is_terminal is (state in TERMINAL_STATES)
        assert state.is_interrupted is (state in INTERRUPTED_STATES)


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.name)
def test_task_predicates(state: TaskState) -> None:
    task = Task(id="t", status=TaskStatus(state=state))
    assert task.state is state
    assert task.is_terminal is (state in TERMINAL_STATES)
    assert task.is_interrupted is (state in INTERRUPTED_STATES)
    assert task.is_final is (state in FINAL_STATES)


def test_task_text() -> None:
    task = Task(
        id="t",
        status=TaskStatus(state=TaskState.COMPLETED),
        artifacts=[Artifact.of("a"), Artifact.of(Part.data(1)), Artifact.of(["b", "c"])],
    )
    assert task.text == "a\nb\nc"


def test_stream_response_of_and_payload() -> None:
    """StreamResponse.of wraps each event kind in its oneof member (spec §3.2.3)."""
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    events = [
        task,
        Message.agent("hi"),
        TaskStatusUpdateEvent(task_id="t", context_id="c", status=task.status),
        TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=Artifact.of("x")),
    ]
    keys = ["task", "message", "statusUpdate", "artifactUpdate"]
    for event, key in zip(events, keys, strict=True):
        sr = StreamResponse.of(event)
        assert sr.payload is event
        assert list(sr.to_dict()) == [key]


def test_agent_card_helpers() -> None:
    card = AgentCard.from_dict(
        {
            "name": "a",
            "description": "d",
            "version": "1",
            "supportedInterfaces": [
                {"url": "https://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "https://a/rest", "protocolBinding": "http+json"},
            ],
            "capabilities": {
                "streaming": True,
                "extensions": [{"uri": "urn:x", "required": True}, {"uri": "urn:y"}],
            },
        }
    )
    assert card.interface("HTTP+JSON") is not None
    assert card.interface("HTTP+JSON").url == "https://a/rest"  # type: ignore[union-attr]
    assert card.interface("http+json") is card.interface("HTTP+JSON")
    assert card.interface("GRPC") is None
    assert card.supports_streaming and not card.supports_push
    assert card.required_extensions == ["urn:x"]
    # the lenient defaults are written out, so the card we serve is complete
    out = AgentCard(name="n", description="d", version="1").to_dict()
    for key in ("supportedInterfaces", "capabilities", "defaultInputModes", "skills"):
        assert key in out


def test_format_timestamp_remembered_by_instant() -> None:
    """``format_timestamp`` is cached by value: one instant in any zone, naive taken as UTC,
    formats alike, and a cached answer is the computed one."""
    utc = datetime(2025, 1, 2, 3, 4, 5, 6789, tzinfo=timezone.utc)
    plus_two = utc.astimezone(timezone(timedelta(hours=2)))
    expected = "2025-01-02T03:04:05.006Z"
    assert [format_timestamp(d) for d in (utc, plus_two, utc, plus_two)] == [expected] * 4
    assert format_timestamp(utc.replace(tzinfo=None)) == expected
    assert format_timestamp(datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)).endswith(".000Z")


def test_format_timestamp_is_isoformat_in_milliseconds() -> None:
    """The timestamp is put together from its fields (not ``isoformat``, issue #36): the same
    text as ``isoformat(timespec="milliseconds")`` with "Z", for every field's range, the
    four-digit years below 1000, the milliseconds truncated, other zones and naive values."""
    import random

    from simple_a2a.protocol._base import _format_timestamp

    rng = random.Random(36)
    utc = timezone.utc
    values = [
        datetime(1, 1, 1, tzinfo=utc),
        datetime(999, 12, 31, 23, 59, 59, 999_999, tzinfo=utc),
        datetime(1000, 1, 1, 0, 0, 0, 1_000, tzinfo=utc),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=utc),
        datetime(2026, 12, 7, 9, 8, 7, 999, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        datetime(2026, 2, 3, 4, 5, 6, 7_890),  # naive: taken as UTC
    ]
    start = datetime(1, 1, 2, tzinfo=utc).timestamp()
    end = datetime(9999, 12, 30, tzinfo=utc).timestamp()
    values += [datetime.fromtimestamp(rng.uniform(start, end), utc) for _ in range(2_000)]
    for value in values:
        aware = value if value.tzinfo is not None else value.replace(tzinfo=utc)
        expected = aware.astimezone(utc).isoformat(timespec="milliseconds")[:-6] + "Z"
        assert _format_timestamp(value) == expected


def test_proto_enum_value_is_the_enum_value() -> None:
    """``ProtoEnum.value`` is a faster spelling of Enum's own: the same for every member of
    every proto enum, read-only, and members still round-trip by value and by pickle."""
    import pickle

    from simple_a2a.protocol.models import ProtoEnum

    def enums(cls: type[Any]) -> list[type[Any]]:
        return [x for sub in cls.__subclasses__() for x in (sub, *enums(sub))]

    members = [m for cls in enums(ProtoEnum) for m in cls]
    assert len(members) > 10
    for member in members:
        assert member.value == member._value_ == str.__str__(member)
        assert type(member)(member.value) is member
        assert pickle.loads(pickle.dumps(member)) is member
    with pytest.raises(AttributeError):
        members[0].value = "x"
