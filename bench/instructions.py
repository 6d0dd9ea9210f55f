"""Instructions per request of a whole server process over real HTTP: each benchmark server
(``bench/serve.py``: uvicorn, its HTTP parser and event loop, and the app) run under
``valgrind --tool=callgrind``, driven by a fixed number of keep-alive requests on loopback.

    python -m bench.instructions [KIND ...]        (default: ceiling sdk ours)

Why: on a shared 2-core machine the paired rounds of ``bench/run`` still swing by ±10-20 %, so a
change of 5 % cannot be seen there; an instruction count is the same from run to run (within
~0.5 %) whatever else the machine does. It counts user-space instructions only: not the kernel's
share (the same ~3 syscalls per request for every server here, ``strace -c``), and not cache
misses, so it is the *work* of each server, not its speed. ``bench/run`` stays the measure of
speed; this one says whether a change removed work, and how much, over the real stack (where
``bench/inprocess.py`` calls the app directly).

Per server and operation: start it under callgrind, wait until it accepts connections, send
``WARMUP`` requests, zero the counters (``callgrind_control -z``), send ``N`` requests over
``CONC`` connections, dump (``callgrind_control -d``), stop it; instructions / ``N``. A server
is ~50x slower under valgrind: the defaults take a few minutes for the three servers.

Settings (environment): ``OPS`` (default ``SendMessage,GetTask``, over JSON-RPC), ``N`` (1000),
``WARMUP`` (1000), ``CONC`` (32), ``BENCH_LOOP`` / ``BENCH_HTTP`` (default ``uvloop`` /
``httptools``, as ``bench/serve.py`` reads them), ``BENCH_BASELINE`` (another checkout: adds
server ``base`` — ``base-sqlite`` for ``ours-sqlite`` — the agent of this checkout's ``bench/``
on that checkout's ``src``, so that only the library differs). The hash seed is fixed and the
lease keeper's timers are off (``NOTIMERS=1``, read by ``bench/serve.py``): under valgrind they
would fire ~50x more often per request than in a real run. ``BENCH_PORT`` (default 8947).
``KEEP`` (a directory): keep each measured dump there as ``NAME-OP.callgrind`` (where the
instructions go: ``callgrind_annotate --inclusive=yes FILE``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
# Another checkout measuring at the same time needs its own port (``BENCH_PORT``): a server that
# cannot bind exits, and the driver would otherwise count against the other checkout's server.
PORT = int(os.environ.get("BENCH_PORT", "8947"))

HEAD = (
    b"POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"a2a-version: 1.0\r\ncontent-length: %d\r\n\r\n"
)


def send_body(i: int) -> bytes:
    parts = [{"text": "hello"}]
    message = {"messageId": f"m{i}-{time.time_ns()}", "role": "ROLE_USER", "parts": parts}
    request = {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(request).encode()


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes
) -> bytes:
    writer.write(HEAD % len(body) + body)
    head = await reader.readuntil(b"\r\n\r\n")
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    if match is None:
        raise SystemExit(f"no content-length in {head!r}")
    return await reader.readexactly(int(match[1]))


async def drive(port: int, op: str, requests: int, conc: int) -> None:
    """``requests`` calls of ``op`` over ``conc`` keep-alive connections (GetTask reads one task
    created first); every answer must be a JSON-RPC result."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    first = json.loads(await _exchange(reader, writer, send_body(-1)))
    writer.close()
    task_id = first["result"]["task"]["id"]

    def body(i: int) -> bytes:
        if op == "GetTask":
            request = {"jsonrpc": "2.0", "id": i, "method": "GetTask", "params": {"id": task_id}}
            return json.dumps(request).encode()
        return send_body(i)

    async def connection(k: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in range(k, requests, conc):
            answer = await _exchange(reader, writer, body(i))
            if b'"result"' not in answer:
                raise SystemExit(f"unexpected answer: {answer[:300]!r}")
        writer.close()

    await asyncio.gather(*(connection(k) for k in range(conc)))


def _wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            # what it said (an unknown kind, a missing module): its last lines
            said = process.stderr.read().decode(errors="replace") if process.stderr else ""
            lines = [line for line in said.splitlines() if not line.startswith("==")]  # valgrind's
            tail = "\n".join(lines[-5:])
            raise SystemExit(f"the server exited ({process.returncode}) before listening:\n{tail}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the server did not listen in time")


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {dump}")


def measure(kind: str, op: str, src: Path, settings: dict[str, int], name: str = "") -> int:
    """Instructions per request of one server (``kind`` as ``bench/serve.py`` names it), with
    the library from ``src``; its dump is kept (``KEEP``) under ``name`` (default ``kind``: the
    baseline ``base`` is kind ``ours`` too, and its dump replaced ours)."""
    with tempfile.TemporaryDirectory(prefix="a2a-callgrind-") as tmp:
        env = {
            **os.environ,
            "PYTHONHASHSEED": "0",
            "NOTIMERS": "1",
            "PYTHONPATH": f"{src}:{HERE}",
            "BENCH_LOOP": os.environ.get("BENCH_LOOP", "uvloop"),
            "BENCH_HTTP": os.environ.get("BENCH_HTTP", "httptools"),
        }
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.%p",
            sys.executable, "-m", "bench.serve", kind, str(PORT),
        ]  # fmt: skip
        server = subprocess.Popen(
            command, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            _wait_listening(PORT, server)
            asyncio.run(drive(PORT, op, settings["warmup"], settings["conc"]))
            control = ["callgrind_control"]
            subprocess.run([*control, "-z", str(server.pid)], check=True, capture_output=True)
            asyncio.run(drive(PORT, op, settings["n"], settings["conc"]))
            subprocess.run([*control, "-d", str(server.pid)], check=True, capture_output=True)
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=120)
            except subprocess.TimeoutExpired:
                server.kill()
        dumps = sorted(Path(tmp).glob("cg.*.*"))  # the -d dump (part 1); the final one has none
        if not dumps:
            raise SystemExit(f"no callgrind dump for {kind}")
        keep = os.environ.get("KEEP")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(dumps[0], Path(keep) / f"{name or kind}-{op}.callgrind")
        return _total(dumps[0]) // settings["n"]


