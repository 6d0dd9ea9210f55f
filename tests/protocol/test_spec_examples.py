"""Every JSON example of specification.md §6, §9, §10, §11 (and the §8.5 Agent Card) reads into
our models and writes back the same JSON, after ProtoJSON normalisation.

The examples are extracted from the spec file, not retyped. ``/* ... */`` placeholders are
stripped; blocks that are still not A2A JSON are listed in SKIPPED with the reason, and
examples that break the proto's REQUIRED rules are listed in INVALID with the field our
validation must name. A floor on the count keeps a spec edit from silently dropping coverage.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qsl

import pytest

from simple_a2a.protocol import (
    OPERATIONS,
    AgentCard,
    InvalidParamsError,
    Operation,
    StreamResponse,
)
from simple_a2a.protocol._base import A2AModel
from simple_a2a.protocol.errors import (
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    error_from_jsonrpc,
    error_from_rest,
)
from simple_a2a.protocol.operations import OPERATIONS_BY_METHOD
from tests.protocol._spec import CodeBlock, code_blocks

SECTIONS = ("6", "9", "10", "11")

#: blocks (section#index[/part]) that are not A2A JSON even after stripping comments
SKIPPED = {
    "6.4#1": "RFC 9457 problem+json body; §11.6 (normative for HTTP+JSON) uses google.rpc.Status",
    "6.5#7": "RFC 9457 problem+json body; §11.6 (normative for HTTP+JSON) uses google.rpc.Status",
    "6.7#0": "not JSON: a missing comma and a trailing comma in the file part",
    "9.2#0": "params is only a /* SendMessageRequest */ placeholder",
    "9.4.1#0": "params is only a /* SendMessageRequest object */ placeholder",
    "9.3#0": "generic envelope: 'category/action' is a placeholder method",
    "9.4.1#1": "not JSON: the result object's closing brace is missing",
    "11.7#0": "body is only a /* SendMessageRequest object */ placeholder",
    "11.7#1/0": "data is only a /* StreamResponse object */ placeholder",
    "11.7#1/1": "data is only a /* StreamResponse object */ placeholder",
}

#: examples that omit a field the proto marks REQUIRED: validation must name that field
INVALID = {
    "6.2#1/1": "artifactUpdate.artifact.artifactId",
    "6.3#1": "task.status.message.messageId",
    "11.2#0": "message.messageId",
}

#: abridged objects ("Response includes:"): each present field is checked on its own
FRAGMENTS = {
    "6.9#1": AgentCard,
    "6.9#3": AgentCard,
}

#: lower bounds, so a spec edit that breaks extraction cannot pass unnoticed
MIN_EXAMPLES = 30
MIN_BLOCKS = 35


@dataclass
class Example:
    key: str
    block: CodeBlock
    kind: str  #: "model", "jsonrpc-request", "jsonrpc-error", "rest-error", "fragment"
    data: Any
    model: type[A2AModel] | None = None
    op: Operation | None = None
    status: int | None = None


# ------------------------------------------------------------------------------ extraction


def strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def _route(verb: str, path: str) -> Operation | None:
    path = path.split("?")[0]
    for op in OPERATIONS:
        pattern = re.sub(r"\\\{\w+\\\}", "[^/:]+", re.escape(op.path))
        if op.http_method == verb and re.fullmatch(pattern, path):
            return op
    return None


def _http_parts(block: CodeBlock) -> tuple[str, dict[str, str], str]:
    head, _, body = block.text.partition("\n\n")
    lines = head.splitlines()
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers, body.strip()


def extract() -> tuple[list[Example], list[str]]:
    """All examples, and the keys of every JSON-bearing block seen (for the skip checks)."""
    examples: list[Example] = []
    seen: list[str] = []
    last_op: dict[str, Operation | None] = {}
    for block in code_blocks():
        top = block.section.split(".")[0]
        if top not in SECTIONS and block.section != "8.5":
            continue
        chapter = block.section.rsplit(".", 1)[0] if top == "9" else block.section
        if block.lang == "json":
            seen.append(block.key)
            examples.append(_json_example(block, block.key, block.text))
        elif block.lang == "http":
            start, headers, body = _http_parts(block)
            if start.startswith("HTTP/"):
                status = int(start.split()[1])
                op = last_op.get(chapter)
                if headers.get("content-type") == "text/event-stream":
                    events = [ln[5:].strip() for ln in body.splitlines() if ln.startswith("data:")]
                    for i, event in enumerate(events):
                        key = f"{block.key}/{i}"
                        seen.append(key)
                        examples.append(_model_example(block, key, event, StreamResponse))
                elif body:
                    seen.append(block.key)
                    examples.append(_response_example(block, body, status, op))
            else:
                verb, target = start.split()[:2]
                op = _route(verb, target)
                last_op[chapter] = op
                if body:
                    seen.append(block.key)
                    # a POST to no A2A route is a push notification to the client's webhook:
                    # its body is a StreamResponse (spec §4.3.3)
                    model = op.request_type if op else StreamResponse
                    examples.append(_model_example(block, block.key, body, model, op))
    return examples, seen


def _load(key: str, text: str) -> Any:
    if key in SKIPPED:
        return None
    return json.loads(strip_comments(text))


def _json_example(block: CodeBlock, key: str, text: str) -> Example:
    data = _load(key, text)
    if key in FRAGMENTS:
        return Example(key, block, "fragment", data, FRAGMENTS[key])
    if block.section == "8.5":
        return Example(key, block, "model", data, AgentCard)
    if isinstance(data, dict) and "jsonrpc" in data and "error" in data:
        return Example(key, block, "jsonrpc-error", data)
    if isinstance(data, dict) and "jsonrpc" in data and "method" in data:
        op = OPERATIONS_BY_METHOD.get(data["method"])
        return Example(key, block, "jsonrpc-request", data, op.request_type if op else None, op)
    return Example(key, block, "unknown", data)


def _model_example(
    block: CodeBlock, key: str, text: str, model: type[A2AModel], op: Operation | None = None
) -> Example:
    data = _load(key, text)
    if key in FRAGMENTS:
        return Example(key, block, "fragment", data, FRAGMENTS[key])
    return Example(key, block, "model", data, model, op)


def _response_example(block: CodeBlock, body: str, status: int, op: Operation | None) -> Example:
    data = _load(block.key, body)
    if block.key in FRAGMENTS:
        return Example(block.key, block, "fragment", data, FRAGMENTS[block.key])
    if status >= 400:
        return Example(block.key, block, "rest-error", data, status=status)
    assert op is not None, f"{block.key}: a response without a request before it"
    return Example(block.key, block, "model", data, op.response_type, op, status)


EXAMPLES, SEEN = extract()
CHECKED = [e for e in EXAMPLES if e.key not in SKIPPED]


# ------------------------------------------------------------------------------ normalisation

_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def normalise(value: Any) -> Any:
    """ProtoJSON equivalence: absent ≡ null ≡ empty repeated/map; timestamps as instants
    (millisecond precision, spec §5.6.1)."""
    if isinstance(value, dict):
        out = {k: normalise(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, str) and _TS.match(value):
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(timezone.utc)
        return moment - timedelta(microseconds=moment.microsecond % 1000)
    return value


# ------------------------------------------------------------------------------ tests


def test_extraction_floor() -> None:
    """A spec edit cannot silently drop coverage: enough blocks and examples are found, every
    SKIPPED/INVALID/FRAGMENTS entry names a block that exists, and nothing is unclassified."""
    assert len(SEEN) >= MIN_BLOCKS, len(SEEN)
    assert len(CHECKED) >= MIN_EXAMPLES, len(CHECKED)
    for key in (*SKIPPED, *INVALID, *FRAGMENTS):
        assert key in SEEN, f"stale entry {key}: no such JSON block in the spec any more"
    unknown = [e.key for e in CHECKED if e.kind == "unknown" or (e.kind == "model" and not e.model)]
    assert not unknown
    kinds = {e.kind for e in CHECKED}
    assert kinds == {"model", "jsonrpc-request", "jsonrpc-error", "rest-error", "fragment"}


@pytest.mark.parametrize("key", sorted(SKIPPED))
def test_skipped_blocks_really_are_not_a2a_json(key: str) -> None:
    """Each skip is justified: the block is not JSON, or only a placeholder, or not the
    google.rpc.Status shape; when the spec fixes it this test fails and the entry must go."""
    example = next(e for e in EXAMPLES if e.key == key)
    text = example.block.text
    if "/" in key:
        idx = int(key.split("/")[1])
        text = [ln[5:] for ln in text.splitlines() if ln.startswith("data:")][idx]
    elif example.block.lang == "http":
        text = text.partition("\n\n")[2]
    try:
        data = json.loads(strip_comments(text))
    except json.JSONDecodeError:
        return
    if isinstance(data, dict) and set(data) == {"jsonrpc", "id", "method", "params"}:
        assert data["params"] == {} or data["method"] not in OPERATIONS_BY_METHOD
        return
    assert data == {} or "error" not in data, f"{key} now parses: check it instead"


def _by_kind(kind: str) -> list[Any]:
    return [pytest.param(e, id=e.key) for e in CHECKED if e.kind == kind]


@pytest.mark.parametrize("example", _by_kind("model"))
def test_object_examples(example: Example) -> None:
    """Spec §6, §8.5, §11: each REST body, SSE event, push payload and the sample Agent Card
    reads into its model and writes back the same JSON (after normalisation); examples that
    omit a REQUIRED field are rejected with that field named."""
    assert example.model is not None
    if example.key in INVALID:
        with pytest.raises(InvalidParamsError) as exc:
            example.model.from_dict(example.data)
        fields = [v["field"] for v in exc.value.field_violations]
        assert fields == [INVALID[example.key]]
        return
    model = example.model.from_dict(example.data)
    assert normalise(model.to_dict()) == normalise(example.data)
    # a second trip is exact (the first may round a timestamp to the millisecond)
    again = type(model).from_json(model.to_json())
    assert again.to_dict() == model.to_dict()


@pytest.mark.parametrize("example", _by_kind("jsonrpc-request"))
def test_jsonrpc_requests(example: Example) -> None:
    """Spec §9.3, §9.4: a JSON-RPC 2.0 envelope whose method is a 1.0 operation name; params
    read into the operation's request type and write back the same."""
    data = example.data
    assert data["jsonrpc"] == "2.0"
    assert isinstance(data["id"], (str, int))
    assert example.op is not None and data["method"] == example.op.name
    params = data.get("params", {})
    request = example.op.request_type.from_dict(params, field_prefix="params")
    assert normalise(request.to_dict()) == normalise(params)


