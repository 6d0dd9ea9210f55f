"""The base of every protocol model: ProtoJSON on the wire (spec §5.5-§5.7).

ProtoJSON rules kept here, once, for every model:
- camelCase names on output; camelCase *and* the proto's snake_case names accepted on input;
- unset fields (``None``) and empty repeated fields are omitted on output;
- unknown fields are ignored (spec §5.7, forward compatibility);
- ``null`` reads as the field's default, for every field (ProtoJSON: "null is an accepted value
  for all field types and treated as the default value of the corresponding field type"); the
  official a2a-sdk 0.3 agents send ``"artifacts": null``, ``"extensions": null`` and the like.
  A null that fails validation is dropped and the object validated again, so the common path
  costs nothing; a required field that is null is then reported missing, as when absent;
- ``bytes`` travel as base64, timestamps as UTC ``YYYY-MM-DDTHH:mm:ss.sssZ`` (spec §5.6.1).
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import json
import operator
import re
from datetime import datetime, timezone
from typing import Annotated, Any, TypeVar

import pydantic
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer
from pydantic.alias_generators import to_camel
from pydantic_core import SchemaValidator

from .errors import InvalidParamsError, JSONParseError

M = TypeVar("M", bound="A2AModel")

# google.protobuf.Struct
Struct = dict[str, Any]


# Whether a repeated or map field is left out of the JSON: its value is a list, a dict or None,
# so "empty" is falsy. ``operator.not_`` is C: pydantic calls it for every such field of every
# object it serialises (15 times per SendMessage), where a Python function cost a frame each.
_is_empty = operator.not_


def repeated() -> Any:
    """A repeated proto field: a list in Python, omitted from JSON while empty."""
    return Field(default_factory=list, exclude_if=_is_empty)


def repeated_map() -> Any:
    """A proto ``map`` field: a dict in Python, omitted from JSON while empty."""
    return Field(default_factory=dict, exclude_if=_is_empty)


_URLSAFE = str.maketrans("-_", "+/")


def _decode_base64(value: Any) -> Any:
    # ProtoJSON accepts standard and URL-safe base64, with or without padding.
    if isinstance(value, str):
        text = value.strip()
        padded = text + "=" * (-len(text) % 4)
        try:
            if "-" in text or "_" in text:
                if "+" in text or "/" in text:
                    raise ValueError("mixed base64 alphabets")
                return base64.b64decode(padded.translate(_URLSAFE), validate=True)
            return base64.b64decode(padded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError("not valid base64") from exc
    return value


def _encode_base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


Base64Bytes = Annotated[
    bytes,
    BeforeValidator(_decode_base64),
    PlainSerializer(_encode_base64, return_type=str, when_used="json"),
]


def _to_utc(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc)
    return value


# Two and three digits with leading zeros, by value: a timestamp is put together from these.
_TWO = tuple(f"{i:02d}" for i in range(100))
_THREE = tuple(f"{i:03d}" for i in range(1000))


def _format_timestamp(value: datetime) -> str:
    if value.tzinfo is not timezone.utc:
        value = _to_utc(value)
    # What ``isoformat(timespec="milliseconds")`` gives, "+00:00" as "Z", from the fields and
    # tables of digits: isoformat parses its keyword, formats the time and the UTC offset with
    # two PyUnicode_FromFormat calls and is then sliced (~14,700 instructions against ~4,900;
    # two misses per SendMessage, issue #36).
    year = value.year
    return (
        f"{year if year >= 1000 else f'{year:04d}'}-{_TWO[value.month]}-{_TWO[value.day]}"
        f"T{_TWO[value.hour]}:{_TWO[value.minute]}:{_TWO[value.second]}"
        f".{_THREE[value.microsecond // 1000]}Z"
    )


#: UTC, millisecond precision (truncated), ``Z`` suffix (spec §5.6.1). Remembered for the last
#: 1,024 instants: a status timestamp is written several times (the answer, the event log, the
#: packed task), and a hit is C only (~0.2 us), where formatting cost ~2 us (a Python call from
#: the serializer, then ``isoformat``), a third of serialising a task (issue #19).
format_timestamp = functools.lru_cache(maxsize=1024)(_format_timestamp)


_TIMESTAMP_RE = re.compile(
    r"(?P<base>\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d)(?:\.(?P<frac>\d+))?"
    r"(?P<tz>[Zz]|[+-]\d\d:?\d\d)?"
)


def _parse_timestamp(value: Any) -> Any:
    if isinstance(value, str):
        # ProtoJSON writes 0, 3, 6 or 9 fractional digits; Python 3.10's fromisoformat reads
        # only 3 or 6, so the fraction is normalised to microseconds here.
        match = _TIMESTAMP_RE.fullmatch(value.strip())
        if match is None:
            raise ValueError(f"not an ISO 8601 timestamp: {value!r}")
        frac = (match["frac"] or "0")[:6].ljust(6, "0")
        tz = match["tz"] or "+00:00"
        if tz in ("Z", "z"):
            tz = "+00:00"
        elif ":" not in tz:
            tz = f"{tz[:3]}:{tz[3:]}"
        try:
            parsed = datetime.fromisoformat(f"{match['base'][:10]}T{match['base'][11:]}.{frac}{tz}")
        except ValueError as exc:
            raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from exc
    else:
        parsed = value
    try:
        return _to_utc(parsed)
    except OverflowError:  # 9999-12-31T23:59:59-23:59 is past datetime.max in UTC (#16 item 5)
        raise ValueError(f"timestamp out of range: {value!r}") from None


Timestamp = Annotated[
    datetime,
    BeforeValidator(_parse_timestamp),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]


def now() -> datetime:
    return datetime.now(timezone.utc)


class A2AModel(BaseModel):
    """Base of all protocol objects; see the module docstring for the wire rules."""

    model_config = ConfigDict(
        # Build each model's validator and serializer on its first use, not at import: most
        # programs use a fraction of the ~60 protocol models, and building them all cost
        # ~120 ms of `import simple_a2a` (issue #19).
        defer_build=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="ignore",
        serialize_by_alias=True,
    )

    def to_dict(self) -> dict[str, Any]:
        """The ProtoJSON object (camelCase, unset fields omitted)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_json(self) -> bytes:
        return self.__pydantic_serializer__.to_json(self, by_alias=True, exclude_none=True)

    @classmethod
    def from_dict(cls: type[M], data: Any, *, field_prefix: str = "") -> M:
        """Validate ProtoJSON; raise :class:`InvalidParamsError` naming the bad field."""
        try:
            validator = cls.__pydantic_validator__
            if type(validator) is SchemaValidator:
                # What model_validate calls, without its Python frame and its seven keyword
                # arguments for pydantic-core to parse (every request is validated here, #36);
                # before the first use (a deferred build) or with plugins: model_validate.
                return validator.validate_python(data)  # type: ignore[no-any-return]
            return cls.model_validate(data)
        except pydantic.ValidationError as exc:
            return _revalidate_without_nulls(cls, copy.deepcopy(data), exc, field_prefix)

    @classmethod
    def from_json(cls: type[M], data: str | bytes, *, field_prefix: str = "") -> M:
        """Parse and validate JSON text; malformed JSON raises :class:`JSONParseError`."""
        try:
            return cls.model_validate_json(data)
        except pydantic.ValidationError as exc:
            if any(err["type"] == "json_invalid" for err in exc.errors()):
                raise JSONParseError() from None
            if b"null" not in (data.encode() if isinstance(data, str) else data):
                raise validation_error(exc, field_prefix) from None
            return _revalidate_without_nulls(cls, json.loads(data), exc, field_prefix)


