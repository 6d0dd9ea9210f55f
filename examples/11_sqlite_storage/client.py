"""Demo 11: populate tasks, stop the server, start it again on the same SQLite file, and check
that every task survived (an interrupted one can even be finished after the restart).

This client starts and stops the server itself (``server.py --db PATH``).
"""

import tempfile
from pathlib import Path

import simple_a2a
from simple_a2a import Task, TaskState

from .._common import Checks, port, server_process, state, title

check = Checks()
NOTES = ["note: buy milk", "note: call Ada", "note: water the plants", "note: book the train"]


def tasks_of(agent: simple_a2a.Client) -> dict[str, Task]:
    return {t.id: t for t in agent.list_all(include_artifacts=True)}


with tempfile.TemporaryDirectory() as folder:
    db = Path(folder) / "notes.db"

    title(f"First run, storage sqlite:///{db}")
    with server_process("11_sqlite_storage", port(), "--db", str(db)) as server:
        agent = simple_a2a.client(f"http://127.0.0.1:{port()}")
        for note in NOTES:
            task = agent.send(note)
            assert isinstance(task, Task)
            print(f"  {note!r} → {task.text!r}")
        waiting = agent.send("note:")  # no note: the agent asks for one
        assert isinstance(waiting, Task)
        print(f"  'note:' → {state(waiting)}: {waiting.status.message.text!r}")
        before = tasks_of(agent)
        agent.close()
    check(len(before) == len(NOTES) + 1, f"{len(before)} tasks stored, then the server stopped")
    check(db.is_file() and db.stat().st_size > 0, f"the database file is there ({db.name})")

    title("Second run, same database")
    with server_process("11_sqlite_storage", port(), "--db", str(db)):
        agent = simple_a2a.client(f"http://127.0.0.1:{port()}")
        after = tasks_of(agent)
        for task in after.values():
            print(f"  {task.id[:8]}  {state(task):15} {task.text!r}")
        check(after.keys() == before.keys(), "every task survived the restart")
        check(
            all(after[i].to_dict() == before[i].to_dict() for i in before),
            "each task is identical: status, artifacts, history",
        )
        done = agent.send("milk, eggs", task_id=waiting.id, context_id=waiting.context_id)
        assert isinstance(done, Task)
        print(f"  follow-up on {waiting.id[:8]} → {state(done)}: {done.text!r}")
        check(
            done.state == TaskState.COMPLETED and len(done.history) >= 3,
            "the interrupted task continued after the restart, history intact",
        )
        agent.close()

check.exit()
