"""Demo 04: subscriber 1 starts a task by streaming; subscriber 2 joins mid-task with
SubscribeToTask, gets the snapshot (the steps so far), then the same live events."""

import asyncio

from simple_a2a import AsyncClient, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

from .._common import Checks, state, title, url

check = Checks()


def steps_in(task: Task) -> int:
    """Steps done: lines of the log artifact (appended chunks join into one text)."""
    return len(task.artifacts[0].text.splitlines()) if task.artifacts else 0


def describe(event: object) -> str:
    if isinstance(event, Task):
        return f"snapshot: {state(event)}, {steps_in(event)} step(s) so far"
    if isinstance(event, TaskStatusUpdateEvent):
        message = event.status.message.text if event.status.message else ""
        return f"status {state(event.status.state)}: {message}"
    if isinstance(event, TaskArtifactUpdateEvent):
        return f"artifact: {event.artifact.text.strip()}"
    return type(event).__name__


async def main() -> None:
    seen: dict[str, list[object]] = {"subscriber 1": [], "subscriber 2": []}
    task_started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    two_steps_done = asyncio.Event()

    async def subscriber_1(agent: AsyncClient) -> None:
        async for event in agent.stream("run the five steps"):
            seen["subscriber 1"].append(event)
            print(f"  [subscriber 1] {describe(event)}", flush=True)
            if isinstance(event, Task):
                task_started.set_result(event.id)
            if isinstance(event, TaskArtifactUpdateEvent) and "step 2" in event.artifact.text:
                two_steps_done.set()

    async def subscriber_2(agent: AsyncClient) -> None:
        await agent.agent_card()  # discover the agent now, so joining later is quick
        task_id = await task_started
        await two_steps_done.wait()
        print("  [subscriber 2] joins with SubscribeToTask", flush=True)
        async for event in agent.subscribe(task_id):
            seen["subscriber 2"].append(event)
            print(f"  [subscriber 2] {describe(event)}", flush=True)

    title("Two subscribers, one task")
    async with AsyncClient(url()) as one, AsyncClient(url()) as two:
        await asyncio.wait_for(asyncio.gather(subscriber_1(one), subscriber_2(two)), 60)

    first, second = seen["subscriber 1"], seen["subscriber 2"]
    title("Checks")
    snapshot = second[0] if second else None
    check(isinstance(snapshot, Task), "subscriber 2's first event is the Task snapshot")
    assert isinstance(snapshot, Task)
    done_before = steps_in(snapshot)
    check(2 <= done_before < 5, f"the snapshot holds the {done_before} steps done so far")
    live = second[1:]
    check(
        [e.to_dict() for e in live] == [e.to_dict() for e in first[len(first) - len(live) :]],
        f"then the same {len(live)} live events as subscriber 1",
    )
    late_steps = sum(isinstance(e, TaskArtifactUpdateEvent) for e in live)
    check(done_before + late_steps == 5, "subscriber 2 saw every step: snapshot + live")
    for name, events in seen.items():
        last = events[-1]
        ended = isinstance(last, TaskStatusUpdateEvent) and last.status.state.is_terminal
        check(ended, f"{name}'s stream ended cleanly at {describe(last)}")


asyncio.run(main())
check.exit()
