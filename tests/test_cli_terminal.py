"""The ``simple-a2a`` command as a person meets it: in a real terminal, and when things fail.

``list`` runs in a pseudo-terminal (``pty``) of 80, 100 and 160 columns: task ids are never cut
(a copied id must work), the other columns give way, headers never wrap. ``serve`` on a taken
port says so plainly with its own exit code. (issue #18)
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

import simple_a2a
from simple_a2a.server.background import BackgroundServer
from tests.cli_agent import scripted_server

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "simple-a2a"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="script not installed")


def in_terminal(columns: int, *args: str) -> tuple[int, list[str]]:
    """Run the installed script with a pseudo-terminal of ``columns`` x 50 as its stdout and
    stderr; return the exit code and the lines it showed (colours removed)."""
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(
        [str(SCRIPT), *args], cwd=ROOT, stdin=terminal, stdout=terminal, stderr=terminal, env=env
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the program ended and closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    code = proc.wait(timeout=30)
    text = ANSI.sub("", b"".join(chunks).decode())
    return code, [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]


@pytest.fixture(scope="module")
def agent() -> Iterator[tuple[str, list[simple_a2a.Task]]]:
    with BackgroundServer(scripted_server().app) as srv:
        with simple_a2a.client(srv.url) as client:
            tasks = [client.send(f"note number {i} with a rather long text") for i in range(3)]
        yield srv.url, [t for t in tasks if isinstance(t, simple_a2a.Task)]


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_list_in_a_terminal_keeps_ids_whole(
    agent: tuple[str, list[simple_a2a.Task]], columns: int
) -> None:
    url, tasks = agent
    code, lines = in_terminal(columns, "list", url)
    assert code == 0, lines
    assert all(len(line) <= columns for line in lines), lines
    header = next(line for line in lines if line.split()[:1] == ["id"])
    words = header.split()
    assert {"id", "state"} <= set(words), header  # whole words, not "sta" / "te"
    assert all(w in ("id", "context", "state", "updated", "text") for w in words), header
    for task in tasks:
        row = next(line for line in lines if task.id in line.split())
        assert "completed" in row
    if columns >= 100:  # room for the text, which the CLI asks for (includeArtifacts)
        assert "text" in words
        assert any("echo: note number" in line for line in lines), lines
    if columns >= 160:
        assert words == ["id", "context", "state", "updated", "text"]
        assert all(t.context_id in "\n".join(lines) for t in tasks)
    else:
        assert any("not shown: narrow terminal" in line for line in lines), lines


def test_serve_on_a_taken_port_says_so_with_its_own_exit_code() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(SCRIPT), "serve", "tests.cli_agent:echo", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 6  # docs/cli.md, "Exit codes"
    assert done.stdout == ""
    assert done.stderr == f"error: cannot listen on 127.0.0.1:{port}: address already in use\n"


def test_ctrl_c_during_a_stream_says_how_to_follow_the_task() -> None:
    with BackgroundServer(scripted_server().app) as srv:
        proc = subprocess.Popen(
            [str(SCRIPT), "stream", srv.url, "slow"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        first = proc.stdout.readline()  # "task ID working": the task exists
        task_id = first.split()[1]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert "── submitted" in out or "── working" in out  # the summary so far
        with simple_a2a.client(srv.url) as client:
            client.cancel(task_id)
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert f"simple-a2a subscribe {srv.url} {task_id}" in err
    assert err.rstrip().endswith("error: interrupted")
