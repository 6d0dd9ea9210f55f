"""Cluster mode (issue #14): three uvicorn processes on one PostgreSQL schema behind a
round-robin proxy behave as one agent and survive losing one (kill -9).

Each caveat the deployment guide used to state has a test named after its removal:
``test_no_replica_needs_recovery_turned_off``, ``test_no_sticky_sessions_for_follow_ups``,
``test_no_sticky_sessions_for_cancel`` and ``test_push_is_not_delivered_twice_by_two_replicas``.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from simple_a2a.server.recovery import RESTART_MESSAGE

from .support import (
    RECOVERY_BOUND,
    TERMINAL,
    Cluster,
    RoundRobinProxy,
    StreamLog,
    WebhookReceiver,
    follow,
    result,
    rpc,
    send,
    wait_state,
)

Running = tuple[Cluster, RoundRobinProxy]
# How long a CancelTask served by another replica may take to reach the owner's executor.
CANCEL_HOOK_BOUND = 10.0


def _owner(cluster: Cluster, task_id: str, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while (index := cluster.owner_index(task_id)) is None:
        assert time.monotonic() < deadline, "no replica holds the task's lease"
        time.sleep(0.05)
    return index


def _steps(events: list[dict[str, Any]]) -> list[str]:
    return [e["artifactUpdate"]["artifact"]["artifactId"] for e in events if "artifactUpdate" in e]


def test_kill_9_mid_task_a_resumable_executor_finishes_it(
    resumable_cluster: Running, webhook: tuple[WebhookReceiver, str]
) -> None:
    """The replica running a task dies; another takes the lease over and the resumable executor
    finishes the task. A client streaming through the proxy sees every event exactly once
    (it resumes with Last-Event-ID on another replica); the push backlog arrives in full."""
    cluster, proxy = resumable_cluster
    receiver, hook = webhook
    config = {"returnImmediately": True, "taskPushNotificationConfig": {"url": hook}}
    task = result(proxy.url, "SendMessage", send("steps 12 0.15", **config))["task"]
    log = StreamLog()
    reader = threading.Thread(target=follow, args=(proxy.url, task["id"], log), daemon=True)
    reader.start()
    victim = _owner(cluster, task["id"])
    deadline = time.monotonic() + 10
    while len(_steps([e for _, e in log.events])) < 4:
        assert time.monotonic() < deadline, "the task made no progress"
        time.sleep(0.02)
    cluster.kill(victim)
    killed_at = time.monotonic()
    reader.join(60)
    assert not reader.is_alive(), "the stream did not end"
    finished = wait_state(proxy.url, task["id"], TERMINAL, RECOVERY_BOUND)
    took_over_in = time.monotonic() - killed_at
    cluster.restart(victim)

    assert finished["status"]["state"] == "TASK_STATE_COMPLETED", finished["status"]
    assert "(resumed)" in finished["status"]["message"]["parts"][0]["text"]
    assert [a["artifactId"] for a in finished["artifacts"]] == [f"step-{i}" for i in range(12)]
    # The stream: consecutive sequence numbers, no event twice, none missing, every step once.
    seqs = [seq for seq, _ in log.events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    streamed = _steps([e for _, e in log.events])
    first_snapshot = log.events[0][1].get("task", {})
    already = [a["artifactId"] for a in first_snapshot.get("artifacts", [])]
    assert already + streamed == [f"step-{i}" for i in range(12)]
    assert log.reconnects >= 0 and took_over_in < RECOVERY_BOUND
    # Push: the whole backlog, taken over from the stored cursor by a live replica.
    deadline = time.monotonic() + RECOVERY_BOUND
    while True:
        pushed = receiver.of(task["id"])
        steps = set(_steps(pushed))
        done = any(e.get("statusUpdate", {}).get("status", {}).get("state") in TERMINAL
                   for e in pushed)  # fmt: skip
        if done and steps == {f"step-{i}" for i in range(12)}:
            break
        assert time.monotonic() < deadline, f"push lost events: {sorted(steps)}, done={done}"
        time.sleep(0.1)


def test_no_replica_needs_recovery_turned_off(plain_cluster: Running) -> None:
    """Every replica recovers (the default) and none fails a running peer's task: a task that
    runs while replicas restart keeps running; only a dead replica's task is failed, within
    the bound, with the restart message."""
    cluster, proxy = plain_cluster
    survivor = result(proxy.url, "SendMessage", send("hang", returnImmediately=True))
    survivor_id = survivor["task"]["id"]
    keeper = _owner(cluster, survivor_id)
    doomed = None
    while doomed is None:  # a task on another replica than the survivor's
        task = result(proxy.url, "SendMessage", send("hang", returnImmediately=True))["task"]
        if _owner(cluster, task["id"]) != keeper:
            doomed = task
    victim = _owner(cluster, doomed["id"])
    cluster.kill(victim)
    killed_at = time.monotonic()
    failed = wait_state(proxy.url, doomed["id"], TERMINAL, RECOVERY_BOUND)
    assert time.monotonic() - killed_at < RECOVERY_BOUND
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert failed["status"]["message"]["parts"][0]["text"] == RESTART_MESSAGE
    cluster.restart(victim)  # a restarted replica recovers too: not the survivor's task
    time.sleep(1.5)
    assert result(proxy.url, "GetTask", {"id": survivor_id})["status"]["state"] == (
        "TASK_STATE_WORKING"
    )
    assert _owner(cluster, survivor_id) == keeper
    ended = result(proxy.url, "CancelTask", {"id": survivor_id})  # it was never failed
    assert ended["status"]["state"] == "TASK_STATE_CANCELED"


def test_no_sticky_sessions_for_cancel(plain_cluster: Running, marks: Path) -> None:
    """CancelTask served by another replica reaches the executor at once: ctx.cancelled fires
    and the cancel hook runs on the replica running it, within about a second."""
    cluster, _ = plain_cluster
    runner, other = cluster.replicas[0], cluster.replicas[1]
    task = result(runner.url, "SendMessage", send("hang", returnImmediately=True))["task"]
    wait_state(runner.url, task["id"], {"TASK_STATE_WORKING"}, 10)
    started = time.monotonic()
    canceled = result(other.url, "CancelTask", {"id": task["id"]})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    mark = marks / f"cancel-{task['id']}"
    # Typically ~0.5-1 s (the lease is taken once a task has run 0.5 s; the owner checks its
    # leased tasks every 0.5 s). The bound is generous on purpose: on a loaded 2-core CI machine
    # (other replicas starting, the interop peers' processes) 3 s was once not enough, and what
    # this test proves is that the hook runs on the owner at all, not how fast a busy box is.
    while not mark.exists():
        waited = time.monotonic() - started
        assert waited < CANCEL_HOOK_BOUND, "the cancel hook did not run on the owner"
        time.sleep(0.02)
    assert mark.read_text().split()[0] == str(runner.port)  # the hook ran where the task ran
    time.sleep(0.5)
    assert result(other.url, "GetTask", {"id": task["id"]})["status"]["state"] == (
        "TASK_STATE_CANCELED"
    )
    assert cluster.owner_index(task["id"]) is None  # the executor stopped: lease released


def test_no_sticky_sessions_for_follow_ups(plain_cluster: Running) -> None:
    """A follow-up to an input-required task is served by whichever replica gets it."""
    cluster, _ = plain_cluster
    first, second = cluster.replicas[0], cluster.replicas[1]
    task = result(first.url, "SendMessage", send("ask"))["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    done = result(second.url, "SendMessage", send("answer 42", task_id=task["id"]))["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["status"]["message"]["parts"][0]["text"] == f"answered 42 on {second.port}"


def test_two_concurrent_follow_ups_on_two_replicas_one_wins(plain_cluster: Running) -> None:
    """Never two executors on one task: of two follow-ups at once, one runs, the other gets
    UnsupportedOperationError (-32004) and its message is not added to the task."""
    cluster, _ = plain_cluster
    for _round in range(5):
        task = result(cluster.replicas[0].url, "SendMessage", send("ask"))["task"]
        answers: dict[int, dict[str, Any]] = {}
        gate = threading.Barrier(2)

        def answer(
            index: int, task_id: str, gate: threading.Barrier, out: dict[int, dict[str, Any]]
        ) -> None:
            gate.wait()
            url = cluster.replicas[index].url
            out[index] = rpc(url, "SendMessage", send(f"answer {index}", task_id=task_id))

        threads = [
            threading.Thread(target=answer, args=(i, task["id"], gate, answers)) for i in (1, 2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        outcomes = Counter("result" in a for a in answers.values())
        assert outcomes == Counter({True: 1, False: 1}), answers
        loser = next(a for a in answers.values() if "error" in a)
        assert loser["error"]["code"] == -32004, loser
        winner = next(i for i, a in answers.items() if "result" in a)
        final = result(cluster.replicas[0].url, "GetTask", {"id": task["id"]})
        assert final["status"]["message"]["parts"][0]["text"].startswith(f"answered {winner} ")
        texts = [m["parts"][0]["text"] for m in final["history"] if m["role"] == "ROLE_USER"]
        assert texts == ["ask", f"answer {winner}"]


def test_push_is_not_delivered_twice_by_two_replicas(
    plain_cluster: Running, webhook: tuple[WebhookReceiver, str]
) -> None:
    """Events of one task recorded on two replicas (a follow-up served elsewhere): each
    notification is delivered once — one replica at a time holds the config's push lease."""
    cluster, _ = plain_cluster
    receiver, hook = webhook
    first, second, third = cluster.replicas
    config = {"taskPushNotificationConfig": {"url": hook}}
    task = result(first.url, "SendMessage", send("ask", **config))["task"]
    result(second.url, "SendMessage", send("answer yes", task_id=task["id"]))
    result(third.url, "GetTask", {"id": task["id"]})
    deadline = time.monotonic() + 10
    while not any("statusUpdate" in e and e["statusUpdate"]["status"]["state"] in TERMINAL
                  for e in receiver.of(task["id"])):  # fmt: skip
        assert time.monotonic() < deadline, "the final notification never came"
        time.sleep(0.05)
    time.sleep(1.0)  # anything duplicated would have arrived by now
    pushed = [str(e) for e in receiver.of(task["id"])]
    assert len(pushed) == len(set(pushed)), Counter(pushed).most_common(3)
