"""Importing simple_a2a needs no grpcio; the gRPC modules name the extra when it is missing."""

from __future__ import annotations

import subprocess
import sys

BLOCK = "import sys; sys.modules['grpc'] = None; sys.modules['google.protobuf'] = None; "


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code], capture_output=True, text=True, timeout=60
    )


def test_import_without_grpc() -> None:
    done = run(
        "import simple_a2a, simple_a2a.client, simple_a2a.server; "
        "from simple_a2a.client.transport import TRANSPORTS; assert 'GRPC' not in TRANSPORTS; "
        "print('ok')"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_grpc_modules_name_the_extra() -> None:
    for module in ("simple_a2a.server.grpc", "simple_a2a.protocol.grpc_codec"):
        done = run(f"import {module}")
        assert done.returncode != 0
        assert "pip install 'simple-a2a[grpc]'" in done.stderr, done.stderr


def test_negotiation_error_names_the_extra() -> None:
    done = run(
        "import asyncio, simple_a2a\n"
        "card = {'name': 'a', 'description': 'd', 'version': '1', 'capabilities': {},"
        " 'defaultInputModes': [], 'defaultOutputModes': [], 'skills': [],"
        " 'supportedInterfaces': [{'url': 'h:1', 'protocolBinding': 'GRPC',"
        " 'protocolVersion': '1.0'}]}\n"
        "async def main():\n"
        "    async with simple_a2a.AsyncClient(card, bindings=['GRPC']) as c:\n"
        "        await c.get('x')\n"
        "asyncio.run(main())"
    )
    assert done.returncode != 0
    assert "NegotiationError" in done.stderr and "simple-a2a[grpc]" in done.stderr, done.stderr
