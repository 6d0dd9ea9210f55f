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

``OPS=SendStreamingMessage`` counts a stream instead (issue #36: CPU per streamed event against
the bare SSE floor, ``sse-floor``): after ``STREAM_WARMUP`` (2) streams, one stream of each
length in ``CHUNKS`` (``10,60``) of ``tokens N INTERVAL_MS`` (``100``: bench/agents.py's agent
emits N small artifact chunks that far apart), each read to its end over its own connection and
checked (well-formed SSE; the task first, N artifact updates, the completed status last), its
count dumped ``SETTLE_MS`` (500) after the last frame. Per chunk = (I60 - I10) / 50: what a
stream costs once (request, task, connection, end) cancels; "whole" = I60 / 60 spreads it over
the chunks. Then ``IDLE_S`` (4) seconds of an idle server, per interval: what lands on a count
that is no chunk's work, which should be ~0. For that the lease keeper is off and the work
queue's idle poll waits an hour (``NOTIMERS``), and uvicorn's main loop (a tick every 0.1 s, so
one beside every chunk) ticks every ``TICK_S`` seconds (default 3600; the server is killed once
its counts are dumped, as it would see SIGINT only at its next tick).
"""

from __future__ import annotations

import asyncio
import contextlib
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
from collections.abc import Iterator
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


@contextlib.contextmanager
def _under_callgrind(kind: str, src: Path, tmp: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``bench.serve KIND`` under callgrind (the library from ``src``, its dumps in ``tmp``),
    listening; stopped (and its dumps complete) at the end."""
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "NOTIMERS": "1",
        # uvicorn's tick once an hour: none lands in a count (bench/serve.py ``slow_ticks``)
        "TICK_S": os.environ.get("TICK_S", "3600"),
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
        yield server
    finally:
        server.send_signal(signal.SIGINT)
        try:
            # uvicorn sees the signal at its next tick (an hour away with the default TICK_S);
            # every count was dumped already (``callgrind_control -d`` returns once written)
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _control(option: str, server: subprocess.Popen[bytes]) -> None:
    subprocess.run(["callgrind_control", option, str(server.pid)], check=True, capture_output=True)


def _dumps(tmp: Path, kind: str, count: int) -> list[Path]:
    """The ``-d`` dumps in order (``cg.PID.1``, ``.2``...; the final one has no part number)."""
    dumps = sorted(tmp.glob("cg.*.*"), key=lambda p: int(p.suffix[1:]))
    if len(dumps) < count:
        raise SystemExit(f"{len(dumps)} of {count} callgrind dumps for {kind}")
    return dumps


def _keep(dump: Path, name: str) -> None:
    keep = os.environ.get("KEEP")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(dump, Path(keep) / f"{name}.callgrind")


def measure(kind: str, op: str, src: Path, settings: dict[str, int], name: str = "") -> int:
    """Instructions per request of one server (``kind`` as ``bench/serve.py`` names it), with
    the library from ``src``; its dump is kept (``KEEP``) under ``name`` (default ``kind``: the
    baseline ``base`` is kind ``ours`` too, and its dump replaced ours)."""
    with tempfile.TemporaryDirectory(prefix="a2a-callgrind-") as tmp:
        with _under_callgrind(kind, src, Path(tmp)) as server:
            asyncio.run(drive(PORT, op, settings["warmup"], settings["conc"]))
            _control("-z", server)
            asyncio.run(drive(PORT, op, settings["n"], settings["conc"]))
            _control("-d", server)
        dump = _dumps(Path(tmp), kind, 1)[0]
        _keep(dump, f"{name or kind}-{op}")
        return _total(dump) // settings["n"]


# -- a stream (issue #36: CPU per streamed event against the bare SSE floor) -------------------
STREAM_OP = "SendStreamingMessage"
SSE_FIELDS = {"data", "id", "event", "retry"}
KINDS = {"task", "message", "statusUpdate", "artifactUpdate"}  # a StreamResponse holds one


def stream_body(chunks: int, interval_ms: int) -> bytes:
    """SendStreamingMessage ``tokens N MS``: ``bench/agents.py``'s agent (ours, the SDK) and the
    ``sse-floor`` answer it with the working task, N artifact chunks MS apart, the completed
    status."""
    parts = [{"text": f"tokens {chunks} {interval_ms}"}]
    message = {"messageId": f"s{chunks}-{time.time_ns()}", "role": "ROLE_USER", "parts": parts}
    request = {"jsonrpc": "2.0", "id": 7, "method": STREAM_OP, "params": {"message": message}}
    return json.dumps(request).encode()


