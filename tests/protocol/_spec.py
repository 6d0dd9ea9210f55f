"""Readers for the normative spec files: ``a2a.proto`` and ``specification.md``.

Shared by the protocol tests so each one checks the code against the spec text itself, not
against a copy typed into a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

SPEC_DIR = Path("/work/shared/spec/v1.0")
PROTO_PATH = SPEC_DIR / "a2a.proto"
SPEC_PATH = SPEC_DIR / "specification.md"


# --------------------------------------------------------------------------- a2a.proto


@dataclass(frozen=True)
class ProtoField:
    name: str
    type: str  #: scalar, message or enum name; for maps the value type
    number: int
    repeated: bool = False
    optional: bool = False
    required: bool = False
    map_key: str | None = None  #: set for ``map<K, V>`` fields
    oneof: str | None = None

    @property
    def json_name(self) -> str:
        """protoc's ``json_name``: lowerCamelCase of the field name."""
        head, *rest = self.name.split("_")
        return head + "".join(p[:1].upper() + p[1:] for p in rest)


@dataclass
class ProtoMessage:
    name: str
    fields: list[ProtoField] = field(default_factory=list)
    oneofs: dict[str, list[str]] = field(default_factory=dict)

    def field(self, name: str) -> ProtoField:
        return next(f for f in self.fields if f.name == name)


@dataclass(frozen=True)
class HttpRule:
    verb: str  #: upper case: GET, POST, DELETE...
    path: str  #: as written in the proto (``/tasks/{id=*}``)
    body: str | None


@dataclass(frozen=True)
class ProtoRpc:
    name: str
    request: str
    response: str
    streaming: bool
    http: HttpRule
    additional_bindings: tuple[HttpRule, ...]


