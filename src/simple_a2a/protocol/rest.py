"""The HTTP+JSON binding's wire codec (spec §11), no I/O: the route table and query parsing.

The routes are compiled from :data:`~simple_a2a.protocol.operations.OPERATIONS` (the proto's
``google.api.http`` options), never listed by hand:

- every operation at its 1.0 path and at ``/{tenant}`` + path (the ``additional_bindings``);
- ``SubscribeToTask`` by ``GET`` (a2a.proto) and by ``POST`` (spec §11.3.2, the 0.3 routes);
- the 0.3 ``/v1/...`` paths (0.3 specification.md §3.5.6), marked so the binding speaks 0.3.

Matching (:meth:`RouteTable.match`) tries templates from the most specific (most literal
characters) to the least, 0.3 paths before tenant variants (so ``/v1/tasks/x`` is 0.3's GetTask,
not tenant ``v1``). A path that matches a template but not its verbs is a 405, none is a 404.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._base import A2AModel
from .errors import InvalidParamsError, MethodNotFoundError
from .operations import OPERATIONS, Operation


class RouteNotFoundError(MethodNotFoundError):
    """No route has this path (HTTP 404)."""

    grpc_status = "NOT_FOUND"
    reason = "METHOD_NOT_FOUND"


class MethodNotAllowedError(MethodNotFoundError):
    """A route has this path, but not this HTTP verb (HTTP 405)."""

    http_status = 405
    reason = "METHOD_NOT_ALLOWED"

    def __init__(self, message: str, *, allowed: Sequence[str]) -> None:
        super().__init__(message, metadata={"allowed": ",".join(allowed)})
        self.allowed = tuple(allowed)


@dataclass(frozen=True)
class RouteMatch:
    operation: Operation
    #: path parameters by request field name (``id``, ``task_id``, ``tenant``)
    params: dict[str, str]
    #: a 0.3 ``/v1/...`` route
    v03: bool


@dataclass
class _Template:
    template: str
    regex: re.Pattern[str]
    v03: bool
    tenant: bool
    by_verb: dict[str, Operation] = field(default_factory=dict)

    @property
    def specificity(self) -> tuple[int, int, int]:
        literal = len(re.sub(r"\{[^}]*\}", "", self.template))
        return (int(self.tenant), int(not self.v03), -literal)


_PARAM = re.compile(r"\{(\w+)\}")


def compile_template(template: str) -> re.Pattern[str]:
    """``/tasks/{id}:cancel`` → a regex with one named group per path parameter."""
    out, pos = [], 0
    for m in _PARAM.finditer(template):
        out.append(re.escape(template[pos : m.start()]))
        out.append(f"(?P<{m.group(1)}>[^/]+)")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("^" + "".join(out) + "$")


def _routes_of(op: Operation) -> Iterable[tuple[str, str, bool, bool]]:
    """(verb, template, v03, tenant) for one operation."""
    verbs = [op.http_method]
    if op.name == "SubscribeToTask":
        verbs.append("POST" if op.http_method == "GET" else "GET")
    for verb in verbs:
        yield verb, op.path, False, False
        yield verb, op.tenant_path, False, True
        if op.v03_path:
            yield verb, op.v03_path, True, False


class RouteTable:
    """The REST routes of the operations, matched by verb and path."""

    def __init__(self, operations: Iterable[Operation] = OPERATIONS) -> None:
        templates: dict[str, _Template] = {}
        for op in operations:
            for verb, path, v03, tenant in _routes_of(op):
                tpl = templates.get(path)
                if tpl is None:
                    tpl = templates[path] = _Template(path, compile_template(path), v03, tenant)
                tpl.by_verb.setdefault(verb, op)
        self._templates = sorted(templates.values(), key=lambda t: t.specificity)

    def routes(self) -> list[tuple[str, str, str]]:
        """(verb, path template, operation name), in matching order (for docs and tests)."""
        return [
            (verb, t.template, op.name) for t in self._templates for verb, op in t.by_verb.items()
        ]

    def match(self, verb: str, path: str) -> RouteMatch:
        verb = verb.upper()
        for tpl in self._templates:
            m = tpl.regex.match(path)
            if m is None:
                continue
            op = tpl.by_verb.get(verb) or (tpl.by_verb.get("GET") if verb == "HEAD" else None)
            if op is None:
                allowed = sorted(tpl.by_verb)
                raise MethodNotAllowedError(
                    f"{verb} is not allowed on {path}; use {' or '.join(allowed)}",
                    allowed=allowed,
                )
            return RouteMatch(op, dict(m.groupdict()), tpl.v03)
        raise RouteNotFoundError(f"no A2A route matches {verb} {path}")


# -- query parameters (spec §11.5) --


def _unwrap(annotation: Any) -> Any:
    """``X | None`` → ``X``; ``Annotated[X, ...]`` → ``X``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return annotation


@functools.cache  # one table per request class (a dozen), read-only: worked out once
def _fields(model: type[A2AModel]) -> dict[str, tuple[str, Any]]:
    """Every accepted query name (camelCase alias and proto snake_case) → (wire name, type)."""
    out: dict[str, tuple[str, Any]] = {}
    for name, info in model.model_fields.items():
        wire = info.alias or name
        kind = _unwrap(info.annotation)
        out[wire] = out[name] = (wire, kind)
    return out


def _scalar(wire: str, kind: Any, raw: str) -> Any:
    if kind is bool:
        lowered = raw.strip().lower()
        if lowered not in ("true", "false"):
            raise InvalidParamsError(
                f"{wire} must be true or false, got {raw!r}",
                field_violations=[{"field": wire, "description": "not a boolean"}],
            )
        return lowered == "true"
    if kind is int:
        text = raw.strip()
        if not re.fullmatch(r"[+-]?\d+", text):
            raise InvalidParamsError(
                f"{wire} must be an integer, got {raw!r}",
                field_violations=[{"field": wire, "description": "not an integer"}],
            )
        return int(text)
    return raw


def parse_query(
    model: type[A2AModel],
    items: Iterable[tuple[str, str]],
    *,
    ignore: Iterable[str] = (),
) -> dict[str, Any]:
    """Query parameters → the request fields they set (ProtoJSON names), per spec §11.5.

    Names are camelCase (snake_case accepted); booleans ``true``/``false``; numbers decimal;
    enums and timestamps are passed on as strings for the model to validate; a repeated field
    takes repeated parameters and comma-separated values. Parameters that are not fields of the
    request (``A2A-Version``, unknown ones) are ignored (spec §5.7); so are path fields in
    ``ignore`` — the path wins.
    """
    fields = _fields(model)
    skip = set(ignore)
    out: dict[str, Any] = {}
    for key, raw in items:
        known = fields.get(key)
        if known is None:
            continue
        wire, kind = known
        if wire in skip or key in skip:
            continue
        if typing.get_origin(kind) is list:
            (item_kind,) = typing.get_args(kind) or (str,)
            values = [v for v in raw.split(",") if v.strip()]
            out.setdefault(wire, []).extend(_scalar(wire, item_kind, v) for v in values)
        else:
            out[wire] = _scalar(wire, kind, raw)  # a repeated scalar: the last one wins
    return out


def query_string(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The client side of :func:`parse_query`: request fields → query items (spec §11.5)."""
    items: list[tuple[str, str]] = []
    for key, value in params.items():
        values = value if isinstance(value, list) else [value]
        for v in values:
            if v is None:
                continue
            items.append((key, ("true" if v else "false") if isinstance(v, bool) else str(v)))
    return items
