"""One process of the roles tests: ``python roles_agent.py STORAGE_URL PORT ROLE [CAP]``.

The cluster tests' agent (``cluster_agent.ClusterAgent``: every answer names the port of the
process that ran it, so a test sees which worker did) served in ``ROLE`` (web, worker, all),
with at most ``CAP`` executions per process, short leases and a fast poll.
"""

from __future__ import annotations

import sys

from cluster_agent import ClusterAgent  # (run as a script: its directory is on sys.path)

from simple_a2a.protocol import AgentCard
from simple_a2a.protocol.card import AgentCapabilities
from simple_a2a.server import server
from simple_a2a.server.push import PushSettings
from simple_a2a.server.workqueue import QueueSettings

if __name__ == "__main__":
    storage, port, role = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    cap = int(sys.argv[4]) if len(sys.argv) > 4 else None
    card = AgentCard(
        name="roles",
        description="roles test agent",
        version="1",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
    )
    agent = server(
        card,
        ClusterAgent(),
        storage=storage,
        role=role,
        queue=QueueSettings(max_concurrent_tasks=cap, poll_interval=0.2),
        push=PushSettings(allow_hosts=["127.0.0.1"], signing=None),  # the soak's webhook
        lease_ttl=2.5,
        lease_scan_interval=0.5,
        shutdown_grace=1.0,
    )
    agent.run(port=port, log_level="warning")
