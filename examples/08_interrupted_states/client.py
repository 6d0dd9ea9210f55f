"""Demo 08: multi-turn conversations through taskId/contextId: an order that needs more input,
a vault that needs the right token."""

import simple_a2a
from simple_a2a import Part, Task, TaskState

from .._common import Checks, state, title, url

check = Checks()


def turn(agent: simple_a2a.Client, content: object, previous: Task | None = None) -> Task:
    """Send one turn; a follow-up names the task (and its context) it continues."""
    if previous is None:
        task = agent.send(content)
    else:
        task = agent.send(content, task_id=previous.id, context_id=previous.context_id)
    assert isinstance(task, Task)
    said = task.status.message.text if task.status.message else task.text
    shown = content.data if isinstance(content, Part) else content
    print(f"  → {shown!r}\n  ← [{state(task)}] {said}")
    return task


title("The order agent: input-required, then completed")
with simple_a2a.client(url("/order")) as order:
    first = turn(order, "pizza")
    check(first.state == TaskState.INPUT_REQUIRED, "the agent asks for the size")
    second = turn(order, "gigantic", first)
    check(second.state == TaskState.INPUT_REQUIRED, "a bad answer: it asks again")
    done = turn(order, "large", second)
    check(
        done.state == TaskState.COMPLETED and done.text == "Ordered: one large pizza",
        "the right answer completes the order",
    )
    check(
        done.id == first.id and done.context_id == first.context_id,
        "one task, one context, three turns",
    )
    check(len(order.get(done.id).history) >= 5, "the history holds every turn")

title("The vault agent: auth-required, wrong token, right token")
with simple_a2a.client(url("/vault")) as vault:
    locked = turn(vault, "open the vault")
    check(locked.state == TaskState.AUTH_REQUIRED, "the vault asks for a token")
    wrong = turn(vault, Part.data({"token": "let-me-in"}), locked)
    check(wrong.state == TaskState.AUTH_REQUIRED, "a wrong token: still auth-required")
    opened = turn(vault, Part.data({"token": "open-sesame"}), wrong)
    check(opened.state == TaskState.COMPLETED and "42" in opened.text, "the right token opens it")
    check(opened.id == locked.id, "the same task throughout")
    try:
        turn(vault, "again?", opened)
        check(False, "a completed task accepts no more messages")
    except simple_a2a.UnsupportedOperationError as err:
        print(f"  ← {type(err).__name__}: {err}")
        check(True, "a completed task accepts no more messages")

check.exit()
