"""Demo 12: three replicas of one agent on one storage behind a round-robin proxy; the replica
running a long streaming task is killed (kill -9) mid-stream; the client's stream carries on
through another replica and the task finishes there.

This client starts the replicas and the proxy itself. Storage: a SQLite file in a temporary
folder (several processes of one host), or ``--storage postgresql://...?schema=demo12``.
"""

import asyncio
import contextlib
import re
import signal
import tempfile

from simple_a2a import AsyncClient, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

from .._common import Checks, argument, free_port, port, server_process, state, title
from .._proxy import RoundRobinProxy

check = Checks()
LINES = 12


async def main(storage: str) -> None:
    ports = [free_port() for _ in range(3)]
    title(f"Three replicas on {storage.split('?')[0]}, a round-robin proxy on :{port()}")
    with contextlib.ExitStack() as stack:
        replicas = {
            p: stack.enter_context(server_process("12_cluster", p, "--storage", storage))
            for p in ports
        }
        proxy = stack.enter_context(RoundRobinProxy(ports, port=port()))
        print(f"  replicas :{', :'.join(map(str, ports))}", flush=True)

        lines: list[str] = []
        killed: int | None = None
        runner = 0  # the replica running the task, from its status message
        task_id = ""
        async with AsyncClient(proxy.url) as agent:
            async for event in agent.stream("write"):
                if isinstance(event, Task):
                    task_id = event.id
                elif isinstance(event, TaskStatusUpdateEvent) and event.status.message:
                    print(f"  status {state(event.status.state)}: {event.status.message.text}")
                    found = re.search(r":(\d+)", event.status.message.text)
                    if killed is None and found and "writing" in event.status.message.text:
                        runner = int(found.group(1))
                elif isinstance(event, TaskArtifactUpdateEvent):
                    lines.append(event.artifact.text)
                    print(f"  {event.artifact.text}", flush=True)
                    if len(lines) == 4 and killed is None:
                        killed = runner
                        replicas[runner].send_signal(signal.SIGKILL)
                        replicas[runner].wait()
                        print(f"  ✂ kill -9 replica :{runner} (it was running the task)")
            final = await agent.get(task_id)

    title("Checks")
    numbers = [int(line.split()[1]) for line in lines]
    check(killed is not None, f"replica :{killed} was killed mid-stream")
    check(numbers == list(range(1, LINES + 1)), f"the stream carried all {LINES} lines once each")
    check(final.state.value == "TASK_STATE_COMPLETED", f"the task ended {state(final)}")
    message = final.status.message.text if final.status.message else ""
    check(f":{killed} " not in message and "finished on" in message, f"finished: {message}")
    writers = {line.split()[-1] for line in lines}
    check(len(writers) >= 2, f"lines written by {', '.join(sorted(writers))}")


with tempfile.TemporaryDirectory() as folder:
    asyncio.run(main(argument("--storage") or f"sqlite:///{folder}/cluster.db"))
check.exit()
