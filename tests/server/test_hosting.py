"""Discovery (spec §8), multi-agent hosting and mounting, over real HTTP on loopback."""

from __future__ import annotations

from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.routing import Mount

import simple_a2a
from simple_a2a.protocol import AgentCard
from simple_a2a.server import server
from tests.support import rpc
from tests.support.agents import TestAgent, make_card, user

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json", "/agentCard")


def interfaces(card: dict[str, Any]) -> dict[str, str]:
    return {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}


async def test_card_at_three_paths_with_etag_and_304(serve: Any) -> None:
    """Spec §8.2 (well-known URI), §8.6 (caching): ETag, Cache-Control, If-None-Match → 304."""
    url = serve(server(make_card(), TestAgent()).app)
    async with httpx.AsyncClient(base_url=url) as client:
        bodies = []
        for path in CARD_PATHS:
            r = await client.get(path)
            assert r.status_code == 200
            assert "max-age" in r.headers["cache-control"]
            bodies.append(r.json())
            again = await client.get(path, headers={"If-None-Match": r.headers["etag"]})
            assert again.status_code == 304 and again.content == b""
        assert bodies[0] == bodies[1] == bodies[2]
    card = bodies[0]
    # one document for 1.0 and 0.3 readers (spec §8.3.1; 0.3 specification.md §5.6)
    assert interfaces(card) == {"JSONRPC": url, "HTTP+JSON": url}
    assert card["url"] == url and card["preferredTransport"] == "JSONRPC"
    assert {i["transport"] for i in card["additionalInterfaces"]} == {"JSONRPC", "HTTP+JSON"}
    assert card["protocolVersion"].startswith("0.3")
    AgentCard.from_dict(card)  # and the 1.0 model reads it


async def test_rest_prefix_and_explicit_interfaces(serve: Any) -> None:
    url = serve(server(make_card(), TestAgent(), rest_prefix="/api").app)
    async with httpx.AsyncClient(base_url=url) as client:
        card = (await client.get(CARD_PATHS[0])).json()
        assert interfaces(card) == {"JSONRPC": url, "HTTP+JSON": url + "/api"}
        r = await client.post("/api/message:send", json={"message": user("hi")})
        assert r.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        # a client that joins the route onto the URL ``<base>/api/`` (the ITK's cards end in /)
        r = await client.post("/api//message:send", json={"message": user("hi")})
        assert r.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert (await client.post("/message:send", json={"message": user("hi")})).status_code == 404
    explicit = AgentCard.from_dict(
        {
            **make_card().to_dict(),
            "supportedInterfaces": [
                {"url": "https://agents.example/a", "protocolBinding": "JSONRPC"}
            ],
        }
    )
    url = serve(server(explicit, TestAgent()).app)
    async with httpx.AsyncClient(base_url=url) as client:
        card = (await client.get(CARD_PATHS[0])).json()
    assert interfaces(card) == {"JSONRPC": "https://agents.example/a"}


async def test_jsonrpc_path_answers_with_and_without_trailing_slash(serve: Any) -> None:
    """No redirect between ``/jsonrpc`` and ``/jsonrpc/``: clients do not follow one on a POST
    (the ITK's runner posts to ``/jsonrpc/``, Go peers trim the slash)."""
    url = serve(server(make_card(), TestAgent(), jsonrpc_path="/jsonrpc").app)
    body = {"message": user("hi")}
    async with httpx.AsyncClient(base_url=url) as client:
        for path in ("/jsonrpc", "/jsonrpc/"):
            r = await client.post(
                path,
                json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": body},
                headers={"A2A-Version": "1.0"},
            )
            assert r.status_code == 200, path
            assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert (await client.get(path)).status_code == 405  # JSON-RPC is POSTed, no redirect
        card = (await client.get(CARD_PATHS[0])).json()
    assert interfaces(card)["JSONRPC"] == url + "/jsonrpc"


