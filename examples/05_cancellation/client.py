"""Demo 05: three tasks stream at once; B is canceled after three seconds; A and C complete."""

import asyncio

from simple_a2a import AsyncClient, Task, TaskState, TaskStatusUpdateEvent

from .._common import Checks, pace, state, title, url

check = Checks()
CANCEL_AFTER = pace(3.0, fast=0.5)


async def main() -> None:
    async with AsyncClient(url()) as worker:
        task_ids: dict[str, asyncio.Future[str]] = {}
        steps = {"A": 0, "B": 0, "C": 0}

        async def run(name: str) -> TaskState | None:
            last = None
            async for event in worker.stream(name):
                if isinstance(event, Task):
                    task_ids[name].set_result(event.id)
                elif isinstance(event, TaskStatusUpdateEvent):
                    last = event.status.state
                    text = event.status.message.text if event.status.message else ""
                    steps[name] += "step" in text
                    print(f"  [{name}] {state(last)} {text}", flush=True)
            return last

        async def cancel_b() -> TaskState:
            task_id = await task_ids["B"]
            await asyncio.sleep(CANCEL_AFTER)
            print(f"  → canceling B after {CANCEL_AFTER:.1f}s", flush=True)
            return (await worker.cancel(task_id)).state

        title("Three tasks, one canceled")
        task_ids.update({name: asyncio.get_running_loop().create_future() for name in steps})
        a, b, c, canceled = await asyncio.wait_for(
            asyncio.gather(run("A"), run("B"), run("C"), cancel_b()), 60
        )

        title("Checks")
        check(canceled == TaskState.CANCELED, "CancelTask answered with the task canceled")
        check(b == TaskState.CANCELED, f"B's stream ended {state(b)} after {steps['B']} steps")
        check(steps["B"] < 10, "B stopped early")
        for name, final in (("A", a), ("C", c)):
            check(
                final == TaskState.COMPLETED and steps[name] == 10,
                f"{name} completed all {steps[name]} steps",
            )
        stored = await worker.get(await task_ids["B"])
        check(stored.state == TaskState.CANCELED, "GetTask shows B canceled")


asyncio.run(main())
check.exit()
