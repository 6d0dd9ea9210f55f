"""Both clients against a real agent served by the official SDK (a2a-sdk 1.3.0), both bindings."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import simple_a2a
from simple_a2a import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from simple_a2a.client import AsyncClient, Client, afold, fold
from tests.support.agents import cancel_while_subscribed

BINDINGS = ["JSONRPC", "HTTP+JSON"]

pytestmark = pytest.mark.interop(peer="Python SDK 1.3.0", direction="ours → theirs", protocol="1.0")


def joined(task: object) -> str:
    """The text of the task's first artifact, chunks concatenated."""
    assert isinstance(task, Task)
    return "".join(part.text or "" for part in task.artifacts[0].parts)


@pytest.fixture(params=BINDINGS)
async def agent(request: pytest.FixtureRequest, sdk_server) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(sdk_server.url, bindings=[request.param]) as client:
        yield client


async def test_send_returns_completed_task(agent: AsyncClient) -> None:
    task = await agent.send("echo hi")
    assert isinstance(task, Task)
    assert task.state is TaskState.COMPLETED
    assert task.text == "echo: echo hi"
    assert agent.protocol_version == "1.0"
    assert agent.interface is not None


async def test_send_can_return_a_message(agent: AsyncClient) -> None:
    reply = await agent.send(Message.user("reply there"))
    assert isinstance(reply, Message)
    assert reply.text == "reply: there"


async def test_stream_yields_task_then_updates(agent: AsyncClient) -> None:
    events = [event async for event in agent.stream("count 4")]
    assert isinstance(events[0], Task)
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].status.state is TaskState.COMPLETED
    chunks = [e.artifact.text for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert chunks == ["0 ", "1 ", "2 ", "3 "]
    final = fold(events)
    assert isinstance(final, Task) and final.state is TaskState.COMPLETED
    assert joined(final) == "0 1 2 3 "


async def test_afold_folds_a_live_stream(agent: AsyncClient) -> None:
    final = await afold(agent.stream("count 3"))
    assert isinstance(final, Task)
    assert joined(final) == "0 1 2 "


async def test_get_and_history_length(agent: AsyncClient) -> None:
    task = await agent.send("echo again")
    assert isinstance(task, Task)
    fetched = await agent.get(task.id)
    assert fetched.id == task.id and fetched.state is TaskState.COMPLETED
    assert fetched.history
    trimmed = await agent.get(task.id, history_length=0)
    assert trimmed.history == []


async def test_list_walks_every_page(agent: AsyncClient) -> None:
    context = simple_a2a.new_id()
    ids = set()
    for i in range(3):
        task = await agent.send(f"echo {i}", context_id=context)
        assert isinstance(task, Task)
        ids.add(task.id)
    page = await agent.list(context_id=context, page_size=2)
    assert len(page.tasks) == 2 and page.next_page_token
    walked = [t.id async for t in agent.list_all(context_id=context, page_size=1)]
    assert sorted(walked) == sorted(ids)
    done = await agent.list(context_id=context, status=TaskState.COMPLETED)
    assert {t.id for t in done.tasks} == ids


async def test_cancel_and_subscribe(agent: AsyncClient) -> None:
    task = await agent.send("slow", return_immediately=True)
    assert isinstance(task, Task) and not task.is_final
    canceled, events = await cancel_while_subscribed(agent, task.id)
    assert canceled.state is TaskState.CANCELED
    assert isinstance(events[0], Task)
    assert fold(events).state is TaskState.CANCELED  # type: ignore[union-attr]


async def test_push_config_operations(agent: AsyncClient) -> None:
    task = await agent.send("echo push")
    assert isinstance(task, Task)
    created = await agent.create_push_config(
        task.id, "http://127.0.0.1:9/hook", config_id="cfg-1", token="secret"
    )
    assert created.url == "http://127.0.0.1:9/hook" and created.id
    got = await agent.get_push_config(task.id, created.id)
    assert got.url == created.url
    listed = await agent.list_push_configs(task.id)
    assert [c.id for c in listed] == [created.id]
    await agent.delete_push_config(task.id, created.id)
    assert await agent.list_push_configs(task.id) == []


async def test_unknown_task_raises_task_not_found(agent: AsyncClient) -> None:
    with pytest.raises(TaskNotFoundError) as info:
        await agent.get("no-such-task")
    expected = 200 if agent.interface and agent.interface.protocol_binding == "JSONRPC" else 404
    assert info.value.status_code == expected  # type: ignore[attr-defined]


async def test_extended_card_not_offered(agent: AsyncClient) -> None:
    with pytest.raises(UnsupportedOperationError):
        await agent.extended_card()


async def test_subscribe_to_finished_task_is_an_error(agent: AsyncClient) -> None:
    task = await agent.send("echo done")
    assert isinstance(task, Task)
    with pytest.raises(UnsupportedOperationError):
        async for _ in agent.subscribe(task.id):
            pass


@pytest.mark.parametrize("binding", BINDINGS)
def test_sync_client_round_trip(sdk_server, binding: str) -> None:
    with simple_a2a.client(sdk_server.url, bindings=[binding]) as agent:
        task = agent.send("echo sync")
        assert isinstance(task, Task) and task.text == "echo: echo sync"
        assert agent.get(task.id).id == task.id
        events = list(agent.stream("count 3"))
        assert joined(fold(events)) == "0 1 2 "
        assert any(t.id == task.id for t in agent.list_all(page_size=50))
        with pytest.raises(TaskNotFoundError):
            agent.cancel("nope")
        assert agent.agent_card().name == "SDK demo agent"


@pytest.mark.interop(
    peer="Python SDK 1.3.0", direction="ours → theirs", protocol="1.0", binding="JSONRPC"
)  # the card's first interface
def test_three_line_round_trip(sdk_server) -> None:
    import simple_a2a

    print(simple_a2a.client(sdk_server.url).send("hello"))


@pytest.mark.interop(
    peer="Python SDK 1.3.0", direction="ours → theirs", protocol="1.0", binding="JSONRPC"
)  # the card's first interface
def test_sync_stream_can_stop_early(sdk_server) -> None:
    agent = Client(sdk_server.url)
    for event in agent.stream("count 20"):
        assert isinstance(event, Task)
        break
    agent.close()
