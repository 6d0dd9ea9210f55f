"""A2A 0.3 ⇄ 1.0 wire conversions (``simple_a2a.protocol.v03``).

Every 0.3 object produced is validated against ``spec/v0.3/a2a.json``; every 1.0 dict produced is
parsed by the 1.0 models. The checklist is ``spec/v1.0/whats-new-v1.md``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simple_a2a.protocol import (
    FINAL_STATES,
    AgentCard,
    InvalidParamsError,
    Message,
    Part,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskNotFoundError,
    TaskPushNotificationConfig,
    TaskState,
    operation,
)
from simple_a2a.protocol.v03 import (
    card_from_v03,
    card_to_v03,
    error_to_v03,
    request_from_v03,
    request_to_v03,
    result_from_v03,
    result_to_v03,
)

V03 = Path("/work/shared/spec/v0.3")
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- 0.3 schema


@cache
def _schema() -> dict[str, Any]:
    return json.loads((V03 / "a2a.json").read_text())  # type: ignore[no-any-return]


@cache
def _validator(definition: str) -> jsonschema.Draft7Validator:
    schema = {"$ref": f"#/definitions/{definition}", "definitions": _schema()["definitions"]}
    return jsonschema.Draft7Validator(schema)


def valid03(definition: str, value: Any) -> None:
    """Assert ``value`` is a valid 0.3 ``definition`` (a2a.json)."""
    errors = sorted(_validator(definition).iter_errors(value), key=str)
    assert not errors, f"{definition}: {errors[0].message} at {list(errors[0].absolute_path)}"


_EVENT_DEFINITION = {
    "task": "Task",
    "message": "Message",
    "status-update": "TaskStatusUpdateEvent",
    "artifact-update": "TaskArtifactUpdateEvent",
}


def valid03_event(value: Any) -> None:
    valid03(_EVENT_DEFINITION[value["kind"]], value)


# --------------------------------------------------------------------------- strategies (1.0)

ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
words = st.text(min_size=0, max_size=20)
scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | words
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ids, inner, max_size=3),
    max_leaves=4,
)
metadata = st.none() | st.dictionaries(ids, json_values, min_size=1, max_size=3)
media_types = st.none() | st.sampled_from(["image/png", "application/pdf", "text/csv"])
timestamps = st.none() | st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)
)


def _part(**kw: Any) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if v is not None}


# Parts of each kind. Lossy (documented): mediaType/filename of text and data parts.
text_parts = st.builds(lambda t, m: _part(text=t, metadata=m), words, metadata)
raw_parts = st.builds(
    lambda b, mt, fn, m: _part(raw=b, mediaType=mt, filename=fn, metadata=m),
    st.binary(max_size=20),
    media_types,
    st.none() | ids,
    metadata,
)
url_parts = st.builds(
    lambda u, mt, fn, m: _part(
        url=f"https://example.com/{u}", mediaType=mt, filename=fn, metadata=m
    ),
    ids,
    media_types,
    st.none() | ids,
    metadata,
)
data_parts = st.builds(
    lambda d, m: _part(data=d, metadata=m), json_values.filter(lambda v: v is not None), metadata
)


def _canon(model: Any, d: dict[str, Any]) -> dict[str, Any]:
    return model.from_dict({k: v for k, v in d.items() if v is not None}).to_dict()  # type: ignore[no-any-return]


parts = st.one_of(text_parts, raw_parts, url_parts, data_parts).map(lambda p: _canon(Part, p))
messages = st.builds(
    lambda mid, role, ps, ctx, tid, ext, refs, m: _canon(
        Message,
        {
            "messageId": mid,
            "role": role,
            "parts": ps,
            "contextId": ctx,
            "taskId": tid,
            "extensions": ext,
            "referenceTaskIds": refs,
            "metadata": m,
        },
    ),
    ids,
    st.sampled_from(["ROLE_USER", "ROLE_AGENT"]),
    st.lists(parts, min_size=1, max_size=3),
    st.none() | ids,
    st.none() | ids,
    st.lists(ids, max_size=2),
    st.lists(ids, max_size=2),
    metadata,
)
states = st.sampled_from([s.value for s in TaskState])
statuses = st.builds(
    lambda s, msg, ts: _part(state=s, message=msg, timestamp=ts and ts.isoformat()),
    states,
    st.none() | messages,
    timestamps,
)
artifacts = st.builds(
    lambda aid, name, desc, ps, ext, m: _part(
        artifactId=aid, name=name, description=desc, parts=ps, extensions=ext, metadata=m
    ),
    ids,
    st.none() | words,
    st.none() | words,
    st.lists(parts, min_size=1, max_size=3),
    st.lists(ids, max_size=2),
    metadata,
)
tasks = st.builds(
    lambda tid, ctx, status, arts, hist, m: _canon(
        Task,
        {
            "id": tid,
            "contextId": ctx,
            "status": status,
            "artifacts": arts,
            "history": hist,
            "metadata": m,
        },
    ),
    ids,
    st.none() | ids,
    statuses,
    st.lists(artifacts, max_size=2),
    st.lists(messages, max_size=2),
    metadata,
)
status_updates = st.builds(
    lambda tid, ctx, status, m: _part(taskId=tid, contextId=ctx, status=status, metadata=m),
    ids,
    ids,
    statuses,
    metadata,
)
artifact_updates = st.builds(
    lambda tid, ctx, art, app, last, m: _part(
        taskId=tid, contextId=ctx, artifact=art, append=app, lastChunk=last, metadata=m
    ),
    ids,
    ids,
    artifacts,
    st.none() | st.booleans(),
    st.none() | st.booleans(),
    metadata,
)
stream_responses = st.one_of(
    tasks.map(lambda t: {"task": t}),
    messages.map(lambda m: {"message": m}),
    status_updates.map(lambda e: {"statusUpdate": e}),
    artifact_updates.map(lambda e: {"artifactUpdate": e}),
).map(lambda r: _canon(StreamResponse, r))
auths = st.none() | st.builds(
    lambda s, c: _part(scheme=s, credentials=c),
    st.sampled_from(["Bearer", "Basic"]),
    st.none() | ids,
)
# Lossy (documented): 1.0 ``tenant``; inside SendMessage also ``taskId``.
push_configs = st.builds(
    lambda tid, cid, u, tok, auth: _canon(
        TaskPushNotificationConfig,
        _part(
            taskId=tid, id=cid, url=f"https://hooks.example.com/{u}", token=tok, authentication=auth
        ),
    ),
    ids,
    ids,
    ids,
    st.none() | ids,
    auths,
)


# --------------------------------------------------------------------------- round trips


@SETTINGS
@given(parts)
def test_part_round_trip(part: dict[str, Any]) -> None:
    """whats-new-v1.md: Part Type Unification — TextPart/FilePart/DataPart ⇄ unified Part;
    ``file.bytes``/``file.uri`` ⇄ ``raw``/``url``, ``mimeType`` ⇄ ``mediaType``, ``name`` ⇄
    ``filename``. Non-object data travels as ``{"value": ...}`` marked ``data_part_compat``."""
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [part]}
    down = result_to_v03("SendMessage", {"message": message})
    valid03("Message", down)
    assert down["parts"][0]["kind"] == {"text": "text", "raw": "file", "url": "file"}.get(
        next(k for k in ("text", "raw", "url", "data") if k in part), "data"
    )
    assert result_from_v03("SendMessage", down) == {"message": message}


@SETTINGS
@given(tasks)
def test_task_round_trip(task: dict[str, Any]) -> None:
    """whats-new-v1.md: TaskStatus Object (TASK_STATE_* ⇄ kebab-case), Message Object (ROLE_*),
    Stream Event Discriminator Pattern (``kind: "task"``). 0.3 §6.1: Task."""
    for op in ("GetTask", "CancelTask"):
        down = result_to_v03(op, task)
        valid03("Task", down)
        up = result_from_v03(op, down)
        assert up == task
        assert Task.from_dict(up).to_dict() == task
    down = result_to_v03("SendMessage", {"task": task})
    valid03("Task", down)
    assert result_from_v03("SendMessage", down) == {"task": task}


@SETTINGS
@given(messages)
def test_message_round_trip(message: dict[str, Any]) -> None:
    """whats-new-v1.md: Message Object — role ``user``/``agent`` ⇄ ``ROLE_USER``/``ROLE_AGENT``;
    0.3 §7.1 message/send returns the Message itself with ``kind: "message"``."""
    down = result_to_v03("SendMessage", {"message": message})
    valid03("Message", down)
    up = result_from_v03("SendMessage", down)
    assert SendMessageResponse.from_dict(up).to_dict() == up == {"message": message}


@SETTINGS
@given(stream_responses)
def test_stream_event_round_trip(event: dict[str, Any]) -> None:
    """whats-new-v1.md: Stream Event Objects — ``{"statusUpdate": ...}`` ⇄ ``kind:
    "status-update"`` with a derived ``final``; 0.3 §7.2.1 SendStreamingMessageResponse."""
    for op in ("SendStreamingMessage", "SubscribeToTask"):
        down = result_to_v03(op, event)
        valid03_event(down)
        valid03("SendStreamingMessageSuccessResponse", {"jsonrpc": "2.0", "id": 1, "result": down})
        up = result_from_v03(op, down)
        assert up == event
        assert StreamResponse.from_dict(up).to_dict() == event


@pytest.mark.parametrize("state", list(TaskState))
def test_final_is_derived_from_the_state(state: TaskState) -> None:
    """whats-new-v1.md: TaskStatusUpdateEvent — 0.3 ``final`` was removed in 1.0; downward it is
    true at a terminal or interrupted state, where the stream closes (v1.0 §3.1.2)."""
    event = {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": state.value}}}
    down = result_to_v03("SendStreamingMessage", event)
    valid03("TaskStatusUpdateEvent", down)
    assert down["final"] is (state in FINAL_STATES)
    assert result_from_v03("SendStreamingMessage", down) == event  # ``final`` is dropped upward


@SETTINGS
@given(push_configs)
def test_push_config_round_trip(config: dict[str, Any]) -> None:
    """whats-new-v1.md: Push Notification Operations ("TaskPushNotificationConfig flattened"),
    PushNotificationConfig Object (``schemes[]`` ⇄ ``scheme``); 0.3 §6.10, §7.5-§7.8."""
    for op in ("CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig"):
        down = result_to_v03(op, config)
        valid03("TaskPushNotificationConfig", down)
        assert result_from_v03(op, down) == config
    # set: the request is the same object
    params = request_to_v03("CreateTaskPushNotificationConfig", config)
    valid03("TaskPushNotificationConfig", params)
    assert request_from_v03("CreateTaskPushNotificationConfig", params) == config
    # list: a bare array in 0.3
    listed = result_to_v03("ListTaskPushNotificationConfigs", {"configs": [config, config]})
    valid03(
        "ListTaskPushNotificationConfigSuccessResponse",
        {"jsonrpc": "2.0", "id": 1, "result": listed},
    )
    assert result_from_v03("ListTaskPushNotificationConfigs", listed) == {
        "configs": [config, config]
    }
    # get / delete: 0.3 {id: task id, pushNotificationConfigId} ⇄ 1.0 {taskId, id}
    ref = {"taskId": config["taskId"], "id": config["id"]}
    for op, definition in (
        ("GetTaskPushNotificationConfig", "GetTaskPushNotificationConfigParams"),
        ("DeleteTaskPushNotificationConfig", "DeleteTaskPushNotificationConfigParams"),
    ):
        params = request_to_v03(op, ref)
        valid03(definition, params)
        assert params == {"id": config["taskId"], "pushNotificationConfigId": config["id"]}
        assert request_from_v03(op, params) == ref
    params = request_to_v03("ListTaskPushNotificationConfigs", {"taskId": config["taskId"]})
    valid03("ListTaskPushNotificationConfigParams", params)
    assert request_from_v03("ListTaskPushNotificationConfigs", params) == {
        "taskId": config["taskId"]
    }


@SETTINGS
@given(
    messages,
    st.lists(st.sampled_from(["text/plain", "application/json"]), max_size=2),
    st.none() | push_configs,
    st.none() | st.integers(1, 50),
    st.none() | st.booleans(),
    metadata,
)
def test_send_message_request_round_trip(
    message: dict[str, Any],
    modes: list[str],
    push: dict[str, Any] | None,
    history: int | None,
    return_immediately: bool | None,
    meta: dict[str, Any] | None,
) -> None:
    """0.3 §7.1.1 MessageSendParams ⇄ v1.0 §3.2.1 SendMessageRequest: ``pushNotificationConfig``
    ⇄ ``taskPushNotificationConfig``, ``blocking`` ⇄ ``not returnImmediately`` (v1.0 §3.2.2)."""
    if push is not None:
        push = {k: v for k, v in push.items() if k != "taskId"}  # lossy: no taskId in 0.3
    config = _part(
        acceptedOutputModes=modes or None,
        taskPushNotificationConfig=push,
        historyLength=history,
        returnImmediately=return_immediately,
    )
    request = _canon(
        SendMessageRequest, _part(message=message, configuration=config or None, metadata=meta)
    )
    for op in ("SendMessage", "SendStreamingMessage"):
        params = request_to_v03(op, request)
        valid03("MessageSendParams", params)
        if return_immediately is not None:
            assert params["configuration"]["blocking"] is (not return_immediately)
        up = request_from_v03(op, params)
        assert up == request
        assert SendMessageRequest.from_dict(up).to_dict() == request


@pytest.mark.parametrize(
    ("op", "request10", "definition"),
    [
        ("GetTask", {"id": "t1", "historyLength": 3}, "TaskQueryParams"),
        ("GetTask", {"id": "t1"}, "TaskQueryParams"),
        ("CancelTask", {"id": "t1", "metadata": {"why": "done"}}, "TaskIdParams"),
        ("SubscribeToTask", {"id": "t1"}, "TaskIdParams"),
    ],
)
def test_task_id_requests_round_trip(op: str, request10: dict[str, Any], definition: str) -> None:
    """0.3 §7.3.1 TaskQueryParams, §7.4.1 TaskIdParams ⇄ GetTask/CancelTask/SubscribeToTask."""
    params = request_to_v03(op, request10)
    valid03(definition, params)
    up = request_from_v03(op, params)
    assert up == request10
    operation(op).request_type.from_dict(up)


# --------------------------------------------------------------------------- cards

_schemes_10 = st.sampled_from(
    [
        {"apiKeySecurityScheme": {"location": "header", "name": "X-Key", "description": "k"}},
        {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        {
            "oauth2SecurityScheme": {
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://a.example.com/auth",
                        "tokenUrl": "https://a.example.com/token",
                        "scopes": {"read": "Read"},
                        "pkceRequired": True,
                    }
                },
                "oauth2MetadataUrl": "https://a.example.com/.well-known/oauth",
            }
        },
        {
            "oauth2SecurityScheme": {
                "flows": {
                    "deviceCode": {
                        "deviceAuthorizationUrl": "https://a.example.com/device",
                        "tokenUrl": "https://a.example.com/token",
                    }
                }
            }
        },
        {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://a.example.com/oidc"}},
        {"mtlsSecurityScheme": {"description": "client certificate"}},
    ]
)
_requirements = st.lists(
    st.dictionaries(ids, st.lists(ids, max_size=2), min_size=1, max_size=2).map(
        lambda d: {"schemes": {k: {"list": v} for k, v in d.items()}}
    ),
    max_size=2,
)
_interfaces = st.lists(
    st.builds(
        lambda u, b, v, t: _part(
            url=f"https://agent.example.com/{u}", protocolBinding=b, protocolVersion=v, tenant=t
        ),
        ids,
        st.sampled_from(["JSONRPC", "HTTP+JSON", "GRPC"]),
        st.sampled_from(["1.0", "0.3"]),
        st.none() | ids,
    ),
    min_size=1,
    max_size=3,
)
_skills = st.builds(
    lambda i, tags, reqs: _part(
        id=i, name=f"skill {i}", description="does things", tags=tags, securityRequirements=reqs
    ),
    ids,
    st.lists(ids, max_size=2),
    _requirements,
)
cards = st.builds(
    lambda name, ifaces, caps, schemes, reqs, skills: _canon(
        AgentCard,
        {
            "name": name,
            "description": "an agent",
            "version": "1.0.0",
            "supportedInterfaces": ifaces,
            "capabilities": caps,
            "securitySchemes": schemes,
            "securityRequirements": reqs,
            "skills": skills,
        },
    ),
    ids,
    _interfaces,
    st.fixed_dictionaries(
        {},
        optional={
            "streaming": st.booleans(),
            "pushNotifications": st.booleans(),
            "extendedAgentCard": st.booleans(),
            "extensions": st.lists(
                st.builds(lambda u, r: {"uri": f"urn:{u}", "required": r}, ids, st.booleans()),
                max_size=2,
            ),
        },
    ),
    st.dictionaries(ids, _schemes_10, max_size=3),
    _requirements,
    st.lists(_skills, max_size=2),
)


@SETTINGS
@given(cards)
def test_combined_card_is_read_by_both_versions(card: dict[str, Any]) -> None:
    """whats-new-v1.md: AgentCard Object, Agent Card Structure — one document carries the 1.0
    fields and the 0.3 ``url``/``preferredTransport``/``additionalInterfaces``/``protocolVersion``
    /``supportsAuthenticatedExtendedCard``; 0.3 §5.5, §5.6."""
    combined = card_to_v03(card)
    valid03("AgentCard", combined)
    assert combined["protocolVersion"] == "0.3.0"
    assert AgentCard.from_dict(combined).to_dict() == card  # a 1.0 reader sees the 1.0 card
    assert AgentCard.from_dict(card_from_v03(combined)).to_dict() == card
    interfaces = card["supportedInterfaces"]
    chosen = [i for i in interfaces if i["protocolVersion"].startswith("0.")] or interfaces
    assert combined["url"] == chosen[0]["url"]
    assert combined["preferredTransport"] == chosen[0]["protocolBinding"]
    caps = card["capabilities"]
    assert combined.get("supportsAuthenticatedExtendedCard") == caps.get("extendedAgentCard")
    assert "stateTransitionHistory" not in combined["capabilities"]


@SETTINGS
@given(cards)
def test_pure_v03_card_converts_up(card: dict[str, Any]) -> None:
    """A card with only the 0.3 fields (a 0.3 agent) -> 1.0: ``supportedInterfaces`` from
    ``url``/``preferredTransport``/``additionalInterfaces``; security schemes from their ``type``
    (whats-new-v1.md: AgentCard Object; 0.3 §5.5.3)."""
    combined = card_to_v03(card)
    pure = {
        k: v
        for k, v in combined.items()
        if k not in ("supportedInterfaces", "securityRequirements")
    }
    # a device-code-only OAuth scheme has no 0.3 flows (lossy, docs/compat-v03.md): left out
    pure["securitySchemes"] = {
        name: {k: v for k, v in s.items() if not k.endswith("SecurityScheme")}
        for name, s in combined.get("securitySchemes", {}).items()
        if s.get("flows") != {}
    }
    pure["skills"] = [
        {k: v for k, v in s.items() if k != "securityRequirements"} for s in pure["skills"]
    ]
    valid03("AgentCard", pure)
    up = card_from_v03(pure)
    parsed = AgentCard.from_dict(up)
    assert next((i.url, i.protocol_binding) for i in parsed.supported_interfaces) == (
        combined["url"],
        combined["preferredTransport"],
    )
    assert all(i.protocol_version == "0.3" for i in parsed.supported_interfaces)
    # the security scheme kinds survive (device-code flows have no 0.3 form)
    assert {n: next(iter(s)) for n, s in up.get("securitySchemes", {}).items()} == {
        n: next(iter(s))
        for n, s in card.get("securitySchemes", {}).items()
        if n in pure["securitySchemes"]
    }
    assert up.get("securityRequirements", []) == card.get("securityRequirements", [])
    assert valid03("AgentCard", card_to_v03(up)) is None


def test_card_prefers_v03_interfaces() -> None:
    """0.3 §5.6.1: ``url`` must speak ``preferredTransport``; interfaces that declare 0.x win."""
    card = _canon(
        AgentCard,
        {
            "name": "a",
            "description": "d",
            "version": "1",
            "supportedInterfaces": [
                {"url": "https://x/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "https://x/v03", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
            ],
        },
    )
    combined = card_to_v03(card)
    assert (combined["url"], combined["preferredTransport"]) == ("https://x/v03", "HTTP+JSON")
    assert combined["additionalInterfaces"] == [{"url": "https://x/v03", "transport": "HTTP+JSON"}]
    with pytest.raises(InvalidParamsError, match="supportedInterfaces"):
        card_to_v03({**card, "supportedInterfaces": []})


def test_extended_card_operation() -> None:
    """0.3 §7.10 agent/getAuthenticatedExtendedCard ⇄ GetExtendedAgentCard (no params)."""
    assert request_from_v03("GetExtendedAgentCard", None) == {}
    assert request_to_v03("GetExtendedAgentCard", {"tenant": "t"}) == {}
    card = _canon(
        AgentCard,
        {
            "name": "a",
            "description": "d",
            "version": "1",
            "supportedInterfaces": [
                {"url": "https://x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
        },
    )
    down = result_to_v03("GetExtendedAgentCard", card)
    valid03("AgentCard", down)
    assert AgentCard.from_dict(result_from_v03("GetExtendedAgentCard", down)).to_dict() == card


# --------------------------------------------------------------------------- spec examples


def _lenient_json(text: str) -> Any:
    """The spec's examples carry comments, trailing commas and "..." placeholders."""
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*', lambda m: m.group(1) or "", text)
    text = re.sub(r"(\"bytes\":\s*\"[A-Za-z0-9+/=]*)\.\.\.\"", r'\1"', text)
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    return json.loads(text)


