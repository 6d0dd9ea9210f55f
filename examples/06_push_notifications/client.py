"""Demo 06: register a webhook for a task, get and list the config, receive every update out of
band (no open stream), verify each signature, then delete the config."""

import threading

import httpx

import simple_a2a
from simple_a2a import Task, TaskPushNotificationConfig, TaskState
from simple_a2a.server.background import BackgroundServer
from simple_a2a.webhooks import Notification, NotificationVerifier, webhook_app

from .._common import Checks, state, title, url

check = Checks()
TOKEN = "demo-webhook-token"  # echoed back by the agent; the receiver checks it too
received: list[Notification] = []
finished = threading.Event()


async def on_notification(note: Notification) -> None:
    """Called by the receiver for each notification that passed verification."""
    payload = note.event.payload
    status = payload.status if hasattr(payload, "status") else None
    what = type(payload).__name__
    if status is not None:
        what += f" {state(status.state)}"
        what += f": {status.message.text}" if status.message else ""
    print(f"  ← webhook: {what}  [JWT {note.claims.get('jti', '?')[:8]}, verified]", flush=True)
    received.append(note)
    if status is not None and status.state.is_terminal:
        finished.set()


# The receiver: verifies the JWT against the agent's JWKS, the body hash and the token.
verifier = NotificationVerifier(agent_url=url(), token=TOKEN)
with BackgroundServer(webhook_app(on_notification, verifier, path="/webhook")) as receiver:
    webhook = f"{receiver.url}/webhook"
    batch = simple_a2a.client(url())

    title(f"Send a job, with a webhook ({webhook}) and no stream")
    config = TaskPushNotificationConfig(url=webhook, token=TOKEN)
    task = batch.send("nightly report", return_immediately=True, push_config=config)
    assert isinstance(task, Task)
    print(f"  task {task.id[:8]} is {state(task)}; the client now just waits")

    title("The push config: list and get")
    configs = batch.list_push_configs(task.id)
    check(len(configs) == 1 and configs[0].url == webhook, "ListTaskPushNotificationConfigs")
    fetched = batch.get_push_config(task.id, configs[0].id or "")
    check(fetched.url == webhook and fetched.token == TOKEN, "GetTaskPushNotificationConfig")

    title("Notifications, out of band")
    check(finished.wait(30), "a notification announced the task's end")

    title("Checks")
    states = [n.event.payload.status.state for n in received if n.event.status_update]
    steps = [n.event.payload.status.message.text for n in received if n.event.status_update]
    check(received[0].event.task is not None, "the first notification is the task snapshot")
    check(
        all(f"step {i}/3" in steps for i in (1, 2, 3)) and states[-1] == TaskState.COMPLETED,
        f"every status update arrived ({len(states)}), ending completed",
    )
    check(
        all(n.claims and n.task_id == task.id for n in received),
        "every notification carried a valid signature (JWT, body hash, task id)",
    )
    forged = httpx.post(webhook, json={"statusUpdate": {"taskId": task.id}})
    check(forged.status_code == 401, f"an unsigned notification is refused ({forged.status_code})")

    title("Delete the config")
    batch.delete_push_config(task.id, fetched.id or "")
    check(batch.list_push_configs(task.id) == [], "DeleteTaskPushNotificationConfig")
    batch.close()

check.exit()
