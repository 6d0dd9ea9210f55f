"""The OPERATIONS table matches the proto's ``service A2AService`` exactly (spec §5.3, §9.4,
§11.3; a2a.proto is normative where the prose differs)."""

from __future__ import annotations

import re

import pytest

from simple_a2a.protocol import OPERATIONS, Operation, operation
from simple_a2a.protocol.operations import OPERATIONS_BY_METHOD, OPERATIONS_BY_NAME, V03_METHODS
from tests.protocol._spec import SPEC_DIR, HttpRule, ProtoRpc, load_proto

RPCS = load_proto().rpcs
WELL_KNOWN = {"google.protobuf.Empty": "Empty"}


def normalise(path: str) -> str:
    """``/tasks/{id=*}`` -> ``/tasks/{id}`` (a single-segment variable is just a variable)."""
    return re.sub(r"\{(\w+)=\*\}", r"{\1}", path)


def by_name(name: str) -> Operation:
    return OPERATIONS_BY_NAME[name]


def test_same_operations_in_the_same_order() -> None:
    """Spec §3.1: the eleven operations, one per rpc of A2AService, in proto order."""
    assert len(RPCS) == 11
    assert [op.name for op in OPERATIONS] == [rpc.name for rpc in RPCS]


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.name)
def test_request_and_response_types(rpc: ProtoRpc) -> None:
    """Spec §9.4/§10.4: the request and response messages of each rpc."""
    op = by_name(rpc.name)
    assert op.request_type.__name__ == WELL_KNOWN.get(rpc.request, rpc.request)
    assert op.response_type.__name__ == WELL_KNOWN.get(rpc.response, rpc.response)


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.name)
def test_streaming_flag(rpc: ProtoRpc) -> None:
    """Spec §3.1.2, §3.1.6: ``returns (stream ...)`` is a streaming operation (SSE)."""
    assert by_name(rpc.name).streaming is rpc.streaming


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.name)
def test_rest_verb_path_and_body(rpc: ProtoRpc) -> None:
    """Spec §11.3: the REST verb and path template of the proto's ``google.api.http`` rule;
    ``body: "*"`` means the request travels as the JSON body."""
    op = by_name(rpc.name)
    assert op.http_method == rpc.http.verb
    assert op.path == normalise(rpc.http.path)
    assert op.has_body is (rpc.http.body == "*")


@pytest.mark.parametrize("rpc", RPCS, ids=lambda r: r.name)
def test_tenant_binding(rpc: ProtoRpc) -> None:
    """Spec §11.3 / multi-tenancy: the only additional binding is the ``/{tenant}`` variant,
    same verb and body."""
    op = by_name(rpc.name)
    assert rpc.additional_bindings == (
        HttpRule(rpc.http.verb, "/{tenant}" + rpc.http.path, rpc.http.body),
    )
    assert op.tenant_path == normalise(rpc.additional_bindings[0].path)


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda o: o.name)
def test_path_variables_are_request_fields(op: Operation) -> None:
    """Every path variable is a field of the request message (REST binds it there)."""
    for var in re.findall(r"\{(\w+)\}", op.tenant_path):
        assert var in op.request_type.model_fields, (op.name, var)


def test_jsonrpc_method_is_the_rpc_name() -> None:
    """Spec §9.1: JSON-RPC 1.0 method names are the PascalCase rpc names."""
    for op in OPERATIONS:
        assert op.jsonrpc_method == op.name
        assert op.all_methods[0] == op.name


def test_methods_are_unique() -> None:
    """No JSON-RPC method name (1.0, 0.3 or legacy alias) reaches two operations."""
    methods = [m for op in OPERATIONS for m in op.all_methods]
    assert len(methods) == len(set(methods))
    assert len(OPERATIONS_BY_METHOD) == len(methods)
    assert len({op.name for op in OPERATIONS}) == len(OPERATIONS)


def test_rest_routes_do_not_collide() -> None:
    """No two operations share a verb and path (1.0 and 0.3 ``/v1`` paths)."""
    routes = [(op.http_method, op.path) for op in OPERATIONS]
    assert len(routes) == len(set(routes))
    v03 = [(op.http_method, op.v03_path) for op in OPERATIONS if op.v03_path]
    assert len(v03) == len(set(v03))


def test_v03_methods() -> None:
    """whats-new-v1.md: the 0.3 method names, served as aliases; never a 1.0 name."""
    expected = {
        "SendMessage": "message/send",
        "SendStreamingMessage": "message/stream",
        "GetTask": "tasks/get",
        "ListTasks": "tasks/list",
        "CancelTask": "tasks/cancel",
        "SubscribeToTask": "tasks/resubscribe",
        "CreateTaskPushNotificationConfig": "tasks/pushNotificationConfig/set",
        "GetTaskPushNotificationConfig": "tasks/pushNotificationConfig/get",
        "ListTaskPushNotificationConfigs": "tasks/pushNotificationConfig/list",
        "DeleteTaskPushNotificationConfig": "tasks/pushNotificationConfig/delete",
        "GetExtendedAgentCard": "agent/getAuthenticatedExtendedCard",
    }
    assert {op.name: op.v03_method for op in OPERATIONS} == expected
    renamed = re.findall(
        r"\(`([\w/]+)` → \*\*`?(\w+)`?\*\*\)", (SPEC_DIR / "whats-new-v1.md").read_text()
    )
    assert len(renamed) >= 4
    for old, new in renamed:
        assert by_name(new).v03_method == old
    assert not V03_METHODS & set(OPERATIONS_BY_NAME)


def test_lookup() -> None:
    """``operation()`` finds an operation by any of its names and refuses unknown ones."""
    for op in OPERATIONS:
        for method in op.all_methods:
            assert operation(method) is op
    assert operation("tasks/sendSubscribe").name == "SendStreamingMessage"
    with pytest.raises(KeyError):
        operation("tasks/unknown")