def sse_events(body: bytes) -> list[str]:
    """The data of each event of a whole ``text/event-stream`` body (WHATWG HTML §9.2.6: lines
    end in CRLF, LF or CR; a blank line ends an event; ``:`` starts a comment). Well-formed or
    SystemExit: a field other than data/id/event/retry, an event without data, a body that does
    not end where an event ends."""
    text = body.decode()
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-2:] != ["", ""]:
        raise SystemExit(f"the stream does not end with a whole event: {text[-200:]!r}")
    events: list[str] = []
    data: list[str] = []
    fields = 0
    for line in lines[:-1]:
        if not line:
            if fields and not data:
                raise SystemExit(f"an event without data after {len(events)} events")
            if data:
                events.append("\n".join(data))
            data, fields = [], 0
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if not colon or name not in SSE_FIELDS:
            raise SystemExit(f"not an SSE field line: {line[:200]!r}")
        fields += 1
        if name == "data":
            data.append(value.removeprefix(" "))
    return events


def check_stream(events: list[str], chunks: int) -> None:
    """The A2A frames of a ``tokens N`` stream: each a JSON-RPC result of id 7 holding one
    StreamResponse kind, the task first, N artifact updates, the completed status last."""
    kinds = []
    for data in events:
        frame = json.loads(data)
        result = frame.get("result")
        if frame.get("jsonrpc") != "2.0" or frame.get("id") != 7 or not isinstance(result, dict):
            raise SystemExit(f"not a JSON-RPC result of the request: {data[:300]!r}")
        kind = set(result) & KINDS
        if len(kind) != 1 or len(result) != 1:
            raise SystemExit(f"not one StreamResponse: {data[:300]!r}")
        kinds.append(kind.pop())
    last = json.loads(events[-1])["result"] if events else {}
    state = last.get("statusUpdate", {}).get("status", {}).get("state")
    if not kinds or kinds[0] != "task" or state != "TASK_STATE_COMPLETED":
        raise SystemExit(f"not task first and the completed status last: {kinds} {state}")
    if kinds.count("artifactUpdate") != chunks:
        raise SystemExit(f"{kinds.count('artifactUpdate')} artifact chunks, not {chunks}")


async def drive_stream(port: int, chunks: int, interval_ms: int) -> int:
    """One stream of ``chunks`` chunks, read to its end (the chunked body's last chunk) and
    checked; the number of its events."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    body = stream_body(chunks, interval_ms)
    head = HEAD.replace(b"a2a-version", b"accept: text/event-stream\r\na2a-version")
    writer.write(head % len(body) + body)
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lower = head.lower()
        if not head.startswith(b"HTTP/1.1 200 ") or b"content-type: text/event-stream" not in lower:
            raise SystemExit(f"not an event stream: {head!r}")
        if b"transfer-encoding: chunked" not in lower:
            raise SystemExit(f"not a chunked body: {head!r}")
        received = bytearray()
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            received += (await reader.readexactly(size + 2))[:-2]
        await reader.readexactly(2)  # the CRLF after the last chunk
    finally:
        writer.close()
    events = sse_events(bytes(received))
    check_stream(events, chunks)
    return len(events)


def per_chunk(counts: dict[int, int]) -> tuple[int, int]:
    """From the instructions of two streams of LO and HI chunks: one chunk's (the difference
    over HI - LO: what a stream costs once, its request, task and connection, cancels) and the
    whole longer stream's per chunk (that once-per-stream cost spread over HI chunks)."""
    (lo, low), (hi, high) = sorted(counts.items())
    return (high - low) // (hi - lo), high // hi


