"""The cluster soak (issue #14): tasks with push configs sent through the proxy to three
replicas while replicas are killed (kill -9) and restarted at random.

Counted and reported: tasks lost (accepted but gone), stuck (not finished within the bound
after the chaos stops), push notifications lost (a finished task whose webhook missed a step or
the final status), duplicate notifications (allowed around a crash: at-least-once). The first
three must be 0.

Fast mode (CI, the default): 80 tasks, a kill every 1-2 s. Full mode:
``A2A_CLUSTER_SOAK=full`` (1,000 tasks; a few minutes).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from .support import (
    RECOVERY_BOUND,
    TERMINAL,
    Cluster,
    RoundRobinProxy,
    WebhookReceiver,
    rpc,
    running_cluster,
    send,
    sql,
)

FULL = os.environ.get("A2A_CLUSTER_SOAK") == "full"
TASKS = 1000 if FULL else 80
STEPS = 3


def _call(url: str, method: str, params: dict[str, Any], tries: int = 20) -> dict[str, Any]:
    """A call that survives a replica dying under it (a read, or a send we can tell apart)."""
    for attempt in range(tries):
        try:
            return rpc(url, method, params)
        except (httpx.TransportError, ValueError):  # cut mid-answer: the proxy picks another
            if attempt == tries - 1:
                raise
            time.sleep(0.1)
    raise AssertionError("unreachable")


def _chaos(cluster: Cluster, stop: threading.Event, kills: list[int]) -> None:
    rng = random.Random(14)
    while not stop.wait(rng.uniform(1.0, 2.0)):
        victim = rng.randrange(len(cluster.replicas))
        cluster.kill(victim)
        kills.append(victim)
        time.sleep(rng.uniform(0.1, 0.5))
        cluster.start(victim)
        cluster.wait_ready(victim)


@pytest.fixture
def soak_cluster(tmp_path: Path, webhook: tuple[WebhookReceiver, str]) -> Any:
    from .conftest import _schema

    for schema in _schema():
        with running_cluster(schema, 3, resumable=True, marks=tmp_path) as running:
            yield running


@pytest.mark.timeout(1800 if FULL else 240)
def test_soak_replicas_killed_at_random_lose_nothing(
    soak_cluster: tuple[Cluster, RoundRobinProxy], webhook: tuple[WebhookReceiver, str]
) -> None:
    cluster, proxy = soak_cluster
    receiver, hook = webhook
    stop = threading.Event()
    kills: list[int] = []
    chaos = threading.Thread(target=_chaos, args=(cluster, stop, kills), daemon=True)
    accepted: list[str] = []
    send_errors = 0
    lock = threading.Lock()

    def submit(n: int) -> None:
        nonlocal send_errors
        config = {"returnImmediately": True, "taskPushNotificationConfig": {"url": hook}}
        for _ in range(20):
            try:
                answer = rpc(proxy.url, "SendMessage", send(f"steps {STEPS} 0.05", **config))
            except (httpx.TransportError, ValueError):
                with lock:
                    send_errors += 1  # no answer: the client cannot know the task; it retries
                time.sleep(0.1)
                continue
            if "result" in answer:
                with lock:
                    accepted.append(answer["result"]["task"]["id"])
                return
            with lock:
                send_errors += 1
            time.sleep(0.1)

    started = time.monotonic()
    chaos.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(submit, range(TASKS)))
    finally:
        stop.set()
        chaos.join(60)
    cluster_up = [r for r in cluster.replicas if r.proc and r.proc.poll() is None]
    assert len(cluster_up) == 3

    deadline = time.monotonic() + RECOVERY_BOUND + 30
    lost, stuck, bad_steps = [], [], []
    for task_id in accepted:
        while True:
            answer = _call(proxy.url, "GetTask", {"id": task_id})
            if "error" in answer:
                lost.append(task_id)
                break
            task = answer["result"]
            if task["status"]["state"] in TERMINAL:
                ids = [a["artifactId"] for a in task.get("artifacts", [])]
                if task["status"]["state"] != "TASK_STATE_COMPLETED" or ids != [
                    f"step-{i}" for i in range(STEPS)
                ]:
                    bad_steps.append((task_id, task["status"]["state"], ids))
                break
            if time.monotonic() > deadline:
                stuck.append(task_id)
                break
            time.sleep(0.1)

    push_lost: list[str] = []
    push_deadline = time.monotonic() + RECOVERY_BOUND + 20
    duplicates = 0
    for task_id in accepted:
        while True:
            pushed = receiver.of(task_id)
            steps = {
                e["artifactUpdate"]["artifact"]["artifactId"]
                for e in pushed
                if "artifactUpdate" in e
            }
            final = any(
                e.get("statusUpdate", {}).get("status", {}).get("state") in TERMINAL for e in pushed
            )
            if final and steps == {f"step-{i}" for i in range(STEPS)}:
                keys = Counter(str(e) for e in pushed)
                duplicates += sum(n - 1 for n in keys.values())
                break
            if time.monotonic() > push_deadline:
                push_lost.append(task_id)
                break
            time.sleep(0.1)

    report = (
        f"soak: {len(accepted)} tasks in {time.monotonic() - started:.1f} s, {len(kills)} kills, "
        f"{send_errors} sends cut by a kill (retried), lost {len(lost)}, stuck {len(stuck)}, "
        f"wrong {len(bad_steps)}, push lost {len(push_lost)}, push duplicates {duplicates}"
    )
    print(report)
    for task_id in push_lost[:3]:  # what the storage says about a lost delivery
        print(
            task_id,
            sql(cluster.schema, "SELECT * FROM {s}.push_cursors WHERE task_id = $1", task_id),
            sql(cluster.schema, "SELECT * FROM {s}.leases WHERE key LIKE $1", task_id + "%"),
            [sorted(e) for e in receiver.of(task_id)],
        )
    assert len(accepted) == TASKS, report
    assert kills, "the chaos never killed a replica"
    assert not lost and not stuck and not bad_steps and not push_lost, (
        report,
        lost[:3],
        stuck[:3],
        bad_steps[:3],
        push_lost[:3],
    )