#: Rounds of dropping nulls: a null inside an object that itself failed for another reason
#: shows up only in the next round. Bounded, as everything a caller can make us do.
_NULL_ROUNDS = 8
_MISSING = object()


def _drop_failed_nulls(data: Any, exc: pydantic.ValidationError) -> bool:
    """Delete every object member whose ``null`` value failed validation; True if any was.

    A null inside a list (``"parts": [null]``) is not a field's default and stays an error;
    nulls that validated (optional fields, values inside a ``Struct``) are left alone.
    """
    dropped = False
    for err in exc.errors(include_url=False):
        if err.get("input", _MISSING) is not None or not err["loc"]:
            continue
        parent: Any = data
        for step in err["loc"][:-1]:
            # Steps that are not keys or indexes (a union member's tag) are skipped.
            if isinstance(parent, dict):
                parent = parent.get(step, parent)
            elif isinstance(parent, list) and isinstance(step, int) and step < len(parent):
                parent = parent[step]
        key = err["loc"][-1]
        if isinstance(parent, dict) and key in parent and parent[key] is None:
            del parent[key]
            dropped = True
    return dropped


def _revalidate_without_nulls(
    cls: type[M], data: Any, exc: pydantic.ValidationError, field_prefix: str
) -> M:
    """Validate ``data`` again with its failing nulls read as defaults (the module docstring),
    or raise the invalid-params error of the last attempt."""
    for _ in range(_NULL_ROUNDS):
        if not _drop_failed_nulls(data, exc):
            break
        try:
            return cls.model_validate(data)
        except pydantic.ValidationError as again:
            exc = again
    raise validation_error(exc, field_prefix) from None