def _spec_examples() -> list[tuple[int, Any]]:
    text = (V03 / "specification.md").read_text()
    out: list[tuple[int, Any]] = []
    for i, block in enumerate(re.findall(r"```json\s*\n(.*?)```", text, re.S)):
        if "data:" in block:  # an SSE stream: one JSON-RPC response per event
            for event in re.split(r"^\s*data:", block, flags=re.M)[1:]:
                out.append((i, _lenient_json(event)))
        else:
            out.append((i, _lenient_json(block)))
    return out


def _exchanges() -> list[tuple[str, str, Any, str]]:
    """(id, 1.0 operation, 0.3 value, "params" | "result"): responses follow their request."""
    found: list[tuple[str, str, Any, str]] = []
    method = None
    for n, (i, doc) in enumerate(_spec_examples()):
        if not isinstance(doc, dict) or "jsonrpc" not in doc:
            continue
        if "method" in doc:
            method = operation(doc["method"]).name
            found.append((f"{n}-block{i}-{method}-params", method, doc.get("params"), "params"))
        elif "result" in doc and method:
            found.append((f"{n}-block{i}-{method}-result", method, doc["result"], "result"))
    return found


#: Spec examples that are themselves invalid 0.3 (the 0.3 schema rejects them too), with the
#: field our conversion, or the 1.0 model after it, names.
_BROKEN = {
    "5-block5-SendMessage-result": "message.role",  # the agent's Message has no role
    "6-block6-SendStreamingMessage-params": "message.parts[1].file",  # "data", not "bytes"
    "7-block7-SendStreamingMessage-result": "history[0].parts[1].file",  # the same file part
    "12-block8-SendMessage-params": "message.messageId",  # messageId outside the message
    "15-block11-SendMessage-result": "task.status.message.messageId",  # no messageId
}
_PARAMS_DEFINITION = {
    "SendMessage": "MessageSendParams",
    "SendStreamingMessage": "MessageSendParams",
    "GetExtendedAgentCard": "TaskIdParams",
}
_RESULT_DEFINITION = {"SendMessage": "SendMessageSuccessResponse"}


