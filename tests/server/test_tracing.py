"""OpenTelemetry traces across a chain of three agents on loopback (docs/observability.md).

A client calls agent A (JSON-RPC), whose executor calls agent B (HTTP+JSON), whose executor calls
agent C (JSON-RPC). Each hop carries W3C trace context in its HTTP headers, so the whole chain is
one trace: client → A's server span → A's executor → A's client span → B's server span → ...
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from simple_a2a import AsyncClient
from simple_a2a.protocol.card import AgentCard
from simple_a2a.protocol.errors import TaskNotFoundError
from simple_a2a.protocol.telemetry import TELEMETRY, disable_tracing, enable_tracing
from simple_a2a.server import server


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    enable_tracing(provider)
    try:
        yield exporter
    finally:
        disable_tracing()
        provider.shutdown()


def _card(name: str, **caps: Any) -> AgentCard:
    return AgentCard.from_dict(
        {"name": name, "description": name, "version": "1", "capabilities": caps}
    )


def _forwarder(name: str, next_url: str, binding: str) -> Any:
    async def forward(ctx: Any) -> str:
        async with AsyncClient(next_url, bindings=[binding]) as client:
            answer = await client.send(ctx.text)
        return f"{name}({answer.text})"  # type: ignore[union-attr]

    return forward


async def leaf(ctx: Any) -> str:
    if ctx.text == "fail":
        raise RuntimeError("boom")
    return f"C({ctx.text})"


def _chain(serve: Any) -> str:
    c = serve(server(_card("C", streaming=True), leaf).app)
    b = serve(server(_card("B"), _forwarder("B", c, "JSONRPC")).app)
    return serve(server(_card("A", streaming=True), _forwarder("A", b, "HTTP+JSON")).app)  # type: ignore[no-any-return]


def _by(spans: list[ReadableSpan], name: str, kind: SpanKind) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name and s.kind == kind]


def _parent(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan:
    assert span.parent is not None, f"{span.name} has no parent"
    (parent,) = [s for s in spans if s.context.span_id == span.parent.span_id]
    return parent


def _chain_of(span: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    names = []
    while span.parent is not None:
        span = _parent(span, spans)
        names.append(f"{span.name}:{span.kind.name}")
    return names


async def test_three_agents_one_trace(serve: Any, spans: InMemorySpanExporter) -> None:
    a = _chain(serve)
    async with AsyncClient(a) as client:
        answer = await client.send("hi")
    assert answer.text == "A(B(C(hi)))"  # type: ignore[union-attr]

    finished = list(spans.get_finished_spans())
    assert len({s.context.trace_id for s in finished}) == 1, "one trace for the whole chain"

    servers = _by(finished, "a2a/SendMessage", SpanKind.SERVER)
    assert len(servers) == 3
    by_binding = {s.attributes["a2a.binding"]: s for s in servers}  # type: ignore[index]
    assert set(by_binding) == {"JSONRPC", "HTTP+JSON"}
    # the deepest server span (agent C) sits under the whole chain
    deepest = max(servers, key=lambda s: len(_chain_of(s, finished)))
    assert _chain_of(deepest, finished) == [
        "a2a/SendMessage:CLIENT",  # B's client, called from B's executor
        "a2a.executor:INTERNAL",
        "a2a/SendMessage:SERVER",  # agent B
        "a2a/SendMessage:CLIENT",  # A's client
        "a2a.executor:INTERNAL",
        "a2a/SendMessage:SERVER",  # agent A
        "a2a/SendMessage:CLIENT",  # the test's client (the root)
    ]
    for span in servers:
        attrs = span.attributes or {}
        assert attrs["rpc.system"] == "a2a" and attrs["rpc.method"] == "SendMessage"
        assert attrs["a2a.task.state"] == "TASK_STATE_COMPLETED"
        assert attrs["a2a.task.id"] and attrs["a2a.context.id"]
        assert attrs["a2a.protocol.version"] == "1.0"
    executors = _by(finished, "a2a.executor", SpanKind.INTERNAL)
    assert {e.attributes["a2a.task.id"] for e in executors} == {  # type: ignore[index]
        s.attributes["a2a.task.id"]
        for s in servers  # type: ignore[index]
    }
    # storage calls are children of the operation or the executor (or of a storage call)
    storage = [s for s in finished if s.name.startswith("a2a.storage ")]
    # (a blocking send writes the task and its events, and answers with the snapshot it wrote:
    # no read back, see TaskManager.latest)
    assert {s.name for s in storage} == {"a2a.storage storage.record"}
    for span in storage:
        owner = next(n for n in _chain_of(span, finished) if not n.startswith("a2a.storage"))
        assert owner in ("a2a/SendMessage:SERVER", "a2a.executor:INTERNAL")
    (root,) = [s for s in finished if s.parent is None]
    assert root.kind == SpanKind.CLIENT and root.attributes["a2a.binding"] == "JSONRPC"  # type: ignore[index]


async def test_stream_and_error_spans(serve: Any, spans: InMemorySpanExporter) -> None:
    c = serve(server(_card("C", streaming=True), leaf).app)
    async with AsyncClient(c) as client:
        events = [event async for event in client.stream("fail")]
        assert events
        with pytest.raises(TaskNotFoundError):
            await client.get("no-such-task")
    finished = list(spans.get_finished_spans())
    (stream,) = _by(finished, "a2a/SendStreamingMessage", SpanKind.SERVER)
    assert stream.attributes["a2a.task.state"] == "TASK_STATE_FAILED"  # type: ignore[index]
    assert stream.attributes["a2a.stream.events"] == len(events)  # type: ignore[index]
    (client_stream,) = _by(finished, "a2a/SendStreamingMessage", SpanKind.CLIENT)
    assert _parent(stream, finished) is client_stream
    (get,) = _by(finished, "a2a/GetTask", SpanKind.SERVER)
    assert get.status.status_code == StatusCode.ERROR
    assert get.attributes["a2a.error.code"] == -32001  # type: ignore[index]
    assert get.attributes["error.type"] == "TaskNotFoundError"  # type: ignore[index]
    (get_client,) = _by(finished, "a2a/GetTask", SpanKind.CLIENT)
    assert get_client.status.status_code == StatusCode.ERROR


def test_tracing_off_makes_no_spans_and_imports_nothing() -> None:
    """Off is one attribute check; without enable_tracing() OpenTelemetry is never imported."""
    import subprocess
    import sys

    code = (
        "import sys, simple_a2a, simple_a2a.server, simple_a2a.client\n"
        "from simple_a2a.protocol.telemetry import TELEMETRY\n"
        "assert not TELEMETRY.on\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert not TELEMETRY.on


async def test_grpc_hop_carries_trace_context_in_metadata(spans: InMemorySpanExporter) -> None:
    """The gRPC client puts traceparent in the call metadata; the gRPC server continues it."""
    pytest.importorskip("grpc")
    from tests.grpc.grpc_served import start

    served = await start(_card("G", streaming=True), leaf, push=None)
    try:
        async with served.client() as client:
            assert (await client.send("x")).text == "C(x)"  # type: ignore[union-attr]
            assert [e async for e in client.stream("y")]
    finally:
        await served.close()
    finished = list(spans.get_finished_spans())
    for operation in ("SendMessage", "SendStreamingMessage"):
        (server_span,) = _by(finished, f"a2a/{operation}", SpanKind.SERVER)
        (client_span,) = _by(finished, f"a2a/{operation}", SpanKind.CLIENT)
        assert server_span.attributes["a2a.binding"] == "GRPC"  # type: ignore[index]
        assert client_span.attributes["a2a.binding"] == "GRPC"  # type: ignore[index]
        assert _parent(server_span, finished) is client_span


async def test_three_agent_processes_one_trace(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    """Agents A → B → C as separate OS processes, each exporting its spans to a file: the test's
    client span, and every process's spans, share one trace id and chain parent to child."""
    import json
    import subprocess
    import sys

    from tests.conftest import free_port

    script = Path(__file__).with_name("traced_agent.py")
    ports = {name: free_port() for name in "ABC"}
    urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    files = {name: tmp_path / f"{name}.jsonl" for name in "ABC"}
    nexts = {"A": urls["B"], "B": urls["C"], "C": None}
    procs = []
    try:
        for name in "CBA":
            args = [sys.executable, str(script), name, str(ports[name]), str(files[name])]
            procs.append(subprocess.Popen([*args, *([nexts[name]] if nexts[name] else [])]))
        for name in "ABC":
            _wait_for(urls[name])
        async with AsyncClient(urls["A"]) as client:
            answer = await client.send("hi")
        assert answer.text == "A(B(C(hi)))"  # type: ignore[union-attr]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
    remote = {
        name: [json.loads(line) for line in files[name].read_text().splitlines()] for name in "ABC"
    }
    (root,) = _by(list(spans.get_finished_spans()), "a2a/SendMessage", SpanKind.CLIENT)
    trace_id = f"{root.context.trace_id:032x}"
    every = [s for name in "ABC" for s in remote[name] if not s["name"].startswith("a2a.storage")]
    assert {s["trace_id"] for s in every} == {trace_id}
    by_id = {s["span_id"]: s for s in every}
    by_id[f"{root.context.span_id:016x}"] = {"name": "a2a/SendMessage", "kind": "CLIENT"}

    def server_of(name: str) -> dict[str, Any]:
        (span,) = [s for s in remote[name] if s["kind"] == "SERVER"]
        return span

    # each agent's server span is the child of the previous hop's client span, in another process
    expected_parent = {"A": "test", "B": "A", "C": "B"}
    for name, caller in expected_parent.items():
        parent = by_id[server_of(name)["parent_id"]]
        assert parent["kind"] == "CLIENT"
        if caller != "test":
            assert parent in remote[caller]
            assert by_id[parent["parent_id"]]["name"] == "a2a.executor"
        assert server_of(name)["attributes"]["a2a.task.state"] == "TASK_STATE_COMPLETED"


def _wait_for(url: str, timeout: float = 20.0) -> None:
    import time

    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(url)
        time.sleep(0.05)