_DEFAULTS: dict[type[Any], tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {}
# No protocol model defines ``__new__``; ``cls.__new__`` looked up through pydantic's metaclass
# costs ~0.5 us more per object than calling object's directly (12 objects per SendMessage).
_new = object.__new__
# The four slots of every pydantic model, set through their descriptors' own setters:
# ``object.__setattr__(obj, name, value)`` looks the name up in the type's MRO and goes through a
# generic wrapper for each (~1,500 instructions more per object, 14 objects per SendMessage).
# A test checks that no protocol model redefines them.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _defaults_of(cls: type[A2AModel]) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    plain: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            plain[name] = None  # placeholder: keeps the field order of a validated model
            factories.append((name, info.default_factory))
        else:
            plain[name] = None if info.is_required() else info.default
    result = _DEFAULTS[cls] = (plain, tuple(factories))
    return result


def trusted(cls: type[M], /, **fields: Any) -> M:
    """Build ``cls`` from values that are already valid, skipping validation.

    For the server's own objects only (a status it timestamps, the event wrapping a validated
    artifact, ...), never for data from a client: nothing is checked or converted, so every
    value must already be what validation would have produced (models, enum members, aware UTC
    datetimes). Unlike ``model_construct`` (which is slower than validating these small
    models), the defaults are taken from a per-class cache. The result is indistinguishable
    from the validated object: same ``__dict__`` (and field order), same ``model_fields_set``,
    same JSON.
    """
    cached = _DEFAULTS.get(cls)
    plain, factories = cached if cached is not None else _defaults_of(cls)
    values = {**plain, **fields}
    for name, factory in factories:
        if name not in fields:
            values[name] = factory()
    obj = _new(cls)
    _set_dict(obj, values)
    _set_fields_set(obj, set(fields))
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def replaced(obj: M, /, **fields: Any) -> M:
    """``obj.model_copy(update=fields)``, for values that are already valid (as ``trusted``).

    The same result (a shallow copy: same ``__dict__`` order, ``model_fields_set`` grown by the
    updated fields), without pydantic's generic ``__copy__`` (three ``copy.copy`` calls): the
    task's every change goes through here (``reducer.py``).
    """
    new = _new(type(obj))
    _set_dict(new, {**obj.__dict__, **fields})
    # ``{*a, *b}`` builds the set in place; ``set | dict_keys`` goes through the keys view's
    # reflected ``__ror__``, twice the time. The two slots are read one by one (no tuple):
    # together half of this function's ~1.1 us per call, run three times per streamed chunk.
    _set_fields_set(new, {*obj.__pydantic_fields_set__, *fields})
    extra = obj.__pydantic_extra__
    _set_extra(new, None if extra is None else dict(extra))
    private = obj.__pydantic_private__
    _set_private(new, None if private is None else dict(private))
    return new


def _field_path(loc: tuple[int | str, ...], prefix: str) -> str:
    parts: list[str] = [prefix] if prefix else []
    for item in loc:
        if isinstance(item, int):
            parts[-1:] = [f"{parts[-1]}[{item}]"] if parts else [f"[{item}]"]
        elif item.startswith(("function-", "function-after", "union[")) or item in {
            "str",
            "int",
            "dict[str,any]",
        }:
            continue
        else:
            parts.append(item)
    return ".".join(parts)


def validation_error(exc: pydantic.ValidationError, prefix: str = "") -> InvalidParamsError:
    """Turn a pydantic error into the spec's invalid-params error (spec §3.3.2, §9.5).

    The message names every bad field; ``google.rpc.BadRequest`` lists them for machines.
    """
    violations: list[dict[str, str]] = []
    for err in exc.errors(include_url=False, include_input=False):
        field = _field_path(tuple(err["loc"]), prefix) or prefix or "(root)"
        msg = str(err["msg"])
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        violations.append({"field": field, "description": msg})
    text = "; ".join(f"{v['field']}: {v['description']}" for v in violations)
    return InvalidParamsError(f"Invalid parameters: {text}", field_violations=violations)