def measure_stream(
    kind: str, src: Path, settings: dict[str, int], name: str = ""
) -> dict[str, int]:
    """Instructions of one stream of ``lo`` and one of ``hi`` chunks (each counted alone, after
    ``stream_warmup`` streams), then of ``idle_s`` seconds of nothing: ``chunk`` and ``whole``
    (:func:`per_chunk`), ``idle`` (an idle server's instructions over one interval) and each
    stream's count (``i10``, ``i60``)."""
    interval = settings["interval_ms"]
    lengths = [settings["lo"], settings["hi"]]
    with tempfile.TemporaryDirectory(prefix="a2a-callgrind-") as tmp:
        with _under_callgrind(kind, src, Path(tmp)) as server:
            for _ in range(settings["stream_warmup"]):
                asyncio.run(drive_stream(PORT, lengths[0], interval))
            for n in lengths:
                _control("-z", server)
                asyncio.run(drive_stream(PORT, n, interval))
                # what follows the last frame (closing the connection, ending the task's
                # execution) lands in every count alike, so it cancels in the difference
                time.sleep(settings["settle_ms"] / 1000)
                _control("-d", server)
            _control("-z", server)
            time.sleep(settings["idle_s"])
            _control("-d", server)
        dumps = _dumps(Path(tmp), kind, 3)
        for label, dump in zip([*map(str, lengths), "idle"], dumps, strict=False):
            _keep(dump, f"{name or kind}-{STREAM_OP}-{label}")
        counts = {n: _total(dump) for n, dump in zip(lengths, dumps, strict=False)}
        chunk, whole = per_chunk(counts)
        idle = _total(dumps[2]) * interval // (settings["idle_s"] * 1000)
        return {
            "chunk": chunk,
            "whole": whole,
            "idle": idle,
            **{f"i{n}": c for n, c in counts.items()},
        }


def stream_report(results: dict[str, dict[str, int]], hi: int) -> str:
    """A markdown table per chunk: one chunk's instructions, the whole stream's per chunk, an
    idle server's over one interval, and each server's per chunk against ours and the floor
    (issue #36's goal: ours <= 2x the floor)."""
    lines = [
        f"| operation | server | instructions per chunk | whole stream per chunk (I{hi}/{hi}) "
        "| idle per interval | it / ours | it / sse-floor |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    ours, floor = results.get("ours", {}).get("chunk"), results.get("sse-floor", {}).get("chunk")
    for name, r in results.items():
        vs_ours = "" if not ours or name == "ours" else f"{r['chunk'] / ours:.2f}x"
        vs_floor = "" if not floor or name == "sse-floor" else f"{r['chunk'] / floor:.2f}x"
        lines.append(
            f"| {STREAM_OP} | {name} | {r['chunk']:,} | {r['whole']:,} | {r['idle']:,} "
            f"| {vs_ours} | {vs_floor} |"
        )
    return "\n".join(lines)


def main(kinds: list[str]) -> None:
    settings = {
        "n": int(os.environ.get("N", "1000")),
        "warmup": int(os.environ.get("WARMUP", "1000")),
        "conc": int(os.environ.get("CONC", "32")),
    }
    lo, hi = sorted(int(c) for c in os.environ.get("CHUNKS", "10,60").split(","))
    streaming = {
        "lo": lo,
        "hi": hi,
        "interval_ms": int(os.environ.get("INTERVAL_MS", "100")),
        "stream_warmup": int(os.environ.get("STREAM_WARMUP", "2")),
        "settle_ms": int(os.environ.get("SETTLE_MS", "500")),
        "idle_s": int(os.environ.get("IDLE_S", "4")),
    }
    ops = os.environ.get("OPS", "SendMessage,GetTask").split(",")
    servers = baseline_servers(kinds, os.environ.get("BENCH_BASELINE"))
    stack = f"{os.environ.get('BENCH_LOOP', 'uvloop')}+{os.environ.get('BENCH_HTTP', 'httptools')}"
    print(f"instructions per request, {stack}, N={settings['n']} CONC={settings['conc']}")
    results: dict[str, dict[str, int]] = {}
    streams: dict[str, dict[str, int]] = {}
    for op in ops:
        for name, kind, src in servers:
            if op == STREAM_OP:
                streams[name] = measure_stream(kind, src, streaming, name)
                print(f"  {op} {name:8s} {streams[name]}", flush=True)
                continue
            count = measure(kind, op, src, settings, name)
            results.setdefault(op, {})[name] = count
            print(f"  {op:12s} {name:8s} {count:>12,}", flush=True)
    if results:
        print(report(results))
    if streams:
        print(f"\nper chunk: streams of {lo} and {hi} chunks {streaming['interval_ms']} ms apart")
        print(stream_report(streams, hi))


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