async def test_multi_server_isolates_agents(serve: Any) -> None:
    research = make_card().model_copy(update={"name": "Research"})
    multi = simple_a2a.multi_server(
        {
            "/research": {"agent_card": research, "executor": TestAgent()},
            "/evaluator": server(make_card().model_copy(update={"name": "Evaluator"}), TestAgent()),
        }
    )
    url = serve(multi.app)
    async with httpx.AsyncClient(base_url=url) as client:
        cards = {}
        for prefix in ("/research", "/evaluator"):
            cards[prefix] = (await client.get(prefix + CARD_PATHS[0])).json()
            assert interfaces(cards[prefix]) == {
                "JSONRPC": url + prefix,
                "HTTP+JSON": url + prefix,
            }
        assert cards["/research"]["name"] == "Research"
        assert cards["/evaluator"]["name"] == "Evaluator"
        # JSON-RPC at the prefix itself (no trailing slash, no redirect), REST below it
        r = await client.post("/research", json=rpc("SendMessage", {"message": user("one")}))
        task = r.json()["result"]["task"]
        got = await client.get(f"/research/tasks/{task['id']}")
        assert got.json()["id"] == task["id"]
        other = await client.get(f"/evaluator/tasks/{task['id']}")
        assert other.status_code == 404  # a task of one agent is unknown to the other
        other = await client.post("/evaluator/", json=rpc("GetTask", {"id": task["id"]}))
        assert other.json()["error"]["code"] == -32001
        assert (await client.get("/nobody/tasks")).status_code == 404
    assert multi["/research"].storage is not multi["/evaluator"].storage


async def test_mount_in_starlette_and_fastapi(serve: Any) -> None:
    from fastapi import FastAPI

    agent = server(make_card(), TestAgent())
    api = FastAPI(lifespan=agent.lifespan)

    @api.get("/health")
    def health() -> dict[str, str]:
        return {"ok": "yes"}

    api.mount("/agent", agent.app)
    plain = server(make_card(), TestAgent())
    star = Starlette(routes=[Mount("/a2a", app=plain.app)])
    for app, prefix in ((api, "/agent"), (star, "/a2a")):
        url = serve(app)
        async with httpx.AsyncClient(base_url=url) as client:
            card = (await client.get(prefix + CARD_PATHS[0])).json()
            # a parent app redirects POST /agent → /agent/, so JSON-RPC is announced with the slash
            assert interfaces(card) == {"JSONRPC": f"{url}{prefix}/", "HTTP+JSON": url + prefix}
            r = await client.post(
                interfaces(card)["JSONRPC"], json=rpc("SendMessage", {"message": user("x")})
            )
            task = r.json()["result"]["task"]
            got = await client.get(f"{interfaces(card)['HTTP+JSON']}/tasks/{task['id']}")
            assert got.json()["status"]["state"] == "TASK_STATE_COMPLETED"
    async with httpx.AsyncClient(base_url=serve(api)) as client:
        assert (await client.get("/health")).json() == {"ok": "yes"}


async def test_our_client_discovers_a_mounted_agent(serve: Any) -> None:
    multi = simple_a2a.multi_server({"/x": {"agent_card": make_card(), "executor": TestAgent()}})
    url = serve(multi.app)
    for binding in ("JSONRPC", "HTTP+JSON"):
        async with simple_a2a.AsyncClient(url + "/x", bindings=[binding]) as client:
            task = await client.send("hello")
            assert task.text == "echo: hello"


def test_startup_freezes_the_startup_heap_once() -> None:
    """``A2AServer.startup`` moves the startup heap to the collector's permanent generation
    (docs/guides/deployment.md, "The garbage collector"): checked in a fresh process."""
    import subprocess
    import sys

    code = (
        "import asyncio, gc, simple_a2a\n"
        "card = simple_a2a.AgentCard(name='n', description='d', version='1')\n"
        "before = gc.get_freeze_count()  # (not 0 on Python 3.12+)\n"
        "first = simple_a2a.server(card, lambda ctx: 'hi')\n"
        "asyncio.run(first.startup())\n"
        "frozen = gc.get_freeze_count()\n"
        "assert frozen > before, (before, frozen)\n"
        "asyncio.run(simple_a2a.server(card, lambda ctx: 'hi').startup())\n"
        "assert gc.get_freeze_count() == frozen  # once per process\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
