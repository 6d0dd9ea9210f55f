"""The interop matrix renderer (scripts/interop_matrix.py) on recorded outcomes."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("interop_matrix", ROOT / "scripts/interop_matrix.py")
assert spec is not None and spec.loader is not None
interop_matrix = importlib.util.module_from_spec(spec)
spec.loader.exec_module(interop_matrix)


def record(outcome: str, direction: str = "ours → theirs", **kw: Any) -> dict[str, Any]:
    base = {"peer": "P", "protocol": "0.3", "binding": "JSONRPC", "faults": [], "test": "t"}
    return {**base, "direction": direction, "outcome": outcome, **kw}


def test_cells_count_outcomes_and_name_faults(tmp_path: Path) -> None:
    records = [
        record("passed", faults=["F1"]),
        record("passed"),
        record("skipped", direction="theirs → ours"),
        record("failed", binding="HTTP+JSON"),
        record("passed", binding="HTTP+JSON"),
    ]
    table = interop_matrix.render(records)
    assert "| P | 0.3 | JSONRPC | ✓ 2 passed (F1) | skipped |" in table
    assert "| P | 0.3 | HTTP+JSON | ✗ 1 of 2 failed | — |" in table
    results = tmp_path / "interop.json"
    results.write_text(json.dumps(records))
    page = tmp_path / "page.md"
    page.write_text(f"intro\n{interop_matrix.START}\nold\n{interop_matrix.END}\nend\n")
    assert interop_matrix.main([str(results), "--write", str(page)]) == 1  # a failed cell
    text = page.read_text()
    assert "old" not in text and table in text and text.endswith("end\n")


def test_the_plugin_records_every_worker_s_tests_under_xdist(tmp_path: Path) -> None:
    """With pytest-xdist (scripts/test runs -n auto) the file holds the cells of every worker,
    not only those of the worker that wrote it last."""
    pytest.importorskip("xdist")
    shutil.copy(ROOT / "tests" / "interop" / "matrix.py", tmp_path / "matrix_plugin.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["matrix_plugin"]\n')
    test = (
        "import pytest\n"
        "pytestmark = pytest.mark.interop(peer='P', direction='d', binding='GRPC')\n"
        "def test_one(): pass\n"
        "def test_two(): pass\n"
    )
    for name in ("test_a.py", "test_b.py"):  # one file per worker (--dist loadfile)
        (tmp_path / name).write_text(test)
    out = tmp_path / "out.json"
    xdist = ["-n", "2", "--dist", "loadfile", "--rootdir", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *xdist],
        cwd=tmp_path,
        env={**os.environ, "INTEROP_MATRIX": str(out)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    records = json.loads(out.read_text())
    tests = sorted(r["test"] for r in records)
    assert tests == [f"test_{f}.py::test_{t}" for f in "ab" for t in ("one", "two")], records
    assert {r["outcome"] for r in records} == {"passed"}
