"""Our client subscribes to the JavaScript SDK 1.3.0's agent (tests/interop_js/agent.mjs, a
Node process) over 1.0 HTTP+JSON by POST, and meets a task that ended while it was away
(issue #33): the SDK refuses the reconnect (§3.1.6), our client ends the stream with GetTask's
task. The SDK's 1.0 server takes both verbs for ``/tasks/{id}:subscribe``; the integration
test kit's TypeScript agent only POST (docs/interop.md), which is why we send POST.
"""

from __future__ import annotations

import pytest

from tests.client.ended_reconnect import ended_canceled, reconnect_after_the_end
from tests.test_interop_js import PEER, node, their_agent, their_peer

__all__ = ["node", "their_agent", "their_peer"]  # the fixtures, shared with test_interop_js


@pytest.mark.interop(peer=PEER, direction="ours → theirs", protocol="1.0")
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_js_refused_reconnect_ends_with_the_task(their_agent: str, binding: str) -> None:
    ended_canceled(await reconnect_after_the_end(their_agent, binding), binding, "1.0")
