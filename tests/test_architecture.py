"""The folder layout is the architecture: imports point one way (docs/architecture.md).

protocol/ imports nothing else of ours; storage/ only protocol/; client/ only protocol/;
server/ protocol/, storage/ and auth/ (never client/);
auth/ only protocol/. Checked on the source, so it cannot rot.
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
}


def _room_imports(path: Path) -> set[str]:
    """The rooms of simple_a2a that a module imports (relative or absolute)."""
    rel = path.relative_to(SRC).parts
    tree = ast.parse(path.read_text())
    rooms: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel[: len(rel) - node.level])
                target = [*base, *(node.module.split(".") if node.module else [])]
                if not target:  # "from .. import x" at the top: x is a room
                    rooms.update(alias.name for alias in node.names)
                else:
                    rooms.add(target[0])
            elif node.module and node.module.startswith("simple_a2a."):
                rooms.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("simple_a2a."):
                    rooms.add(alias.name.split(".")[1])
    return rooms


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_imports_point_one_way(room: str) -> None:
    folder = SRC / room
    if not folder.exists():
        pytest.skip(f"{room}/ does not exist yet")
    bad = {}
    for path in folder.rglob("*.py"):
        extra = _room_imports(path) - ALLOWED[room]
        if extra:
            bad[str(path.relative_to(SRC))] = sorted(extra)
    assert not bad, f"{room}/ may import only {sorted(ALLOWED[room])}: {bad}"


def test_no_module_is_too_long() -> None:
    """Modules stay readable: about 600 lines at most."""
    long = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 650
    }
    assert not long, long
