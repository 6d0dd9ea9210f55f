"""``null`` reads as the field's default, for every field of every model (issue #33).

ProtoJSON (https://protobuf.dev/programming-guides/json/): "null is an accepted value for all
field types and treated as the default value of the corresponding field type". The official
a2a-sdk 0.3 agents serve ``"extensions": null``, ``"securitySchemes": null``, skills'
``"inputModes": null``, tasks' ``"artifacts": null``... and every one of those objects used to be
refused whole. What is really invalid (a required field that is null, ``null`` inside a list)
stays an error.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simple_a2a.protocol import v03
from simple_a2a.protocol._base import A2AModel
from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.errors import InvalidParamsError
from simple_a2a.protocol.models import Message, Task, TaskPushNotificationConfig
from simple_a2a.protocol.requests import SendMessageResponse, StreamResponse
from tests.protocol._factories import MODELS, ONEOFS, full

#: a2a-sdk 0.3.26's own objects as its pydantic models dump them (``model_dump(mode="json",
#: by_alias=True)``, nulls kept), made by the SDK in its own venv (`data/make_sdk03_nulls.py`)
#: These are the shapes the official integration test kit's python_v03 agent sends.
SDK03 = json.loads((Path(__file__).parent / "data" / "sdk03_nulls.json").read_text())

#: google.protobuf.Struct / Value fields of a2a.proto (1.0 and 0.3): a null *inside* them is a
#: JSON null the sender meant, not an unset field.
STRUCT_FIELDS = frozenset({"metadata", "data", "params", "header"})


def without_nulls(value: Any) -> Any:
    """``value`` with every null-valued object member removed (not inside Struct fields)."""
    if isinstance(value, dict):
        return {
            k: v if k in STRUCT_FIELDS else without_nulls(v)
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


# -- the a2a-sdk 0.3.26 objects ------------------------------------------------------------------

READ_V03 = {
    "card": lambda d: AgentCard.from_dict(v03.card_from_v03(d)),
    "task": lambda d: Task.from_dict(v03.result_from_v03("GetTask", d)),
    "working_task": lambda d: Task.from_dict(v03.result_from_v03("GetTask", d)),
    "message": lambda d: SendMessageResponse.from_dict(v03.result_from_v03("SendMessage", d)),
    "status_update": lambda d: StreamResponse.from_dict(
        v03.result_from_v03("SendStreamingMessage", d)
    ),
    "artifact_update": lambda d: StreamResponse.from_dict(
        v03.result_from_v03("SendStreamingMessage", d)
    ),
    "push_config": lambda d: TaskPushNotificationConfig.from_dict(
        v03.result_from_v03("CreateTaskPushNotificationConfig", d)
    ),
}


@pytest.mark.parametrize("name", sorted(READ_V03))
def test_the_sdk03_objects_read_as_without_their_nulls(name: str) -> None:
    raw = SDK03[name]
    assert "null" in json.dumps(raw)  # the fixture really carries nulls
    read = READ_V03[name]
    assert read(copy.deepcopy(raw)) == read(without_nulls(raw))


def test_the_sdk03_card_keeps_what_it_says() -> None:
    card = AgentCard.from_dict(v03.card_from_v03(copy.deepcopy(SDK03["card"])))
    assert card.capabilities.streaming is True
    assert card.capabilities.extensions == [] and card.security_schemes == {}
    assert card.signatures == [] and card.skills[0].input_modes == []
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"


def test_a_null_inside_a_struct_is_kept() -> None:
    task = Task.from_dict(v03.result_from_v03("GetTask", copy.deepcopy(SDK03["task"])))
    assert task.artifacts[0].parts[2].data == {"k": None, "n": 1}
    assert task.history[0].reference_task_ids == []


# -- the 1.0 models: any field null reads as the field absent ------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every object member's path in ``value`` (not inside Struct fields)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*prefix, key))
            if key not in STRUCT_FIELDS:
                found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


def _set(data: Any, path: tuple[Any, ...], null: bool) -> Any:
    data = copy.deepcopy(data)
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    if null:
        parent[path[-1]] = None
    else:
        del parent[path[-1]]
    return data


def _outcome(cls: type[A2AModel], data: Any) -> Any:
    """The model read from ``data``, or the names of the fields its error names."""
    try:
        return cls.from_dict(data)
    except InvalidParamsError as exc:
        return ("error", sorted(v["field"] for v in exc.field_violations))


def _full_instances() -> list[tuple[str, type[A2AModel], dict[str, Any]]]:
    cases = []
    for name, cls in sorted(MODELS.items()):
        for member in ONEOFS.get(cls, (None,)):
            data = full(cls, member).to_dict()
            if data:  # google.protobuf.Empty has no field to set to null
                cases.append((f"{name}.{member}", cls, data))
    return cases


FULL = _full_instances()


@pytest.mark.parametrize(("name", "cls", "data"), FULL, ids=[c[0] for c in FULL])
def test_every_field_set_to_null_reads_as_absent(
    name: str, cls: type[A2AModel], data: dict[str, Any]
) -> None:
    paths = _paths(data)
    assert paths
    for path in paths:
        assert _outcome(cls, _set(data, path, null=True)) == _outcome(
            cls, _set(data, path, null=False)
        ), path


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(FULL), data=st.data())
def test_any_fields_set_to_null_read_as_absent(
    case: tuple[str, type[A2AModel], dict[str, Any]], data: st.DataObject
) -> None:
    _, cls, value = case
    chosen = data.draw(st.lists(st.sampled_from(_paths(value)), min_size=1, max_size=6))
    nulled, absent = copy.deepcopy(value), copy.deepcopy(value)
    for path in sorted(set(chosen), key=len, reverse=True):  # deepest first
        try:
            nulled, absent = _set(nulled, path, null=True), _set(absent, path, null=False)
        except (KeyError, IndexError, TypeError):  # an outer path of it was nulled already
            continue
    assert _outcome(cls, nulled) == _outcome(cls, absent)


def test_from_json_reads_nulls_as_from_dict_does() -> None:
    raw = v03.result_from_v03("GetTask", copy.deepcopy(SDK03["task"]))
    assert Task.from_json(json.dumps(raw)) == Task.from_dict(raw)


# -- what stays invalid --------------------------------------------------------------------------


def test_a_required_field_that_is_null_is_still_refused() -> None:
    with pytest.raises(InvalidParamsError, match="messageId"):
        Message.from_dict({"messageId": None, "role": "ROLE_USER", "parts": [{"text": "x"}]})
    with pytest.raises(InvalidParamsError, match="id"):
        Task.from_json(b'{"id": null, "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}')


def test_a_null_inside_a_list_is_still_refused() -> None:
    with pytest.raises(InvalidParamsError, match=r"parts\[0\]"):
        Message.from_dict({"messageId": "m", "role": "ROLE_USER", "parts": [None]})


def test_a_part_whose_only_member_is_null_is_still_refused() -> None:
    with pytest.raises(InvalidParamsError):
        Message.from_dict({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": None}]})
