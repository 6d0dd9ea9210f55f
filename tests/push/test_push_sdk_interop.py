"""The official SDK's client (a2a-sdk 1.3.0) manages our push configs over JSON-RPC."""

from __future__ import annotations

import pytest

from tests.push.push_helpers import Receiver, Steps, make_server, send, summary

a2a_client = pytest.importorskip("a2a.client")
a2a_types = pytest.importorskip("a2a.types")

pytestmark = pytest.mark.interop(
    peer="Python SDK 1.3.0", direction="theirs → ours", protocol="1.0", binding="JSONRPC"
)


async def test_sdk_client_create_get_list_delete(serve) -> None:  # type: ignore[no-untyped-def]
    receiver = Receiver()
    hook = serve(receiver.app) + "/hook"
    executor = Steps(n=2)
    url = serve(make_server(executor).app)
    task = send(url)
    config = a2a_client.ClientConfig(supported_protocol_bindings=["JSONRPC"])
    client = await a2a_client.create_client(url, client_config=config)
    try:
        created = await client.create_task_push_notification_config(
            a2a_types.TaskPushNotificationConfig(task_id=task["id"], url=hook, token="tok")
        )
        assert created.id and created.task_id == task["id"] and created.url == hook
        got = await client.get_task_push_notification_config(
            a2a_types.GetTaskPushNotificationConfigRequest(task_id=task["id"], id=created.id)
        )
        assert got.url == hook and got.token == "tok"
        listed = await client.list_task_push_notification_configs(
            a2a_types.ListTaskPushNotificationConfigsRequest(task_id=task["id"])
        )
        assert [c.id for c in listed.configs] == [created.id]

        executor.gate.set()
        events = receiver.wait_final()
        assert summary(events[-1]) == "status:TASK_STATE_COMPLETED"
        assert receiver.received[0][0]["x-a2a-notification-token"] == "tok"

        await client.delete_task_push_notification_config(
            a2a_types.DeleteTaskPushNotificationConfigRequest(task_id=task["id"], id=created.id)
        )
        listed = await client.list_task_push_notification_configs(
            a2a_types.ListTaskPushNotificationConfigsRequest(task_id=task["id"])
        )
        assert list(listed.configs) == []
        # a refused URL surfaces as the SDK's invalid-params error
        with pytest.raises(Exception, match=r"(?i)url refused"):
            await client.create_task_push_notification_config(
                a2a_types.TaskPushNotificationConfig(
                    task_id=task["id"], url="http://169.254.169.254/"
                )
            )
    finally:
        await client.close()
