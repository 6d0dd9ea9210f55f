"""Demo 01: discover the greeter, send three messages, list the tasks, get one, ask for a
task that does not exist."""

import simple_a2a
from simple_a2a import Task, TaskNotFoundError, TaskState

from .._common import Checks, state, title, url

check = Checks()
greeter = simple_a2a.client(url())

title("Discovery")
card = greeter.agent_card()
print(f"  {card.name}: {card.description} (skills: {', '.join(s.id for s in card.skills)})")
check(card.name == "Greeter", "the agent card is served at /.well-known/agent-card.json")

title("Three SendMessage calls")
tasks: list[Task] = []
for name in ("world", "Ada", "Grace"):
    task = greeter.send(name)
    assert isinstance(task, Task), f"expected a task, got {task!r}"
    print(f"  {name!r:8} → {task.text!r}  [{state(task)}]")
    check(
        task.state == TaskState.COMPLETED and task.text.endswith(f": {name}"),
        f"greeted {name} with a completed task",
    )
    tasks.append(task)

title("ListTasks")
listed = greeter.list(include_artifacts=True)
for task in listed.tasks:
    print(f"  {task.id}  {state(task):10} {task.text!r}")
check({t.id for t in tasks} <= {t.id for t in listed.tasks}, "the list holds all three tasks")

title("GetTask")
again = greeter.get(tasks[1].id)
print(f"  {again.id} → {again.text!r}, history: {[m.text for m in again.history]}")
check(again.text == tasks[1].text, "get returns the stored task with its artifact")

title("An unknown task id")
try:
    greeter.get("no-such-task")
    check(False, "an unknown task id raises TaskNotFoundError")
except TaskNotFoundError as err:
    print(f"  {type(err).__name__} (code {err.code}): {err}")
    check(True, "an unknown task id raises TaskNotFoundError")

greeter.close()
check.exit()