def test_spec_examples_were_found() -> None:
    ids_ = [x[0] for x in _exchanges()]
    assert len(ids_) >= 19
    assert set(_BROKEN) <= set(ids_)


@pytest.mark.parametrize(
    ("name", "op", "value", "where"), _exchanges(), ids=[x[0] for x in _exchanges()]
)
def test_spec_examples_convert_up_and_back(name: str, op: str, value: Any, where: str) -> None:
    """0.3 specification.md §9 (Common Workflows & Examples): every JSON-RPC example converts to
    a valid 1.0 request or result (parsed by the 1.0 models) and back to valid 0.3."""
    spec = operation(op)
    if name in _BROKEN:
        if where == "params":
            assert not _validator(_PARAMS_DEFINITION[op]).is_valid(value)
        else:
            envelope = {"jsonrpc": "2.0", "id": 1, "result": value}
            assert not _validator("SendStreamingMessageSuccessResponse").is_valid(envelope)
        with pytest.raises(InvalidParamsError, match=re.escape(_BROKEN[name])):
            converted = (request_from_v03 if where == "params" else result_from_v03)(op, value)
            (spec.request_type if where == "params" else spec.response_type).from_dict(converted)
        return
    if where == "params":
        up = request_from_v03(op, value)
        parsed = spec.request_type.from_dict(up).to_dict()
        back = request_to_v03(op, parsed)
        if value is not None:
            valid03(_PARAMS_DEFINITION[op], back)
            assert back["message"]["parts"] == _with_kinds(value["message"]["parts"])
            assert back["message"]["role"] == value["message"]["role"]
    else:
        up = result_from_v03(op, value)
        parsed = spec.response_type.from_dict(up).to_dict()
        back = result_to_v03(op, parsed)
        valid03_event(back)
        assert back["kind"] == value.get("kind", back["kind"])
        if "status" in value:
            assert back["status"]["state"] == value["status"]["state"]
        for key in ("id", "taskId", "contextId", "artifact", "append", "lastChunk", "final"):
            assert back.get(key) == value.get(key), key


