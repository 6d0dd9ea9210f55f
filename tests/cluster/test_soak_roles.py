"""The roles soak (issue #34): 3 web replicas and 2 workers on one PostgreSQL schema, one worker
reaching the database through a proxy that partitions it, while web replicas and workers are
killed (kill -9) and restarted and the partition comes and goes at random.

Tasks with a push config each are sent to the web replicas; afterwards every task must be
completed with its steps once each and in order — in the task, in its stored event log, and in
the push notifications it sent (duplicates around a crash are allowed: at-least-once) — and
none lost or stuck. A partitioned worker that comes back must have written nothing after
another worker took its task over (the event log would show a step twice).

Fast mode (CI, the default): 40 tasks, chaos every 1-2 s. Full mode: ``A2A_CLUSTER_SOAK=full``
(2,000 tasks at ~20/s, so ~100 s of chaos; about three minutes in all).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from examples._proxy import RoundRobinProxy

from simple_a2a.server.background import free_port

from .partition import PartitionProxy
from .support import (
    PG_DSN,
    RECOVERY_BOUND,
    TERMINAL,
    Cluster,
    Replica,
    WebhookReceiver,
    rpc,
    send,
    sql,
)
from .test_fencing import _via
from .test_soak import _call

FULL = os.environ.get("A2A_CLUSTER_SOAK") == "full"
TASKS = 2000 if FULL else 40
#: Seconds each of the 4 submitters waits between tasks: the full run sends ~20 tasks/s for
#: ~100 s, so the chaos (a fault every 1-2 s) hits running tasks throughout.
PACE = 0.2 if FULL else 0.0
STEPS = 3
AGENT = Path(__file__).with_name("roles_agent.py")
ROLES = ["web", "web", "web", "worker", "worker"]
PARTITIONED = 4  #: the worker behind the partition proxy
STEP_IDS = [f"step-{i}" for i in range(STEPS)]


class RolesCluster(Cluster):
    """``Cluster`` whose processes are ``roles_agent.py`` in their roles; the partitioned
    worker's storage URL goes through the proxy."""

    urls: list[str]

    def start(self, index: int) -> None:
        replica = self.replicas[index]
        replica.proc = subprocess.Popen(
            [sys.executable, str(AGENT), self.urls[index], str(replica.port), ROLES[index], "4"],
            env={**os.environ, **self.env},
        )


@pytest.fixture
def soak(tmp_path: Path) -> Iterator[tuple[RolesCluster, PartitionProxy, RoundRobinProxy]]:
    from .conftest import _schema

    for schema in _schema():
        upstream = urlsplit(PG_DSN)
        with PartitionProxy((upstream.hostname or "127.0.0.1", upstream.port or 5432)) as wall:
            cluster = RolesCluster(f"{PG_DSN}?schema={schema}", schema, {"CLUSTER_RESUMABLE": "1"})
            cluster.urls = [cluster.storage] * len(ROLES)
            cluster.urls[PARTITIONED] = f"{_via(wall.port, PG_DSN)}?schema={schema}"
            cluster.replicas = [Replica(free_port()) for _ in ROLES]
            try:
                cluster.start(0)  # one first: it migrates the new schema
                cluster.wait_ready(0)
                for index in range(1, len(ROLES)):
                    cluster.start(index)
                for index in range(1, len(ROLES)):
                    cluster.wait_ready(index)
                webs = [
                    r.port for r, role in zip(cluster.replicas, ROLES, strict=True) if role == "web"
                ]
                with RoundRobinProxy(webs) as front:
                    yield cluster, wall, front
            finally:
                wall.heal()
                for index in range(len(ROLES)):
                    cluster.kill(index)


def _chaos(
    cluster: RolesCluster, wall: PartitionProxy, stop: threading.Event, log: list[str]
) -> None:
    rng = random.Random(34)
    # Each kind of fault at least once, even in a short run; then at random.
    planned = ["partition", PARTITIONED - 1, 0]
    while not stop.wait(rng.uniform(1.0, 2.0)):
        action = planned.pop(0) if planned else ("partition" if rng.random() < 0.3 else None)
        if action == "partition":
            wall.freeze()  # longer than a lease (2.5 s): the other worker takes its tasks over
            log.append("partition")
            stop.wait(rng.uniform(3.0, 4.0))
            wall.heal()
            continue
        victim = action if isinstance(action, int) else rng.randrange(len(ROLES))
        cluster.kill(victim)
        log.append(f"kill {ROLES[victim]} {victim}")
        time.sleep(rng.uniform(0.1, 0.5))
        cluster.start(victim)
        cluster.wait_ready(victim)


