"""Writes sdk03_nulls.json: a2a-sdk 0.3.26 objects as its own models dump them, nulls kept.

Run with the SDK 0.3.26 venv: ``.venv-sdk03/bin/python tests/protocol/data/make_sdk03_nulls.py >
tests/protocol/data/sdk03_nulls.json`` (``bash scripts/peers`` makes the venv). Not imported by
the test suite."""

import json

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    FileWithUri,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

card = AgentCard(
    name="SDK 0.3.26 agent",
    description="echo",
    version="1.0.0",
    url="http://127.0.0.1:9999/",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
    additional_interfaces=[AgentInterface(url="http://127.0.0.1:9999/", transport="JSONRPC")],
    provider=AgentProvider(organization="o", url="http://o"),
)
msg = Message(
    message_id="m1",
    role=Role.user,
    parts=[Part(root=TextPart(text="hi"))],
    context_id="c1",
    task_id="t1",
)
task = Task(
    id="t1",
    context_id="c1",
    status=TaskStatus(state=TaskState.completed, timestamp="2026-12-06T04:15:51.771901+00:00"),
    history=[msg],
    artifacts=[
        Artifact(
            artifact_id="a1",
            parts=[
                Part(root=TextPart(text="echo: hi")),
                Part(root=FilePart(file=FileWithUri(uri="http://x/f.png", mime_type="image/png"))),
                Part(root=DataPart(data={"k": None, "n": 1})),
            ],
        )
    ],
)
working = Task(id="t2", context_id="c1", status=TaskStatus(state=TaskState.working))
status = TaskStatusUpdateEvent(
    task_id="t1", context_id="c1", status=TaskStatus(state=TaskState.working), final=False
)
art = TaskArtifactUpdateEvent(
    task_id="t1",
    context_id="c1",
    artifact=Artifact(artifact_id="a1", parts=[Part(root=TextPart(text="x"))]),
    append=True,
)
push = TaskPushNotificationConfig(
    task_id="t1", push_notification_config=PushNotificationConfig(url="http://127.0.0.1:1/hook")
)
out = {
    k: v.model_dump(mode="json", by_alias=True)
    for k, v in dict(
        card=card,
        message=msg,
        task=task,
        working_task=working,
        status_update=status,
        artifact_update=art,
        push_config=push,
    ).items()
}
print(json.dumps(out, indent=1, sort_keys=True))
