"""A pytest plugin that records the interop matrix from the test run (docs/interop.md).

A test joins the matrix with the ``interop`` marker::

    pytestmark = pytest.mark.interop(peer="Python SDK 0.3.26", direction="ours → theirs")

The binding (``JSONRPC``, ``HTTP+JSON``, ``GRPC``) and the protocol (``1.0``, ``0.3``) come from
the marker's ``binding=``/``protocol=`` or else from the test's parameters (a parameter value,
or an element of a tuple value). ``faults={"HTTP+JSON": "F2"}`` names the documented peer
faults a cell's tests check (``"*"``: every binding; ``"JSONRPC 0.3"``: one binding and
version). At the end of the session the outcomes are written to ``$INTEROP_MATRIX`` (default
``test-artifacts/interop.json``, removed when a run starts); ``scripts/interop_matrix.py``
renders them as the table of docs/interop.md.

Under pytest-xdist each outcome travels with its test report (``user_properties``) to the
controller, which alone writes the file: the workers writing it each wrote over the others'.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
PROTOCOLS = ("1.0", "0.3")
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "test-artifacts" / "interop.json"

_records: list[dict[str, Any]] = []


def _from_params(item: pytest.Item, choices: tuple[str, ...]) -> str | None:
    callspec = getattr(item, "callspec", None)
    for value in callspec.params.values() if callspec else ():
        for candidate in value if isinstance(value, tuple) else (value,):
            if isinstance(candidate, str) and candidate in choices:
                return candidate
    return None


def cell_of(item: pytest.Item) -> dict[str, Any] | None:
    """The matrix cell a test belongs to, or None when it is not an interop test."""
    marker = item.get_closest_marker("interop")
    if marker is None:
        return None
    kw = marker.kwargs
    binding = kw.get("binding") or _from_params(item, BINDINGS) or "?"
    faults = kw.get("faults") or {}
    protocol = kw.get("protocol") or _from_params(item, PROTOCOLS) or "1.0"
    named = ("*", binding, f"{binding} {protocol}")  # every cell, a binding, one binding+version
    return {
        "peer": kw["peer"],
        "direction": kw["direction"],
        "protocol": protocol,
        "binding": binding,
        "faults": sorted({f for key in named for f in faults.get(key, "").split()}),
        "test": item.nodeid,
    }


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "interop(peer, direction, protocol, binding, faults): an interop matrix cell"
    )


#: the name of a report's user property that carries its matrix record
PROPERTY = "interop_matrix"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    cell = cell_of(item)
    if cell is None:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        report.user_properties.append((PROPERTY, {**cell, "outcome": report.outcome}))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Called in the process that runs the test and, under xdist, again in the controller for
    # the report a worker sent; only the controller's records are written (_is_worker).
    _records.extend(value for name, value in report.user_properties if name == PROPERTY)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # set by pytest-xdist in its workers only


def _path() -> Path:
    return Path(os.environ.get("INTEROP_MATRIX") or DEFAULT_PATH)


def pytest_sessionstart(session: pytest.Session) -> None:
    if not _is_worker(session.config):
        _path().unlink(missing_ok=True)  # the file describes one run, never an older one


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _records or _is_worker(session.config):
        return
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_records, indent=1, ensure_ascii=False) + "\n")