def _logged_steps(schema: str, task_id: str) -> list[str]:
    rows = sql(schema, "SELECT doc FROM {s}.events WHERE task_id = $1 ORDER BY seq", task_id)
    steps = []
    for (doc,) in rows:
        event: dict[str, Any] = json.loads(doc) if isinstance(doc, str) else doc
        if "artifactUpdate" in event:
            steps.append(event["artifactUpdate"]["artifact"]["artifactId"])
    return steps


@pytest.mark.timeout(1800 if FULL else 300)
def test_soak_web_and_workers_killed_and_partitioned_lose_nothing(
    soak: tuple[RolesCluster, PartitionProxy, RoundRobinProxy],
    webhook: tuple[WebhookReceiver, str],
) -> None:
    cluster, wall, front = soak
    receiver, hook = webhook
    stop = threading.Event()
    chaos_log: list[str] = []
    chaos = threading.Thread(target=_chaos, args=(cluster, wall, stop, chaos_log), daemon=True)
    accepted: list[str] = []
    send_errors = 0
    lock = threading.Lock()

    def submit(n: int) -> None:
        nonlocal send_errors
        config = {"returnImmediately": True, "taskPushNotificationConfig": {"url": hook}}
        for _ in range(30):
            try:
                answer = rpc(front.url, "SendMessage", send(f"steps {STEPS} 0.05", **config))
            except (httpx.TransportError, ValueError):
                with lock:
                    send_errors += 1  # no answer (a web replica killed): the client retries
                time.sleep(0.1)
                continue
            if "result" in answer:
                with lock:
                    accepted.append(answer["result"]["task"]["id"])
                time.sleep(PACE)
                return
            with lock:
                send_errors += 1
            time.sleep(0.1)

    started = time.monotonic()
    chaos.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(submit, range(TASKS)))
        # The chaos goes on while the last tasks run, and until each fault happened once.
        until = time.monotonic() + 30
        while len(chaos_log) < 3 and time.monotonic() < until:
            time.sleep(0.1)
    finally:
        stop.set()
        chaos.join(60)
        wall.heal()

    deadline = time.monotonic() + RECOVERY_BOUND + 40
    lost, stuck, wrong, bad_logs = [], [], [], []
    for task_id in accepted:
        while True:
            answer = _call(front.url, "GetTask", {"id": task_id})
            if "error" in answer:
                lost.append(task_id)
                break
            task = answer["result"]
            if task["status"]["state"] in TERMINAL:
                ids = [a["artifactId"] for a in task.get("artifacts", [])]
                if task["status"]["state"] != "TASK_STATE_COMPLETED" or ids != STEP_IDS:
                    wrong.append((task_id, task["status"]["state"], ids))
                logged = _logged_steps(cluster.schema, task_id)
                if logged != STEP_IDS:  # none lost, none twice, in order
                    bad_logs.append((task_id, logged))
                break
            if time.monotonic() > deadline:
                stuck.append((task_id, task["status"]["state"]))
                break
            time.sleep(0.1)

    push_lost, push_disorder = [], []
    push_deadline = time.monotonic() + RECOVERY_BOUND + 20
    for task_id in accepted:
        while True:
            pushed = receiver.of(task_id)
            steps = [
                e["artifactUpdate"]["artifact"]["artifactId"]
                for e in pushed
                if "artifactUpdate" in e
            ]
            final = any(
                e.get("statusUpdate", {}).get("status", {}).get("state") in TERMINAL for e in pushed
            )
            if final and set(steps) == set(STEP_IDS):
                firsts = list(dict.fromkeys(steps))  # at-least-once: a repeat may follow
                if firsts != STEP_IDS:
                    push_disorder.append((task_id, steps))
                break
            if time.monotonic() > push_deadline:
                push_lost.append(task_id)
                break
            time.sleep(0.1)

    report = (
        f"roles soak: {len(accepted)} tasks in {time.monotonic() - started:.1f} s, chaos "
        f"{chaos_log.count('partition')} partitions and "
        f"{len(chaos_log) - chaos_log.count('partition')} kills, {send_errors} sends retried; "
        f"lost {len(lost)}, stuck {len(stuck)}, wrong {len(wrong)}, event logs wrong "
        f"{len(bad_logs)}, push lost {len(push_lost)}, push out of order {len(push_disorder)}"
    )
    print(report, chaos_log)
    assert len(accepted) == TASKS, report
    assert "partition" in chaos_log and len(chaos_log) >= 3, chaos_log
    assert not (lost or stuck or wrong or bad_logs or push_lost or push_disorder), (
        report,
        lost[:3],
        stuck[:3],
        wrong[:3],
        bad_logs[:3],
        push_lost[:3],
        push_disorder[:3],
    )