def _with_kinds(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"kind": next(k for k in ("text", "file", "data") if k in p), **p} for p in parts]


def test_spec_card_example() -> None:
    """0.3 specification.md §5.7 Sample Agent Card -> 1.0 (whats-new-v1.md: AgentCard Object)
    and back to a combined card with the same 0.3 fields."""
    text = (V03 / "specification.md").read_text()
    card03 = _lenient_json(re.findall(r"```json\s*\n(.*?)```", text, re.S)[0])
    valid03("AgentCard", card03)
    up = AgentCard.from_dict(card_from_v03(card03))
    assert [(i.url, i.protocol_binding, i.protocol_version) for i in up.supported_interfaces] == [
        ("https://georoute-agent.example.com/a2a/v1", "JSONRPC", "0.2"),
        ("https://georoute-agent.example.com/a2a/grpc", "GRPC", "0.2"),
        ("https://georoute-agent.example.com/a2a/json", "HTTP+JSON", "0.2"),
    ]
    assert up.capabilities.extended_agent_card is True
    assert up.security_schemes["google"].open_id_connect_security_scheme is not None
    back = card_to_v03(up.to_dict())
    valid03("AgentCard", back)
    for key in ("url", "preferredTransport", "additionalInterfaces", "security", "skills", "name"):
        assert back[key] == card03[key], key
    assert back["securitySchemes"]["google"]["type"] == "openIdConnect"


