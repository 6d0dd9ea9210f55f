#!/usr/bin/env python3
"""Render the interop matrix recorded by the test run (tests/interop/matrix.py) as Markdown.

    python scripts/interop_matrix.py [RESULTS.json] [--write docs/interop.md]

Prints the table; with ``--write`` it also replaces the table between the
``<!-- interop-matrix:start -->`` and ``<!-- interop-matrix:end -->`` lines of that file.
Exit status 1 if a cell has a failed test.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- interop-matrix:start -->", "<!-- interop-matrix:end -->"
DIRECTIONS = ("ours → theirs", "theirs → ours")


def cell_text(records: list[dict[str, Any]]) -> str:
    if not records:
        return "—"
    counts: dict[str, int] = defaultdict(int)
    for r in records:
        counts[r["outcome"]] += 1
    faults = sorted({f for r in records for f in r["faults"]})
    if counts["failed"]:
        text = f"✗ {counts['failed']} of {len(records)} failed"
    elif counts["passed"]:
        text = f"✓ {counts['passed']} passed"
    else:
        text = "skipped"
    if counts["skipped"] and (counts["passed"] or counts["failed"]):
        text += f", {counts['skipped']} skipped"
    return text + (f" ({', '.join(faults)})" if faults else "")


def render(records: list[dict[str, Any]]) -> str:
    cells: dict[tuple[str, str, str], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in records:
        cells[(r["peer"], r["protocol"], r["binding"])][r["direction"]].append(r)
    lines = [
        "| peer | protocol | binding | " + " | ".join(DIRECTIONS) + " |",
        "|---|---|---|" + "---|" * len(DIRECTIONS),
    ]
    for (peer, protocol, binding), by_dir in sorted(cells.items()):
        row = [peer, protocol, binding, *(cell_text(by_dir.get(d, [])) for d in DIRECTIONS)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    write = None
    if "--write" in argv:
        i = argv.index("--write")
        write = Path(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    source = Path(argv[0]) if argv else ROOT / "test-artifacts" / "interop.json"
    if not source.exists():
        print(f"no interop results at {source} (run the tests first)", file=sys.stderr)
        return 0
    records = json.loads(source.read_text())
    table = render(records)
    print(table, end="")
    if write is not None:
        text = write.read_text()
        head, _, rest = text.partition(START)
        _, _, tail = rest.partition(END)
        write.write_text(f"{head}{START}\n{table}{END}{tail}")
    return 1 if any(r["outcome"] == "failed" for r in records) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
