"""Model introspection for the protocol tests: the model classes, their oneofs, a deterministic
"full" instance of each, and hypothesis strategies derived from the field annotations."""

from __future__ import annotations

import types
import typing
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any

from hypothesis import strategies as st
from pydantic.fields import FieldInfo

from simple_a2a.protocol import card, models, requests
from simple_a2a.protocol._base import A2AModel

#: every protocol model class of the 1.0 foundation, by class name
MODELS: dict[str, type[A2AModel]] = {
    name: obj
    for module in (models, card, requests)
    for name, obj in vars(module).items()
    if isinstance(obj, type)
    and issubclass(obj, A2AModel)
    and obj is not A2AModel
    and obj.__module__ == module.__name__
}

#: the model's oneof groups (python field names), as the proto declares them
ONEOFS: dict[type[A2AModel], tuple[str, ...]] = {
    models.Part: ("text", "raw", "url", "data"),
    card.SecurityScheme: tuple(card.SecurityScheme.model_fields),
    card.OAuthFlows: tuple(card.OAuthFlows.model_fields),
    requests.SendMessageResponse: ("task", "message"),
    requests.StreamResponse: ("task", "message", "status_update", "artifact_update"),
}


def unwrap(annotation: Any) -> tuple[Any, bool]:
    """``(inner type, nullable)``: strips ``X | None`` and ``Annotated[...]``."""
    nullable = False
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(args) != len(typing.get_args(annotation))
        assert len(args) == 1, annotation
        annotation = args[0]
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation, nullable


def min_length(info: FieldInfo) -> int:
    return max([getattr(m, "min_length", 0) for m in info.metadata] + [0])


def wire_name(info: FieldInfo, name: str) -> str:
    return info.alias or name


# ----------------------------------------------------------------------------- full instances

FIXED_TIME = datetime(2025, 10, 28, 10, 30, 0, 123000, tzinfo=timezone.utc)


def _sample(annotation: Any, depth: int = 0) -> Any:
    tp, _ = unwrap(annotation)
    origin = typing.get_origin(tp)
    if tp is str:
        return "s"
    if tp is bool:
        return True
    if tp is int:
        return 3
    if tp is bytes:
        return b"\x00\xff"
    if tp is datetime:
        return FIXED_TIME
    if tp is Any:
        return {"k": [1, "two"]}
    if isinstance(tp, type) and issubclass(tp, Enum):
        return list(tp)[1]
    if origin is list:
        return [_sample(typing.get_args(tp)[0], depth)]
    if origin is dict:
        _key_t, val_t = typing.get_args(tp)
        if val_t is Any:
            return {"k": "v"}
        return {"k": _sample(val_t, depth)}
    if isinstance(tp, type) and issubclass(tp, A2AModel):
        return full_kwargs(tp)
    raise AssertionError(f"no sample for {annotation!r}")


def full_kwargs(cls: type[A2AModel], oneof_member: str | None = None) -> dict[str, Any]:
    """Keyword arguments (python names) setting every field; one member of a oneof."""
    oneof = ONEOFS.get(cls, ())
    chosen = oneof_member or (oneof[0] if oneof else None)
    return {
        name: _sample(info.annotation)
        for name, info in cls.model_fields.items()
        if name not in oneof or name == chosen
    }


def full(cls: type[A2AModel], oneof_member: str | None = None) -> A2AModel:
    return cls.model_validate(full_kwargs(cls, oneof_member))


# ----------------------------------------------------------------------------- strategies

#: a small alphabet keeps generation fast and still exercises JSON escapes and non-ASCII text
ALPHABET = 'aZ0 _-."\\/\né☃😀'
texts = st.text(ALPHABET, max_size=8)

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(texts, inner, max_size=2),
    max_leaves=4,
)
structs = st.dictionaries(texts, json_values, max_size=2)
timestamps = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(timezone.utc)
).map(lambda d: d - timedelta(microseconds=d.microsecond % 1000))


def _strategy(annotation: Any, info: FieldInfo | None = None) -> st.SearchStrategy[Any]:
    tp, _ = unwrap(annotation)
    origin = typing.get_origin(tp)
    n = min_length(info) if info is not None else 0
    if tp is str:
        return st.text(ALPHABET, min_size=n, max_size=8)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(-(2**31), 2**31 - 1)
    if tp is bytes:
        return st.binary(max_size=24)
    if tp is datetime:
        return timestamps
    if tp is Any:
        return json_values.filter(lambda v: v is not None)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return st.sampled_from(list(tp))
    if origin is list:
        return st.lists(_strategy(typing.get_args(tp)[0]), min_size=n, max_size=2)
    if origin is dict:
        _, val_t = typing.get_args(tp)
        if val_t is Any:
            return structs
        return st.dictionaries(texts, _strategy(val_t), max_size=2)
    if isinstance(tp, type) and issubclass(tp, A2AModel):
        return strategy_for(tp)
    raise AssertionError(f"no strategy for {annotation!r}")


_CACHE: dict[type[A2AModel], st.SearchStrategy[Any]] = {}


def strategy_for(cls: type[A2AModel]) -> st.SearchStrategy[Any]:
    """Valid instances of ``cls``: optional fields sometimes unset, one member per oneof."""
    if cls in _CACHE:
        return _CACHE[cls]
    oneof = ONEOFS.get(cls, ())
    fixed: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in cls.model_fields.items():
        if name in oneof:
            continue
        strat = _strategy(info.annotation, info)
        (fixed if info.is_required() else optional)[name] = strat
    base = st.fixed_dictionaries(fixed, optional=optional)
    if oneof:
        members = {name: _strategy(cls.model_fields[name].annotation) for name in oneof}
        base = st.tuples(base, st.sampled_from(oneof)).flatmap(
            lambda pair: members[pair[1]].map(lambda v, pair=pair: {**pair[0], pair[1]: v})
        )
    strat = base.map(cls.model_validate)
    _CACHE[cls] = strat
    return strat


def walk(
    model: A2AModel, data: dict[str, Any], visit: typing.Callable[[A2AModel, dict[str, Any]], None]
) -> None:
    """Call ``visit(model, its wire dict)`` for ``model`` and every model nested in it.

    Struct-valued fields (metadata, data...) are not descended into.
    """
    visit(model, data)
    for name, info in type(model).model_fields.items():
        value = model.__dict__.get(name)
        key = wire_name(info, name)
        if key not in data:
            continue
        if isinstance(value, A2AModel):
            walk(value, data[key], visit)
        elif isinstance(value, list):
            for item, sub in zip(value, data[key], strict=True):
                if isinstance(item, A2AModel):
                    walk(item, sub, visit)
        elif isinstance(value, dict):
            for k, item in value.items():
                if isinstance(item, A2AModel):
                    walk(item, data[key][k], visit)