# --------------------------------------------------------------------------- defaults, lossy points


def test_blocking_default() -> None:
    """0.3 MessageSendConfiguration.blocking has no stated default; 1.0 is blocking by default
    (v1.0 §3.2.2). Absent stays absent; explicit values flip into ``returnImmediately``."""
    msg = {
        "kind": "message",
        "messageId": "m",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    cases = [({}, None), ({"blocking": True}, False), ({"blocking": False}, True)]
    for config, expected in cases:
        up = request_from_v03("SendMessage", {"message": msg, "configuration": config})
        assert up["configuration"].get("returnImmediately") is expected
        SendMessageRequest.from_dict(up)


def test_push_config_id_defaults_to_task_id() -> None:
    """0.3 §7.5/§7.6.1: ``pushNotificationConfig.id`` and ``pushNotificationConfigId`` are
    optional; the task id stands in for both, so set-then-get works for 0.3 clients."""
    params = {"taskId": "t1", "pushNotificationConfig": {"url": "https://h"}}
    valid03("TaskPushNotificationConfig", params)
    up = request_from_v03("CreateTaskPushNotificationConfig", params)
    assert up == {"taskId": "t1", "id": "t1", "url": "https://h"}
    TaskPushNotificationConfig.from_dict(up)
    assert request_from_v03("GetTaskPushNotificationConfig", {"id": "t1"}) == {
        "taskId": "t1",
        "id": "t1",
    }


def test_lossy_points() -> None:
    """docs/compat-v03.md: the documented lossy fields."""
    # text/data mediaType and filename have no 0.3 form
    part = {"text": "x", "mediaType": "text/markdown", "filename": "a.md"}
    down = result_to_v03(
        "SendMessage", {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [part]}}
    )
    assert down["parts"] == [{"kind": "text", "text": "x"}]
    # only the first 0.3 auth scheme survives; an empty list drops authentication
    auth = {
        "url": "https://h",
        "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c"},
    }
    up = request_from_v03(
        "CreateTaskPushNotificationConfig", {"taskId": "t", "pushNotificationConfig": auth}
    )
    assert up["authentication"] == {"scheme": "Bearer", "credentials": "c"}
    empty = {"url": "https://h", "authentication": {"schemes": []}}
    up = request_from_v03(
        "CreateTaskPushNotificationConfig", {"taskId": "t", "pushNotificationConfig": empty}
    )
    assert "authentication" not in up
    # historyLength 0 means unlimited in 0.3 and "none" in 1.0: it becomes unset both ways
    assert request_from_v03("GetTask", {"id": "t", "historyLength": 0}) == {"id": "t"}
    assert request_to_v03("GetTask", {"id": "t", "historyLength": 0}) == {"id": "t"}
    # tenant has no 0.3 form
    assert request_to_v03("GetTask", {"id": "t", "tenant": "acme"}) == {"id": "t"}
    # list pagination is lost
    assert request_to_v03("ListTaskPushNotificationConfigs", {"taskId": "t", "pageSize": 5}) == {
        "id": "t"
    }


