"""The models cover ``a2a.proto`` exactly (spec §4, §5.5, §5.7; a2a.proto is normative).

The proto is parsed here, so a field added to the spec without a model field fails a test.
"""

from __future__ import annotations

import typing
from datetime import datetime
from enum import Enum
from typing import Any

import pydantic
import pytest

from simple_a2a.protocol import InvalidParamsError, Role, TaskState
from simple_a2a.protocol._base import A2AModel
from tests.protocol._factories import MODELS, ONEOFS, full_kwargs, min_length, unwrap, wire_name
from tests.protocol._spec import ProtoField, ProtoMessage, load_proto

PROTO = load_proto()
PROTO_MESSAGES = sorted(PROTO.messages.values(), key=lambda m: m.name)

#: proto type names that are not A2A messages, and their model class name
WELL_KNOWN = {"google.protobuf.Empty": "Empty"}

#: proto field name -> python attribute name, where they differ (and why)
PYTHON_NAMES = {
    # ``list`` would shadow the builtin in the class body; the wire name stays ``list``.
    ("StringList", "list"): "values",
}

#: REQUIRED fields the model does not enforce, with the reason (spec §5.7 says SHOULD validate).
LENIENT_REQUIRED = {
    # Clients must be able to read imperfect Agent Cards found in the wild (spec §8.2, card.py);
    # a card we build always carries these fields.
    ("AgentCard", "supported_interfaces"): "read imperfect cards: defaults to []",
    ("AgentCard", "capabilities"): "read imperfect cards: defaults to empty capabilities",
    ("AgentCard", "default_input_modes"): "read imperfect cards: defaults to text/plain",
    ("AgentCard", "default_output_modes"): "read imperfect cards: defaults to text/plain",
    ("AgentCard", "skills"): "read imperfect cards: defaults to []",
    ("AgentSkill", "tags"): "read imperfect cards: defaults to []",
    ("AgentInterface", "protocol_version"): "read imperfect cards: defaults to 1.0",
    ("AuthorizationCodeOAuthFlow", "scopes"): "read imperfect cards: an empty scope map",
    ("ClientCredentialsOAuthFlow", "scopes"): "read imperfect cards: an empty scope map",
    ("DeviceCodeOAuthFlow", "scopes"): "read imperfect cards: an empty scope map",
    # A page of results may be empty and the proto3 defaults are meaningful: 0 and "".
    ("ListTasksResponse", "tasks"): "an empty page has no tasks",
    ("ListTasksResponse", "next_page_token"): "proto3 default '' means 'last page'",
    ("ListTasksResponse", "page_size"): "proto3 default 0",
    ("ListTasksResponse", "total_size"): "proto3 default 0",
}


def _reachable(root: str) -> frozenset[str]:
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = todo.pop()
        if name in seen or name not in PROTO.messages:
            continue
        seen.add(name)
        todo.extend(f.type for f in PROTO.messages[name].fields)
    return frozenset(seen)


#: Agent Card objects accept an empty REQUIRED string (imperfect cards in the wild, card.py);
#: every other REQUIRED string must be non-empty (proto3 cannot tell "" from unset).
EMPTY_STRING_OK = _reachable("AgentCard")

SCALARS: dict[str, Any] = {
    "string": str,
    "bool": bool,
    "int32": int,
    "int64": int,
    "bytes": bytes,
    "google.protobuf.Timestamp": datetime,
    "google.protobuf.Struct": dict,
    "google.protobuf.Value": Any,
}


def model_of(proto_name: str) -> type[A2AModel]:
    return MODELS[WELL_KNOWN.get(proto_name, proto_name)]


def python_name(msg: ProtoMessage, f: ProtoField) -> str:
    return PYTHON_NAMES.get((msg.name, f.name), f.name)


def required_fields() -> list[tuple[str, str]]:
    return [(m.name, f.name) for m in PROTO_MESSAGES for f in m.fields if f.required]


def required_params() -> list[Any]:
    return [pytest.param(m, f, id=f"{m}.{f}") for m, f in required_fields()]


def test_proto_parser_sees_the_whole_file() -> None:
    """Guard the parser itself: the v1.0 proto has 44 messages, 2 enums, 11 rpcs."""
    assert len(PROTO.messages) >= 44
    assert set(PROTO.enums) == {"TaskState", "Role"}
    assert len(PROTO.rpcs) == 11
    assert sum(f.required for m in PROTO_MESSAGES for f in m.fields) >= 50


@pytest.mark.parametrize("msg", PROTO_MESSAGES, ids=lambda m: m.name)
def test_every_proto_message_has_a_model(msg: ProtoMessage) -> None:
    """Spec §4: each data object of a2a.proto is a model class of the same name."""
    assert msg.name in MODELS, f"no model class for proto message {msg.name}"


def test_every_referenced_well_known_type_has_a_model() -> None:
    """``google.protobuf.Empty`` (DeleteTaskPushNotificationConfig's result) maps to Empty."""
    for rpc in PROTO.rpcs:
        model_of(rpc.request)
        model_of(rpc.response)
    assert model_of("google.protobuf.Empty")().to_dict() == {}


def test_no_model_without_a_proto_message() -> None:
    """The foundation defines no model the proto does not know (besides well-known types)."""
    extra = set(MODELS) - set(PROTO.messages) - set(WELL_KNOWN.values())
    assert not extra


@pytest.mark.parametrize("msg", PROTO_MESSAGES, ids=lambda m: m.name)
def test_fields_and_json_names(msg: ProtoMessage) -> None:
    """Spec §5.5: every proto field is a model field whose wire name is the camelCase name;
    and the model has no field the proto lacks."""
    cls = model_of(msg.name)
    expected = {python_name(msg, f) for f in msg.fields}
    assert set(cls.model_fields) == expected
    for f in msg.fields:
        info = cls.model_fields[python_name(msg, f)]
        assert wire_name(info, python_name(msg, f)) == f.json_name, (msg.name, f.name)
        # the proto (snake_case) name is accepted on input too
        assert f.name in (python_name(msg, f), f.json_name)