@pytest.mark.parametrize("example", _by_kind("jsonrpc-error"))
def test_jsonrpc_errors(example: Example) -> None:
    """Spec §9.5: the error examples are what our errors produce: the typed error comes back
    from the wire, and writing it again gives the same code, message and details."""
    data = example.data
    assert data["jsonrpc"] == "2.0" and "id" in data
    error = data["error"]
    err = error_from_jsonrpc(error)
    assert err.code == error["code"] and err.message == error["message"]
    ours = err.to_jsonrpc()
    assert set(ours) == set(error)
    info = [d for d in error["data"] if d["@type"] == ERROR_INFO_TYPE]
    if info:
        assert info[0]["reason"] == err.reason and info[0]["domain"] == ERROR_DOMAIN
        assert ours == error
    else:
        # our errors always add an ErrorInfo; the other details are the same
        assert ours["data"][0]["@type"] == ERROR_INFO_TYPE
        assert ours["data"][1:] == error["data"]


@pytest.mark.parametrize("example", _by_kind("rest-error"))
def test_rest_errors(example: Example) -> None:
    """Spec §11.6: a google.rpc.Status body; the HTTP status, ``status`` and ErrorInfo reason
    match our error classes (§5.4) and our to_rest() reproduces the body."""
    body = example.data
    assert example.status is not None
    err = error_from_rest(body, example.status)
    assert err.http_status == example.status == body["error"]["code"]
    assert err.grpc_status == body["error"]["status"]
    assert err.to_rest() == body