@dataclass
class Proto:
    messages: dict[str, ProtoMessage]
    enums: dict[str, list[tuple[str, int]]]
    rpcs: list[ProtoRpc]


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def _blocks(text: str, keyword: str) -> list[tuple[str, str]]:
    """Top-level ``keyword Name { ... }`` blocks, brace-matched."""
    out: list[tuple[str, str]] = []
    for m in re.finditer(rf"(?m)^{keyword}\s+(\w+)\s*\{{", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append((m.group(1), text[m.end() : i - 1]))
    return out


_FIELD_RE = re.compile(
    r"^\s*(?P<label>repeated\s+|optional\s+)?"
    r"(?:map<\s*(?P<key>[\w.]+)\s*,\s*(?P<mapval>[\w.]+)\s*>|(?P<type>[\w.]+))\s+"
    r"(?P<name>\w+)\s*=\s*(?P<num>\d+)\s*(?P<opts>\[[^\]]*\])?\s*;",
)


def _parse_fields(body: str, oneof: str | None = None) -> list[ProtoField]:
    fields = []
    for line in body.split(";"):
        line = line.strip()
        if not line:
            continue
        m = _FIELD_RE.match(line + ";")
        assert m, f"unparsed proto field line: {line!r}"
        label = (m.group("label") or "").strip()
        opts = m.group("opts") or ""
        fields.append(
            ProtoField(
                name=m.group("name"),
                type=m.group("mapval") or m.group("type"),
                number=int(m.group("num")),
                repeated=label == "repeated" or m.group("key") is not None,
                optional=label == "optional",
                required="REQUIRED" in opts,
                map_key=m.group("key"),
                oneof=oneof,
            )
        )
    return fields


def _parse_message(name: str, body: str) -> ProtoMessage:
    assert not re.search(r"\b(message|enum)\s+\w+\s*\{", body), f"nested type in {name}"
    msg = ProtoMessage(name)
    for oneof_name, oneof_body in _blocks_anywhere(body, "oneof"):
        fields = _parse_fields(oneof_body, oneof=oneof_name)
        msg.fields.extend(fields)
        msg.oneofs[oneof_name] = [f.name for f in fields]
        body = body.replace(oneof_body, "").replace(f"oneof {oneof_name} {{}}", "")
    body = re.sub(r"oneof\s+\w+\s*\{\s*\}", "", body)
    msg.fields.extend(_parse_fields(body))
    msg.fields.sort(key=lambda f: f.number)
    return msg


def _blocks_anywhere(text: str, keyword: str) -> list[tuple[str, str]]:
    out = []
    for m in re.finditer(rf"\b{keyword}\s+(\w+)\s*\{{([^{{}}]*)\}}", text):
        out.append((m.group(1), m.group(2)))
    return out


_RPC_RE = re.compile(
    r"rpc\s+(\w+)\s*\(\s*([\w.]+)\s*\)\s*returns\s*\(\s*(stream\s+)?([\w.]+)\s*\)\s*\{"
)
_HTTP_RE = re.compile(
    r"\b(get|post|put|delete|patch)\s*:\s*\"([^\"]*)\"(?:\s*body\s*:\s*\"([^\"]*)\")?"
)


def _parse_service(body: str) -> list[ProtoRpc]:
    rpcs = []
    for m in _RPC_RE.finditer(body):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            i += 1
        rpc_body = body[m.end() : i - 1]
        rules = [
            HttpRule(verb.upper(), path, body_)
            for verb, path, body_ in (
                (h[0], h[1], h[2] or None) for h in _HTTP_RE.findall(rpc_body)
            )
        ]
        assert rules, f"rpc {m.group(1)} has no google.api.http option"
        rpcs.append(
            ProtoRpc(
                name=m.group(1),
                request=m.group(2),
                response=m.group(4),
                streaming=bool(m.group(3)),
                http=rules[0],
                additional_bindings=tuple(rules[1:]),
            )
        )
    return rpcs


@cache
def load_proto() -> Proto:
    text = _strip_comments(PROTO_PATH.read_text())
    messages = {name: _parse_message(name, body) for name, body in _blocks(text, "message")}
    enums = {
        name: [(v, int(n)) for v, n in re.findall(r"(\w+)\s*=\s*(\d+)\s*;", body)]
        for name, body in _blocks(text, "enum")
    }
    services = dict(_blocks(text, "service"))
    return Proto(messages, enums, _parse_service(services["A2AService"]))


# --------------------------------------------------------------------------- specification.md


@dataclass(frozen=True)
class CodeBlock:
    section: str  #: the deepest numbered heading, e.g. ``"6.5"`` or ``"9.4.1"``
    heading: str  #: that heading's text
    index: int  #: ordinal of the block within its section (0-based)
    lang: str
    text: str
    line: int  #: 1-based line of the opening fence

    @property
    def key(self) -> str:
        return f"{self.section}#{self.index}"


_HEADING_RE = re.compile(r"^(#{2,6})\s+(\d+(?:\.\d+)*)\.?\s+(.*)$")


@cache
def spec_text() -> str:
    return SPEC_PATH.read_text()


@cache
def code_blocks() -> tuple[CodeBlock, ...]:
    """Every fenced block of specification.md, with the numbered section it sits in."""
    blocks: list[CodeBlock] = []
    section, heading = "0", ""
    counts: dict[str, int] = {}
    lines = spec_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        h = _HEADING_RE.match(line)
        if h:
            section, heading = h.group(2), h.group(3)
        elif line.startswith("```"):
            lang = line[3:].strip()
            start = i
            i += 1
            body = []
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            idx = counts.get(section, 0)
            counts[section] = idx + 1
            blocks.append(CodeBlock(section, heading, idx, lang, "\n".join(body), start + 1))
        i += 1
    return tuple(blocks)


def section_text(number: str) -> str:
    """The body of one numbered section, up to the next heading of the same or higher level."""
    lines = spec_text().splitlines()
    out: list[str] = []
    level = None
    for line in lines:
        h = _HEADING_RE.match(line)
        if level is None:
            if h and h.group(2) == number:
                level = len(h.group(1))
            continue
        if h and len(h.group(1)) <= level:
            break
        if line.startswith("#") and not h and len(line) - len(line.lstrip("#")) <= level:
            break
        out.append(line)
    assert level is not None, f"no section {number} in specification.md"
    return "\n".join(out)


def markdown_table(text: str) -> list[list[str]]:
    """Rows (header excluded) of the first pipe table in ``text``; cells stripped of backticks."""
    rows: list[list[str]] = []
    in_table = False
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")]
            if not in_table:
                in_table = True  # header row
                continue
            if all(set(c) <= set(":- ") for c in cells):
                continue
            rows.append(cells)
        elif in_table:
            break
    return rows