def _check_type(annotation: Any, f: ProtoField) -> None:
    tp, _ = unwrap(annotation)
    if f.map_key is not None:
        assert typing.get_origin(tp) is dict, f.name
        tp, _ = unwrap(typing.get_args(tp)[1])
    elif f.repeated:
        assert typing.get_origin(tp) is list, f.name
        tp, _ = unwrap(typing.get_args(tp)[0])
    if f.type in SCALARS:
        want = SCALARS[f.type]
        got = typing.get_origin(tp) or tp
        assert got is want, f"{f.name}: {tp!r} is not {f.type}"
    elif f.type in PROTO.enums:
        assert isinstance(tp, type) and issubclass(tp, Enum) and tp.__name__ == f.type, f.name
    else:
        assert tp is model_of(f.type), f"{f.name}: {tp!r} is not {f.type}"


@pytest.mark.parametrize("msg", PROTO_MESSAGES, ids=lambda m: m.name)
def test_field_types(msg: ProtoMessage) -> None:
    """Field types follow the proto: scalars, Timestamp, Struct, Value, repeated, map, enums,
    messages."""
    cls = model_of(msg.name)
    for f in msg.fields:
        _check_type(cls.model_fields[python_name(msg, f)].annotation, f)


@pytest.mark.parametrize("msg", PROTO_MESSAGES, ids=lambda m: m.name)
def test_optional_fields_keep_presence(msg: ProtoMessage) -> None:
    """Spec §5.7: a proto ``optional`` field distinguishes unset from the default: the model
    field is nullable and unset by default (so it is omitted on output)."""
    cls = model_of(msg.name)
    for f in msg.fields:
        if f.optional:
            info = cls.model_fields[python_name(msg, f)]
            assert unwrap(info.annotation)[1], f.name
            assert not info.is_required() and info.default is None, f.name


@pytest.mark.parametrize(("message", "field"), required_params())
def test_required_fields_are_enforced(message: str, field: str) -> None:
    """Spec §5.7: a REQUIRED field missing from the input is rejected, and the error names the
    field by its wire name; a required repeated field must have an element. Lenient fields are
    listed in LENIENT_REQUIRED with the reason."""
    msg = PROTO.messages[message]
    f = msg.field(field)
    cls = model_of(message)
    info = cls.model_fields[python_name(msg, f)]
    data = cls.model_validate(full_kwargs(cls)).to_dict()
    data.pop(f.json_name)
    if (message, field) in LENIENT_REQUIRED:
        assert not info.is_required()
        cls.from_dict(data)  # accepted
        return
    assert info.is_required(), f"{message}.{field} is REQUIRED in the proto"
    with pytest.raises(InvalidParamsError) as exc:
        cls.from_dict(data, field_prefix="params")
    assert f"params.{f.json_name}" in str(exc.value)
    assert {"field": f"params.{f.json_name}", "description": "Field required"} in (
        exc.value.field_violations
    )
    if f.repeated and f.map_key is None:
        assert min_length(info) >= 1, f"{message}.{field}: a REQUIRED array needs an element"
        with pytest.raises(InvalidParamsError, match=f.json_name):
            cls.from_dict({**data, f.json_name: []})
    elif f.type == "string" and message not in EMPTY_STRING_OK:
        # proto3 cannot tell "" from unset: an empty REQUIRED string is as missing as none
        with pytest.raises(InvalidParamsError, match=f.json_name):
            cls.from_dict({**data, f.json_name: ""})


def test_lenient_list_is_not_stale() -> None:
    """Each allow-listed field is REQUIRED in the proto (so the list cannot rot silently)."""
    assert set(LENIENT_REQUIRED) <= set(required_fields())


@pytest.mark.parametrize("name", ["TaskState", "Role"])
def test_enums(name: str) -> None:
    """Spec §4.1.3, §4.1.5, §5.5: every enum value exists, its JSON form is the proto name, and
    the proto number is accepted on input."""
    enum = {"TaskState": TaskState, "Role": Role}[name]
    values = PROTO.enums[name]
    assert [m.value for m in enum] == [v for v, _ in values]
    for value, number in values:
        assert enum(number).value == value
        assert enum(value).value == value
    with pytest.raises(ValueError):
        enum(len(values))


@pytest.mark.parametrize("msg", [m for m in PROTO_MESSAGES if m.oneofs], ids=lambda m: m.name)
def test_oneof_members_are_mutually_exclusive(msg: ProtoMessage) -> None:
    """Proto ``oneof``: exactly one member may be set; two set (or none) is rejected."""
    cls = model_of(msg.name)
    (members,) = msg.oneofs.values()
    assert ONEOFS[cls] == tuple(members)
    base = {k: v for k, v in full_kwargs(cls).items() if k not in members}
    samples = {m: full_kwargs(cls, m)[m] for m in members}
    wire = {m: cls.model_validate({**base, m: samples[m]}).to_dict() for m in members}
    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            with pytest.raises(pydantic.ValidationError):
                cls.model_validate({**base, a: samples[a], b: samples[b]})
            with pytest.raises(InvalidParamsError, match="exactly one"):
                cls.from_dict({**wire[a], **wire[b]})
    first = cls.model_fields[members[0]]
    none_set = dict(wire[members[0]])
    none_set.pop(wire_name(first, members[0]))
    with pytest.raises(InvalidParamsError, match="exactly one"):
        cls.from_dict(none_set)
