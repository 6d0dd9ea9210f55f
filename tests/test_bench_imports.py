"""``bench/imports.py`` (start-up cost of the entry points beside pydantic and the SDK): every
statement runs in a fresh interpreter and the report has a row for each. The timings
themselves are never asserted (speed is measured in benchmarks, not tests)."""

from __future__ import annotations

import subprocess

import pytest
from bench import imports


def test_every_statement_runs_and_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # removed for the children
    times = imports.measure(1)
    assert set(times) == set(imports.STATEMENTS)
    assert all(len(walls) == 1 and walls[0] > 0 for walls in times.values())
    table = imports.report(times)
    for name, code in imports.STATEMENTS.items():
        assert (f"`{code}`" in table) is (name != "empty interpreter")


def test_a_statement_that_fails_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "STATEMENTS", {"empty interpreter": "pass", "x": "import nope"})
    with pytest.raises(subprocess.CalledProcessError):
        imports.measure(1)
