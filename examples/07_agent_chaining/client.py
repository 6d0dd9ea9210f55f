"""Demo 07: stream the pipeline agent and watch it delegate to two other agents."""

import simple_a2a
from simple_a2a import TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent

from .._common import Checks, state, title, url
from . import tracing

check = Checks()
TEXT = "hello brave new world"

title(f"Pipeline: {TEXT!r}")
final = None
result = None
if tracing.ENABLED:  # A2A_DEMO_TRACE=1: the whole chain is one trace under this span
    from opentelemetry import trace

    tracing.enable(printer=False)
    root = trace.get_tracer("demo07").start_as_current_span("demo07 client")
    span = root.__enter__()
    print(f"  trace id {span.get_span_context().trace_id:032x} (the server prints its tree)")
with simple_a2a.client(url("/pipeline")) as pipeline:
    for event in pipeline.stream(TEXT):
        if isinstance(event, TaskStatusUpdateEvent):
            final = event.status.state
            note = event.status.message.text if event.status.message else ""
            print(f"  [pipeline] {state(final)} {note}")
        elif isinstance(event, TaskArtifactUpdateEvent):
            result = event.artifact
            print(f"  [pipeline] result: {result.text!r}")

check(final == TaskState.COMPLETED, "the pipeline task completed")
check(result is not None and result.text == "WORLD NEW BRAVE HELLO!", "reversed, then shouted")

title("The delegated tasks, on the other two agents")
hops = (result.metadata or {}).get("delegated", {}) if result else {}
for path, expected in (("reverse", "world new brave hello"), ("shout", "WORLD NEW BRAVE HELLO!")):
    with simple_a2a.client(url(f"/{path}")) as other:
        task = other.get(hops.get(path, "missing"))
        print(f"  /{path}: task {task.id[:8]} {state(task)} → {task.text!r}")
        check(task.text == expected, f"the {path} agent did its part as its own A2A task")

check.exit()
