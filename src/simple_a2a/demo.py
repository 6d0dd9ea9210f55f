"""The main job: ``python -m simple_a2a.demo``.

Starts a real A2A agent on loopback (HTTP, JSON-RPC, the embedded SQLite storage when available),
then performs client round trips against it: discovery, a blocking send, a stream, get and list.
Exits non-zero if any check fails.
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

import simple_a2a
from simple_a2a.protocol import AgentCard, AgentSkill, Task
from simple_a2a.server import RequestContext, agent, server
from simple_a2a.server.background import BackgroundServer

GREETINGS = ("Howdy", "Hello", "Hi", "Greetings", "Ahoy")


@agent
async def greeter(ctx: RequestContext) -> str:
    """Greets whoever the message names, e.g. "Howdy: world"."""
    return f"{random.choice(GREETINGS)}: {ctx.text}"


CARD = AgentCard(
    name="Greeter",
    description="Greets you with a random greeting.",
    version="1.0.0",
    skills=[AgentSkill(id="greet", name="Greet", description="Say hello", tags=["demo"])],
)


def storage_for(folder: Path) -> str:
    """SQLite (embedded, persistent) when this build has it, else memory."""
    try:
        import simple_a2a.storage.sqlite  # noqa: F401
    except ImportError:
        return "memory"
    return f"sqlite:///{folder / 'demo.db'}"


def main() -> int:
    failures = 0

    def check(ok: bool, what: str) -> None:
        nonlocal failures
        print(("  ok   " if ok else "  FAIL ") + what)
        failures += 0 if ok else 1

    with tempfile.TemporaryDirectory() as folder:
        storage = storage_for(Path(folder))
        app = server(CARD, greeter, storage=storage).app
        with BackgroundServer(app) as srv:
            print(f"agent serving on {srv.url} (storage: {storage.split(':')[0]})")
            client = simple_a2a.client(srv.url)
            card = client.agent_card()
            check(card.name == "Greeter", f"discovered the card of {card.name!r}")
            task = client.send("world")
            if not isinstance(task, Task):
                check(False, "the agent answered with a task")
                return 1
            print(f"  -> {task.status.state.value}: {task.text}")
            check(task.text.endswith(": world"), "blocking send returned the greeting")
            events = list(client.stream("streaming world"))
            check(len(events) >= 2, f"stream delivered {len(events)} events")
            again = client.get(task.id)
            check(again.id == task.id and again.is_terminal, "get returned the stored task")
            listed = client.list()
            check(listed.total_size == 2, f"list found {listed.total_size} tasks")
            client.close()
    print("all checks passed" if not failures else f"{failures} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