def test_timestamps_are_normalised_upward() -> None:
    """whats-new-v1.md: TaskStatus Object — 1.0 timestamps are UTC with milliseconds; 0.3
    examples carry ``2025-04-02T16:59:25.331844`` (no zone) and ``2024-03-15T10:15:00Z``."""
    for given_, expected in [
        ("2025-04-02T16:59:25.331844", "2025-04-02T16:59:25.331Z"),
        ("2024-03-15T10:15:00Z", "2024-03-15T10:15:00.000Z"),
        ("2024-03-15T12:15:00+02:00", "2024-03-15T10:15:00.000Z"),
    ]:
        task = {
            "kind": "task",
            "id": "t",
            "contextId": "c",
            "status": {"state": "working", "timestamp": given_},
        }
        assert result_from_v03("GetTask", task)["status"]["timestamp"] == expected


def test_list_tasks() -> None:
    """whats-new-v1.md: List Tasks (new in 1.0; 0.3 REST ``GET /v1/tasks`` returns ``[Task]``):
    ``tasks/list`` gets the 1.0 envelope with 0.3 tasks; either result form is read."""
    task = {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}
    result = {"tasks": [task], "nextPageToken": "", "pageSize": 1, "totalSize": 1}
    down = result_to_v03("ListTasks", result)
    valid03("Task", down["tasks"][0])
    assert down["tasks"][0]["status"]["state"] == "input-required"
    assert result_from_v03("ListTasks", down) == result
    assert result_from_v03("ListTasks", down["tasks"]) == {"tasks": [task]}
    params = request_to_v03("ListTasks", {"status": "TASK_STATE_WORKING", "pageSize": 10})
    assert params == {"status": "working", "pageSize": 10}
    assert request_from_v03("ListTasks", params) == {"status": "TASK_STATE_WORKING", "pageSize": 10}
    assert request_from_v03("ListTasks", None) == {}