@pytest.mark.parametrize("example", _by_kind("fragment"))
def test_fragments(example: Example) -> None:
    """Abridged objects (§6.9 "Response includes"): each present field reads into the
    model's field type and writes back the same."""
    assert example.model is not None
    fields = {(info.alias or name): name for name, info in example.model.model_fields.items()}
    for key, value in example.data.items():
        assert key in fields, f"{key} is not a field of {example.model.__name__}"
        model = example.model.from_dict({**_card_skeleton(), key: value})
        assert normalise(model.to_dict()[key]) == normalise(value)


def _card_skeleton() -> dict[str, Any]:
    return {"name": "n", "description": "d", "version": "1"}


# ------------------------------------------------------------------------------ query strings

#: GET examples whose query the model must refuse, with the field it must name (the range
#: checks of pageSize/historyLength in the same example belong to the request handler)
INVALID_QUERIES = {"6.5#6": "status"}


def _query_examples() -> list[Any]:
    out = []
    for block in code_blocks():
        if block.section.split(".")[0] not in SECTIONS or block.lang != "http":
            continue
        start = block.text.splitlines()[0]
        verb, target = start.split()[:2]
        if verb == "GET" and "?" in target:
            out.append(pytest.param(block, id=block.key))
    return out


@pytest.mark.parametrize("block", _query_examples())
def test_query_examples(block: CodeBlock) -> None:
    """Spec §11.5: GET parameters travel as camelCase query parameters (numbers and enums as
    strings) plus path variables; they read into the operation's request type."""
    verb, target = block.text.splitlines()[0].split()[:2]
    path, _, query = target.partition("?")
    op = _route(verb, path)
    assert op is not None
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/:]+)", re.escape(op.path))
    match = re.fullmatch(pattern, path)
    assert match is not None
    params: dict[str, Any] = dict(parse_qsl(query))
    params.update(match.groupdict())
    if block.key in INVALID_QUERIES:
        with pytest.raises(InvalidParamsError) as exc:
            op.request_type.from_dict(params)
        assert [v["field"] for v in exc.value.field_violations] == [INVALID_QUERIES[block.key]]
        return
    request = op.request_type.from_dict(params)
    wire = request.to_dict()
    for key, value in params.items():
        assert str(wire[key]) == value, key


def test_query_floor() -> None:
    assert len(_query_examples()) >= 5