def main(kinds: list[str]) -> None:
    settings = {
        "n": int(os.environ.get("N", "1000")),
        "warmup": int(os.environ.get("WARMUP", "1000")),
        "conc": int(os.environ.get("CONC", "32")),
    }
    ops = os.environ.get("OPS", "SendMessage,GetTask").split(",")
    servers = baseline_servers(kinds, os.environ.get("BENCH_BASELINE"))
    stack = f"{os.environ.get('BENCH_LOOP', 'uvloop')}+{os.environ.get('BENCH_HTTP', 'httptools')}"
    print(f"instructions per request, {stack}, N={settings['n']} CONC={settings['conc']}")
    results: dict[str, dict[str, int]] = {}
    for op in ops:
        for name, kind, src in servers:
            count = measure(kind, op, src, settings, name)
            results.setdefault(op, {})[name] = count
            print(f"  {op:12s} {name:8s} {count:>12,}", flush=True)
    print(report(results))


def baseline_servers(kinds: list[str], baseline: str | None) -> list[tuple[str, str, Path]]:
    """``(name, kind, src)`` of each server to count: the kinds asked, on this checkout's
    ``src``; with a baseline checkout, each of our kinds again on its ``src`` (``ours`` ->
    ``base``, ``ours-sqlite`` -> ``base-sqlite``; ``base`` alone when no kind of ours is asked)."""
    servers = [(k, k, HERE / "src") for k in kinds]
    if baseline:
        src = Path(baseline).resolve() / "src"
        ours = [k for k in kinds if k.startswith("ours")] or ["ours"]
        servers += [(k.replace("ours", "base", 1), k, src) for k in ours]
    return servers


def report(results: dict[str, dict[str, Any]]) -> str:
    """A markdown table: instructions per request, and each server's against ours (the SDK's
    ``7.7x``: it does 7.7 times our work; the ceiling's ``0.11x`` is ``bench/run``'s "ceiling
    CPU / ours" counted in instructions)."""
    lines = ["| operation | server | instructions / request | it / ours |", "|---|---|---:|---:|"]
    for op, counts in results.items():
        ours = counts.get("ours")
        for name, count in counts.items():
            ratio = "" if ours is None or name == "ours" else f"{count / ours:.2f}x"
            lines.append(f"| {op} | {name} | {count:,} | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main(sys.argv[1:] or ["ceiling", "sdk", "ours"])
