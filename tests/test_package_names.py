"""``simple_a2a.server`` and ``simple_a2a.client`` are the subpackages, and calling them is the
seed's API (``simple_a2a.server(card, executor)``, ``simple_a2a.client(url)``): no function
shadows a package (issue 13)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import simple_a2a
from simple_a2a.protocol import AgentCard


def test_import_gives_the_packages() -> None:
    for name in ("server", "client"):
        module = importlib.import_module(f"simple_a2a.{name}")
        assert getattr(simple_a2a, name) is module
        assert isinstance(module, types.ModuleType)
    assert simple_a2a.server.A2AServer is simple_a2a.A2AServer  # type: ignore[attr-defined]
    assert simple_a2a.client.AsyncClient is simple_a2a.AsyncClient  # type: ignore[attr-defined]


def test_calling_the_packages_is_the_seed_api() -> None:
    card = AgentCard(name="n", description="d", version="1")
    built = simple_a2a.server(card, lambda ctx: "hi")
    assert isinstance(built, simple_a2a.A2AServer) and built.card.name == "n"
    opened = simple_a2a.client("http://127.0.0.1:9")
    try:
        assert isinstance(opened, simple_a2a.Client)
    finally:
        opened.close()


def test_a_fresh_import_statement_sees_the_package() -> None:
    """``import simple_a2a.server`` first thing in a new process (nothing imported before)."""
    code = (
        "import simple_a2a.server, simple_a2a.client, types\n"
        "assert isinstance(simple_a2a.server, types.ModuleType)\n"
        "assert isinstance(simple_a2a.client, types.ModuleType)\n"
        "print(simple_a2a.server.RequestHandler.__name__, simple_a2a.client.Client.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["RequestHandler", "Client"]


def test_importing_the_package_loads_neither_the_client_nor_the_server() -> None:
    """``import simple_a2a`` loads the protocol models only; the client's and the server's names
    load on first use (issue #19: import time; neither side imports the other's dependencies)."""
    code = (
        "import sys, simple_a2a\n"
        "heavy = ('httpx', 'starlette', 'uvicorn', 'click', 'rich', 'simple_a2a.client',"
        " 'simple_a2a.server')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "simple_a2a.AsyncClient\n"
        "server_side = ('starlette', 'uvicorn', 'simple_a2a.server')\n"
        "print(sorted(m for m in server_side if m in sys.modules))\n"
        "simple_a2a.server\n"
        "print(sorted(m for m in ('uvicorn',) if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["[]", "[]", "[]"]