def test_delete_result() -> None:
    """0.3 DeleteTaskPushNotificationConfigSuccessResponse.result is ``null``; 1.0 is Empty."""
    assert result_to_v03("DeleteTaskPushNotificationConfig", {}) is None
    assert result_from_v03("DeleteTaskPushNotificationConfig", None) == {}


def test_parts_without_kind_are_inferred() -> None:
    """Be liberal in what you accept: 0.3 objects in the spec's own examples omit ``kind``."""
    msg = {"messageId": "m", "role": "agent", "parts": [{"text": "a"}, {"data": {"x": 1}}]}
    assert result_from_v03("SendMessage", msg) == {
        "message": {
            "messageId": "m",
            "role": "ROLE_AGENT",
            "parts": [{"text": "a"}, {"data": {"x": 1}}],
        }
    }


# --------------------------------------------------------------------------- errors


def test_error_to_v03() -> None:
    """0.3 §8: the same codes; ``data`` stays (0.3 JSONRPCError.data is any value)."""
    error = TaskNotFoundError(task_id="t1").to_jsonrpc()
    down = error_to_v03(error)
    valid03("TaskNotFoundError", down)
    valid03("JSONRPCError", down)
    assert (down["code"], down["message"], down["data"]) == (
        -32001,
        error["message"],
        error["data"],
    )
    with pytest.raises(InvalidParamsError, match="code"):
        error_to_v03({"message": "x"})


