"""Test-side adapters: one per HTTP binding, speaking raw httpx, so one behavioural suite runs
over JSON-RPC (spec §9) and HTTP+JSON (spec §11) and the bindings cannot drift apart.

Both adapters take an operation's 1.0 name and its 1.0 request fields and return an
:class:`Outcome`: the result, or the error's ``ErrorInfo.reason`` plus the binding's own code
(the JSON-RPC code, or the HTTP status for REST; spec §5.4).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx_sse import aconnect_sse

from simple_a2a.protocol import errors as e
from simple_a2a.protocol.operations import OPERATIONS_BY_NAME
from simple_a2a.protocol.rest import query_string


@dataclass
class Outcome:
    result: Any = None
    reason: str | None = None  #: the ErrorInfo reason of an error
    code: int | None = None  #: JSON-RPC error code / REST HTTP status of an error
    message: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    events: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reason is None and self.code is None


def _reason(details: Any) -> str | None:
    for item in details or []:
        if isinstance(item, dict) and "reason" in item:
            return str(item["reason"])
    return None


class JSONRPC:
    name = "JSONRPC"

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    def code_of(self, err: type[e.A2AError]) -> int:
        return err.code

    async def call(
        self, op: str, params: dict[str, Any], headers: dict[str, str] | None = None
    ) -> Outcome:
        body = {"jsonrpc": "2.0", "id": 7, "method": op, "params": params}
        r = await self.client.post("/", json=body, headers=headers or {})
        return self._outcome(r.json(), r)

    async def raw(self, content: bytes, headers: dict[str, str] | None = None) -> Outcome:
        r = await self.client.post(
            "/", content=content, headers={"content-type": "application/json", **(headers or {})}
        )
        return self._outcome(r.json(), r)

    def _outcome(self, body: dict[str, Any], r: httpx.Response | None) -> Outcome:
        status = r.status_code if r is not None else 200
        headers = dict(r.headers) if r is not None else {}
        if "error" in body:
            err = body["error"]
            return Outcome(
                None, _reason(err.get("data")), err["code"], err["message"], status, headers
            )
        return Outcome(body["result"], status=status, headers=headers)

    async def stream(
        self,
        op: str,
        params: dict[str, Any],
        headers: dict[str, str] | None = None,
        stop_after: int | None = None,
    ) -> Outcome:
        body = {"jsonrpc": "2.0", "id": 7, "method": op, "params": params}
        out = Outcome()
        async with aconnect_sse(self.client, "POST", "/", json=body, headers=headers or {}) as src:
            out.headers = dict(src.response.headers)
            if not src.response.headers.get("content-type", "").startswith("text/event-stream"):
                # an error known before the stream starts: a plain JSON-RPC error response
                await src.response.aread()
                return self._outcome(src.response.json(), src.response)
            async for sse in src.aiter_sse():
                data = json.loads(sse.data)
                if "error" in data:
                    return self._outcome(data, None)
                out.events.append((sse.id or None, data["result"]))
                if stop_after and len(out.events) >= stop_after:
                    break
        return out


class REST:
    name = "HTTP+JSON"

    def __init__(self, client: httpx.AsyncClient, prefix: str = "") -> None:
        self.client = client
        self.prefix = prefix

    def code_of(self, err: type[e.A2AError]) -> int:
        return err.http_status

    def request(self, op_name: str, params: dict[str, Any]) -> tuple[str, str, Any, Any]:
        """(verb, url, json body, query) for an operation, from the operations table."""
        op = OPERATIONS_BY_NAME[op_name]
        rest = dict(params)
        tenant = rest.pop("tenant", None)

        def fill(m: re.Match[str]) -> str:
            name = m.group(1)
            camel = re.sub(r"_(\w)", lambda x: x.group(1).upper(), name)
            return str(rest.pop(camel, None) or rest.pop(name))

        path = re.sub(r"\{(\w+)\}", fill, op.path)
        if tenant:
            path = f"/{tenant}{path}"
        if op.has_body:
            return op.http_method, self.prefix + path, rest, None
        return op.http_method, self.prefix + path, None, query_string(rest)

    async def call(
        self, op: str, params: dict[str, Any], headers: dict[str, str] | None = None
    ) -> Outcome:
        verb, url, body, query = self.request(op, params)
        r = await self.client.request(verb, url, json=body, params=query, headers=headers or {})
        return self._outcome(r)

    async def raw(self, content: bytes, headers: dict[str, str] | None = None) -> Outcome:
        r = await self.client.post(
            self.prefix + "/message:send",
            content=content,
            headers={"content-type": "application/json", **(headers or {})},
        )
        return self._outcome(r)

    @staticmethod
    def _outcome(r: httpx.Response) -> Outcome:
        body = r.json()
        if r.status_code >= 400:
            err = body["error"]
            assert err["code"] == r.status_code  # spec §11.6: google.rpc.Status
            return Outcome(
                None,
                _reason(err.get("details")),
                r.status_code,
                err["message"],
                r.status_code,
                dict(r.headers),
            )
        return Outcome(body, status=r.status_code, headers=dict(r.headers))

    async def stream(
        self,
        op: str,
        params: dict[str, Any],
        headers: dict[str, str] | None = None,
        stop_after: int | None = None,
    ) -> Outcome:
        verb, url, body, query = self.request(op, params)
        out = Outcome()
        async with aconnect_sse(
            self.client, verb, url, json=body, params=query, headers=headers or {}
        ) as src:
            if src.response.status_code >= 400:
                await src.response.aread()
                return self._outcome(src.response)
            out.headers = dict(src.response.headers)
            async for sse in src.aiter_sse():
                out.events.append((sse.id or None, json.loads(sse.data)))
                if stop_after and len(out.events) >= stop_after:
                    break
        return out
