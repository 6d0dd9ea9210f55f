"""The interop matrix renderer (scripts/interop_matrix.py) on recorded outcomes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

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