_MSG = {
    "kind": "message",
    "messageId": "m",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
}


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: request_from_v03("SendMessage", []), "(root)"),  # type: ignore[arg-type]
        (lambda: request_from_v03("SendMessage", {"message": "hi"}), "message"),
        (
            lambda: request_from_v03(
                "SendMessage", {"message": {**_MSG, "parts": {"kind": "text"}}}
            ),
            "message.parts",
        ),
        (
            lambda: request_from_v03(
                "SendMessage", {"message": {**_MSG, "parts": [{"kind": "video"}]}}
            ),
            "message.parts[0].kind",
        ),
        (
            lambda: request_from_v03(
                "SendMessage",
                {"message": {**_MSG, "parts": [{"kind": "file", "file": {"name": "a"}}]}},
            ),
            "message.parts[0].file",
        ),
        (
            lambda: request_from_v03("SendMessage", {"message": {**_MSG, "role": "bot"}}),
            "message.role",
        ),
        (
            lambda: request_from_v03(
                "SendMessage", {"message": _MSG, "configuration": {"blocking": "yes"}}
            ),
            "configuration.blocking",
        ),
        (lambda: request_from_v03("GetTaskPushNotificationConfig", {}), "id"),
        (
            lambda: result_from_v03("GetTask", {"id": "t", "status": {"state": "done"}}),
            "status.state",
        ),
        (
            lambda: result_from_v03(
                "GetTask", {"id": "t", "status": {"state": "working", "timestamp": "noon"}}
            ),
            "status.timestamp",
        ),
        (lambda: result_from_v03("SendStreamingMessage", {"kind": "nope"}), "kind"),
        (lambda: result_from_v03("GetTask", {"id": "t", "status": {"state": []}}), "status.state"),
        (lambda: result_to_v03("GetTask", {"id": "t", "status": {"state": {}}}), "status.state"),
        (lambda: request_from_v03("SendStreamingMessage", None), "(root)"),
        (lambda: result_to_v03("SendStreamingMessage", {}), "(root)"),
        (
            lambda: result_to_v03(
                "SendMessage",
                {"message": {"messageId": "m", "role": "ROLE_UNSPECIFIED", "parts": []}},
            ),
            "message.role",
        ),
        (
            lambda: card_from_v03({"name": "a", "securitySchemes": {"s": {"type": "magic"}}}),
            "securitySchemes.s.type",
        ),
    ],
)
def test_malformed_input_names_the_field(call: Any, field: str) -> None:
    with pytest.raises(InvalidParamsError) as info:
        call()
    assert info.value.field_violations[0]["field"] == field
    assert field in info.value.message


def test_unknown_operation() -> None:
    for fn in (request_from_v03, request_to_v03, result_to_v03, result_from_v03):
        with pytest.raises(KeyError):
            fn("tasks/get", {})


def test_inputs_are_not_mutated() -> None:
    task = {"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working"}}
    snapshot = json.dumps(task, sort_keys=True)
    result_from_v03("GetTask", task)
    assert json.dumps(task, sort_keys=True) == snapshot
    task10 = result_from_v03("GetTask", task)
    snapshot = json.dumps(task10, sort_keys=True)
    result_to_v03("GetTask", task10)
    assert json.dumps(task10, sort_keys=True) == snapshot
