"""The folder layout is the architecture: imports point one way (docs/architecture.md).

protocol/ imports nothing else of ours; storage/ only protocol/; client/ only protocol/;
server/ protocol/, storage/ and auth/ (never client/); auth/ only protocol/; the command line
(cli/) and demo.py sit on top and nothing imports them; webhooks.py (the receiving side of push)
needs only protocol/. Inside server/ the layers point one way too: the task core knows nothing of
the handler, the handler nothing of the bindings, the bindings nothing of the app that composes
them. Checked on the source, so it cannot rot.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "simple_a2a"

ALLOWED = {
    "protocol": {"protocol"},
    "storage": {"protocol", "storage"},
    "client": {"protocol", "client"},
    "server": {"protocol", "storage", "auth", "server"},
    "auth": {"protocol", "auth"},
    # The inspector (a development tool) drives agents through our own client.
    "inspector": {"protocol", "client", "inspector"},
    # The command line uses the public API of both sides; it is outside the rooms.
    "cli": {"simple_a2a", "protocol", "client", "server", "storage", "auth", "inspector", "cli"},
    # Framework adapters: an executor on the server's API, a remote agent through our client.
    "adapters": {"protocol", "client", "server", "adapters"},
    # The MCP bridge: an A2A agent as an MCP server, called through our client.
    "mcp": {"protocol", "client", "mcp"},
    # The receiving side of push notifications: a webhook needs no server.
    "webhooks.py": {"protocol"},
    # `python -m simple_a2a.demo`: serves agents and calls them through the public API.
    "demo.py": {"simple_a2a", "protocol", "server", "storage"},
}


#: Single modules allowed one more room, each for a stated reason.
EXCEPTIONS = {
    # server(..., inspector=True): the inspector (a development tool, off by default) is
    # imported only then; its backend calls the agent over HTTP like any client.
    "server/app.py": {"inspector"},
    # `simple-a2a mcp URL` runs the MCP bridge (imported only when that command runs).
    "cli/mcp_command.py": {"mcp"},
}


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (imports only for type hints)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def _room_imports(path: Path, *, runtime_only: bool = False, depth: int = 1) -> set[str]:
    """The rooms of simple_a2a that a module imports (relative or absolute); with ``depth=2``
    the modules of a room (``server/handler``)."""
    rel = path.relative_to(SRC).parts
    tree = ast.parse(path.read_text())
    rooms: set[str] = set()
    nodes = _runtime_nodes(tree) if runtime_only else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[: len(rel) - node.level])
                target = [*base, *(node.module.split(".") if node.module else [])]
                if len(target) < depth:  # "from . import x": x is a room (or a module)
                    rooms.update("/".join([*target, alias.name]) for alias in node.names)
                else:
                    rooms.add("/".join(target[:depth]))
            elif node.module == "simple_a2a":
                rooms.add("simple_a2a")
            elif node.module and node.module.startswith("simple_a2a."):
                rooms.add("/".join(node.module.split(".")[1 : 1 + depth]))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("simple_a2a."):
                    rooms.add("/".join(alias.name.split(".")[1 : 1 + depth]))
                elif alias.name == "simple_a2a":
                    rooms.add("simple_a2a")
    return rooms


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_imports_point_one_way(room: str) -> None:
    folder = SRC / room
    if not folder.exists():
        pytest.skip(f"{room} does not exist yet")
    bad = {}
    for path in [folder] if folder.is_file() else folder.rglob("*.py"):
        module = str(path.relative_to(SRC))
        extra = _room_imports(path) - ALLOWED[room] - EXCEPTIONS.get(module, set())
        if extra:
            bad[str(path.relative_to(SRC))] = sorted(extra)
    assert not bad, f"{room}/ may import only {sorted(ALLOWED[room])}: {bad}"


def test_no_module_is_too_long() -> None:
    """Modules stay readable: about 600 lines at most."""
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if not {"_grpc", "_grpc_v03"} & set(p.parts)  # generated by scripts/gen_grpc
        and (n := len(p.read_text().splitlines())) > 650
    }
    assert not long, long


def test_nothing_imports_the_top() -> None:
    """cli/ and demo.py use the library; the library never uses them."""
    top = {"cli", "demo"}
    bad = {
        str(path.relative_to(SRC)): sorted(found)
        for path in SRC.rglob("*.py")
        if path.relative_to(SRC).parts[0] not in ("cli", "demo.py")
        and (found := _room_imports(path) & top)
    }
    assert not bad, bad


#: Layers inside server/, bottom to top; a module may import (at run time) only server modules
#: of its own layer or below. Imports for type hints (``if TYPE_CHECKING``) are free.
SERVER_LAYERS: list[set[str]] = [
    # the task core: storage access, bounds, paging, metrics
    {"tasks", "limits", "paging", "metrics", "background", "retention"},
    # what an executor sees and the runner, and its recovery policy
    {"context", "executor", "policy"},
    # the binding-independent handler and what it drives
    {
        "handler",
        "push_configs",
        "recovery",
        "leases",
        "stopping",
        "workqueue",
        "push",
        "telemetry",
        "card_signing",
    },
    # the bindings: translation only, each calls RequestHandler.handle()
    {"http", "jsonrpc", "rest", "grpc"},
    # composition: the ASGI app, several agents in one process, running it
    {"app", "routing", "multi", "serving", "__init__"},
]


def test_server_layers_point_down() -> None:
    layer_of = {name: i for i, names in enumerate(SERVER_LAYERS) for name in names}
    server = SRC / "server"
    modules = {p.stem for p in server.glob("*.py")} | {
        p.name for p in server.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    unplaced = modules - set(layer_of)
    assert not unplaced, f"place these server/ modules in SERVER_LAYERS: {sorted(unplaced)}"
    bad = {}
    for path in server.rglob("*.py"):
        rel = path.relative_to(server).parts
        own = rel[0] if len(rel) > 1 else path.stem
        for target in _room_imports(path, runtime_only=True, depth=2):
            room, _, name = target.partition("/")
            if room != "server" or not name or name == own:
                continue
            if layer_of.get(name, -1) > layer_of[own]:
                bad.setdefault(f"server/{'/'.join(rel)}", []).append(name)
    assert not bad, f"server/ modules import a layer above them: {bad}"
