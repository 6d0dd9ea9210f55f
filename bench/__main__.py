"""Run every benchmark scenario and write ``bench/results/latest.{md,json}``.

One invocation starts each server in its own process (same uvicorn settings), drives load from
separate processes (``wrk`` + ``load.lua``; ``sse_client.py`` for the streaming scenarios), and
interleaves the runs of the servers under test so machine noise hits them alike. Reports medians
and the ratios ours/SDK and ours/ceiling, measured in the same invocation.

Every load scenario runs in interleaved rounds (``BENCH_RUNS``, at least 5): in each round every
server under test, and the raw ASGI ceiling, gets one ``wrk`` run; the report gives the median
of the per-round paired ratios and their range, and the server's CPU time per request
(utime + stime of its process over the measured window, from ``/proc/PID/stat``).

``BENCH_STACKS=asyncio+h11,uvloop+httptools`` runs the request/response scenarios of the small
store (the ceiling, GetTask, ListTasks, SendMessage) on each server stack (event loop + HTTP
implementation) in the same rounds: one ceiling, SDK and ours per stack, one table per stack,
results named ``"<stack>: ..."`` after the first stack's (``bench/stacks.py``); streams, fan-out,
memory, the big store and SQLite run on the first stack only.

Environment: ``BENCH_QUICK=1`` (5 rounds of 1 s per scenario), ``BENCH_RUNS``, ``BENCH_DURATION``,
``BENCH_ONLY`` (comma-separated scenario-name prefixes), ``BENCH_STACKS`` (default: the one stack
``BENCH_LOOP`` + ``BENCH_HTTP``, see ``serve.py``), ``BENCH_TAG`` (a label stored in the JSON).

``BENCH_BASELINE=/path/to/another/checkout`` adds that checkout's agent (its own ``bench.serve``
and ``src``; ``git worktree add /tmp/base <rev>``) as server ``base`` to the rounds of group 1
and of the SQLite group (group 3):
the report then has a table of ours against it, paired per round — the before/after check of a
change ("no regression"), immune to the drift between two separate runs.
``BENCH_BASELINE=floor`` runs this checkout's floor agent as ``base`` instead (group 1 only):
how far ours is from the least work any design on our models could do (``bench/agents.py``).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.stacks import Stack, from_environment, spread, versus

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
PY = sys.executable

QUICK = os.environ.get("BENCH_QUICK") == "1"
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
DURATION = int(os.environ.get("BENCH_DURATION", "1" if QUICK else "4"))
#: tasks created through SendMessage for the memory-per-task scenario
FILL = int(os.environ.get("BENCH_FILL", "5000" if QUICK else "20000"))
CLK_TCK = os.sysconf("SC_CLK_TCK")
ONLY = [p for p in os.environ.get("BENCH_ONLY", "").split(",") if p]
BIG = int(os.environ.get("BENCH_BIG", "100000"))
SMALL = 100  # tasks stored in the "empty" servers so GetTask/ListTasks have something to find
STREAM_CHUNKS = 1000
STREAM_REPEAT = 3 if QUICK else 5
FANOUT_SUBSCRIBERS = int(os.environ.get("BENCH_SUBSCRIBERS", "1000"))
FANOUT_EVENTS = 5 if QUICK else 10
FANOUT_INTERVAL_MS = 200
STACKS = from_environment()
#: another checkout whose agent runs as server "base" in group 1's rounds (see above); the word
#: ``floor`` instead: this checkout's floor agent (``bench/agents.py``), group 1 only
_BASELINE = os.environ.get("BENCH_BASELINE")
FLOOR = _BASELINE == "floor"
BASELINE = ROOT if FLOOR else Path(_BASELINE).resolve() if _BASELINE else None
BASE_KIND = "floor" if FLOOR else "ours"

TASK_ID = "task-50"

MESSAGE = '{"messageId":"m-{ID}","role":"ROLE_USER","parts":[{"text":"hi"}]}'
SEND_RPC = '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":' + MESSAGE + "}}"
SEND_REST = '{"message":' + MESSAGE + "}"
GET_RPC = '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' + TASK_ID + '"}}'
LIST_RPC = '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":50}}'


def log(*args: Any) -> None:
    print(*args, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (``/proc/PID/stat`` fields 14 and 15)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


@dataclass
class Server:
    name: str  #: label in the results
    kind: str  #: what bench.serve builds
    tasks: int = 0
    stack: Stack = STACKS[0]
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    root: Path = ROOT  #: the checkout whose bench.serve and src run (BENCH_BASELINE's for base)

    def start(self) -> None:
        self.port = free_port()
        info = Path(tempfile.mkstemp(prefix="a2a-bench-info-")[1])
        env = {**os.environ, "BENCH_TASKS": str(self.tasks), "BENCH_INFO": str(info)}
        env.update(self.stack.env())
        env["PYTHONPATH"] = f"{self.root}{os.pathsep}{self.root / 'src'}"
        self.proc = subprocess.Popen(
            [PY, "-m", "bench.serve", self.kind, str(self.port)], cwd=self.root, env=env
        )
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError(f"{self.name} did not start")
        self.info = json.loads(info.read_text() or "{}")
        info.unlink()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def label(self) -> str:
        return f"{self.name} [{self.stack}]" if len(STACKS) > 1 else self.name

    @property
    def rss_kb(self) -> int:
        assert self.proc is not None
        return rss_kb(self.proc.pid)

    @property
    def cpu_s(self) -> float:
        assert self.proc is not None
        return cpu_seconds(self.proc.pid)

    def request(self, method: str, path: str, body: str | None) -> tuple[int, Any]:
        data = body.replace("{ID}", f"check-{time.time_ns()}").encode() if body else None
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=data, method=method
        )
        req.add_header("A2A-Version", "1.0")
        if data:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as err:
            return err.code, None


@dataclass
class Shape:
    """One request shape: how to ask, and how to tell a right answer."""

    method: str
    path: str
    body: str | None
    check: Any  #: callable(status, json) -> str | None (None when right)


def _task_of(obj: Any) -> Any:
    return obj.get("task", obj) if isinstance(obj, dict) else None


def check_send_rpc(status: int, obj: Any) -> str | None:
    task = _task_of((obj or {}).get("result"))
    if status != 200 or not task or task.get("status", {}).get("state") != "TASK_STATE_COMPLETED":
        return f"unexpected answer {status} {str(obj)[:300]}"
    return None


def check_send_rest(status: int, obj: Any) -> str | None:
    task = _task_of(obj)
    if status != 200 or not task or task.get("status", {}).get("state") != "TASK_STATE_COMPLETED":
        return f"unexpected answer {status} {str(obj)[:300]}"
    return None


def check_get(status: int, obj: Any, rest: bool = False) -> str | None:
    task = obj if rest else (obj or {}).get("result")
    if status != 200 or not task or task.get("id") != TASK_ID:
        return f"unexpected answer {status} {str(obj)[:300]}"
    return None


def check_list(status: int, obj: Any) -> str | None:
    result = (obj or {}).get("result") or {}
    if status != 200 or len(result.get("tasks", [])) != 50:
        return f"unexpected answer {status} {str(obj)[:300]}"
    return None


SHAPES = {
    "send-rpc": Shape("POST", "/", SEND_RPC, check_send_rpc),
    "send-rest": Shape("POST", "/message:send", SEND_REST, check_send_rest),
    "get-rpc": Shape("POST", "/", GET_RPC, lambda s, o: check_get(s, o)),
    "get-rest": Shape("GET", f"/tasks/{TASK_ID}", None, lambda s, o: check_get(s, o, True)),
    "list-rpc": Shape("POST", "/", LIST_RPC, check_list),
    "ceiling": Shape("POST", "/", SEND_RPC, lambda s, o: None if s == 200 else f"status {s}"),
}


def wrk(server: Server, shape: Shape, connections: int, duration: int) -> dict[str, Any]:
    env = {**os.environ, "BENCH_METHOD": shape.method, "BENCH_PATH": shape.path}
    if shape.body is not None:
        env["BENCH_BODY"] = shape.body
    else:
        env.pop("BENCH_BODY", None)
    cmd = [
        "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--timeout", "10s",
        "-s", str(BENCH / "load.lua"), f"http://127.0.0.1:{server.port}",
    ]  # fmt: skip
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("BENCH_JSON "))
    raw = json.loads(line[len("BENCH_JSON ") :])
    errors = sum(raw["errors"].values())
    return {
        "rps": raw["requests"] / (raw["duration_us"] / 1e6),
        "p50_ms": raw["p50_us"] / 1000,
        "p99_ms": raw["p99_us"] / 1000,
        "requests": raw["requests"],
        "errors": errors,
    }


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("rps", "p50_ms", "p99_ms", "cpu_us_per_request")
    out: dict[str, Any] = {k: statistics.median(r[k] for r in runs) for k in keys}
    out["errors"] = sum(r["errors"] for r in runs)
    out["runs"] = runs
    return out


class Bench:
    def __init__(self) -> None:
        self.results: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []

    def wanted(self, name: str) -> bool:
        return not ONLY or any(name.startswith(p) for p in ONLY)

    def wants_group(self, prefix: str) -> bool:
        """A group whose scenarios all start with ``prefix`` has one that ``BENCH_ONLY`` picks
        (``BENCH_ONLY=sqlite`` or ``BENCH_ONLY="sqlite: SendMessage rpc c=32"``)."""
        return not ONLY or any(p.startswith(prefix) or prefix.startswith(p) for p in ONLY)

    def load(
        self,
        name: str,
        shape_name: str,
        servers: list[Server],
        connections: int,
        ceilings: list[Server] | None = None,
    ) -> None:
        """Interleaved rounds of one request shape against several servers (and the ceilings).

        Each round runs ``wrk`` once per server, every stack's servers in the same round; ratios
        are paired per round (ours/sdk and ours/ceiling of the same stack and round; each stack
        against the first), so slow drift of a shared machine cancels out. One result per stack:
        ``name`` on the first stack (as in a run of one stack), ``"<stack>: name"`` on the others;
        ``BENCH_ONLY`` may match either.
        """

        def key(stack: Stack) -> str:
            return name if stack == STACKS[0] else f"{stack}: {name}"

        servers = [s for s in servers if self.wanted(name) or self.wanted(key(s.stack))]
        ceilings = [s for s in ceilings or [] if self.wanted(name) or self.wanted(key(s.stack))]
        if not servers and not ceilings:
            return
        shape = SHAPES[shape_name]
        ready: list[tuple[Server, Shape]] = []
        for server in servers:
            status, obj = server.request(shape.method, shape.path, shape.body)
            problem = shape.check(status, obj)
            if problem:
                self.notes.append(f"{name}: {server.label} skipped ({problem[:160]})")
                log(f"  {name}: {server.label} skipped: {problem[:300]}")
                continue
            ready.append((server, shape))
        ready += [(ceiling, SHAPES["ceiling"]) for ceiling in ceilings]
        runs: dict[str, list[dict[str, Any]]] = {s.label: [] for s, _ in ready}
        growth: dict[str, list[int]] = {s.label: [0, 0] for s, _ in ready}
        for server, sh in ready:  # warm-up, not measured
            wrk(server, sh, connections, 1)
        for _ in range(RUNS):
            for server, sh in ready:
                before, cpu_before = server.rss_kb, server.cpu_s
                run = wrk(server, sh, connections, DURATION)
                cpu = server.cpu_s - cpu_before
                run["cpu_us_per_request"] = cpu * 1e6 / run["requests"] if run["requests"] else 0
                growth[server.label][0] += server.rss_kb - before
                growth[server.label][1] += run["requests"]
                runs[server.label].append(run)
                log(
                    f"  {name:<22} {server.label:<30} {run['rps']:9.0f} req/s  "
                    f"p50 {run['p50_ms']:7.2f} ms  p99 {run['p99_ms']:7.2f} ms  "
                    f"cpu {run['cpu_us_per_request']:6.0f} us/req  err {run['errors']}"
                )
        by_stack: dict[Stack, dict[str, list[dict[str, Any]]]] = {}
        for server, _ in ready:
            by_stack.setdefault(server.stack, {})[server.name] = runs[server.label]
        base = next(iter(by_stack), None)  # the first stack (servers are passed in its order)
        for stack, mine in by_stack.items():
            entry = self.results.setdefault(
                key(stack),
                {"kind": "load", "connections": connections, "scenario": name, "stack": stack.name},
            )
            for server, _ in ready:
                if server.stack != stack:
                    continue
                entry[server.name] = median_of(runs[server.label])
                kb, requests = growth[server.label]
                if shape_name.startswith("send") and requests and server.kind != "ceiling":
                    entry[server.name]["rss_growth_bytes_per_request"] = kb * 1024 / requests
            if "ours" in mine:
                entry["paired"] = paired_ratios(mine)
            if base is not None and stack != base:
                entry["vs_stack"] = {"stack": base.name, **versus(mine, by_stack[base])}

    def memory(self, servers: list[Server]) -> None:
        """Memory per task created through the protocol: RSS around FILL blocking SendMessages."""
        if not self.wanted("memory"):
            return
        entry: dict[str, Any] = {"kind": "memory", "tasks": FILL}
        for server in servers:
            client("fill", server, 200, 4)  # warm-up: imports, caches, first allocations
            time.sleep(0.5)
            before = server.rss_kb
            result = client("fill", server, FILL, 8)
            time.sleep(1.0)
            after = server.rss_kb
            entry[server.name] = {
                "bytes_per_task": (after - before) * 1024 / FILL,
                "failures": result["failures"],
            }
            log(f"  memory {server.name}: {entry[server.name]}")
        self.results["memory per task created by SendMessage"] = entry

    def stream(self, servers: list[Server]) -> None:
        if not self.wanted("stream"):
            return
        entry: dict[str, Any] = {"kind": "stream", "chunks": STREAM_CHUNKS}
        for server in servers:
            entry[server.name] = client("stream", server, STREAM_CHUNKS, STREAM_REPEAT)
            log(f"  stream {server.name}: {entry[server.name]}")
        self.results["stream-1000-chunks"] = entry

    def fanout(self, servers: list[Server]) -> None:
        if not self.wanted("fanout"):
            return
        entry: dict[str, Any] = {"kind": "fanout", "subscribers": FANOUT_SUBSCRIBERS}
        for server in servers:
            try:
                entry[server.name] = client(
                    "fanout", server, FANOUT_SUBSCRIBERS, FANOUT_EVENTS, FANOUT_INTERVAL_MS
                )
            except Exception as exc:
                self.notes.append(f"fanout: {server.name} failed ({exc})")
                continue
            log(f"  fanout {server.name}: {entry[server.name]}")
        self.results[f"fanout-{FANOUT_SUBSCRIBERS}-subscribers"] = entry


def paired_ratios(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per-round ratios of ours to the others: median and range over the rounds."""
    out: dict[str, Any] = {}
    ours = runs["ours"]
    for other, theirs in runs.items():
        if other == "ours":
            continue
        rates = [o["rps"] / x["rps"] for o, x in zip(ours, theirs, strict=True) if x["rps"]]
        if rates:
            out[f"rps_vs_{other}"] = spread(rates)
        # their CPU per request / ours: 1.0 means "costs no more than they do"
        cpu = [
            x["cpu_us_per_request"] / o["cpu_us_per_request"]
            for o, x in zip(ours, theirs, strict=True)
            if o["cpu_us_per_request"] and x["cpu_us_per_request"]
        ]
        if cpu:
            out[f"cpu_vs_{other}"] = spread(cpu)
    tails = [r["p99_ms"] / r["p50_ms"] for r in ours if r["p50_ms"]]
    if tails:
        out["p99_over_p50"] = spread(tails)
    return out


def client(mode: str, server: Server, *args: int) -> dict[str, Any]:
    cmd = [PY, "-m", "bench.sse_client", mode, str(server.port), *map(str, args)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "failed")
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("BENCH_JSON "))
    result: dict[str, Any] = json.loads(line[len("BENCH_JSON ") :])
    return result


def group(servers: list[Server]) -> Any:
    class _Group:
        def __enter__(self) -> list[Server]:
            for s in servers:
                log(f"starting {s.label} ({s.kind}, {s.tasks} tasks)")
                s.start()
            return servers

        def __exit__(self, *exc: Any) -> None:
            for s in servers:
                s.stop()

    return _Group()


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import uvicorn

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "uvicorn": uvicorn.__version__,
        "loop": STACKS[0].loop,  # of the first stack (the only one unless BENCH_STACKS lists more)
        "http": STACKS[0].http,
        "stacks": [stack.name for stack in STACKS],
        "wrk": subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0],
        "loadavg_at_end": os.getloadavg(),
    }


def _baseline_label() -> str | None:
    """BENCH_BASELINE as ``path (commit)``, for the report."""
    if BASELINE is None:
        return None
    if FLOOR:
        return "floor (bench/agents.py floor_app: the least work on our models)"
    rev = subprocess.run(
        ["git", "-C", str(BASELINE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return f"{BASELINE} ({rev or 'not a git checkout'})"


def main() -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: run bash bench/run (it installs it)")
    started = time.monotonic()
    b = Bench()

    # Group 1: an (almost) empty store, a ceiling, the SDK and ours per stack (BENCH_STACKS).
    # Reads and streams first: sends add tasks. Streams and fan-out on the first stack only.
    ceiling = [Server("ceiling", "ceiling", stack=stack) for stack in STACKS]
    pairs = [Server(name, name, SMALL, stack) for stack in STACKS for name in ("sdk", "ours")]
    sdk, ours = pairs[0], pairs[1]  # the first stack's
    if BASELINE is not None:
        pairs += [Server("base", BASE_KIND, SMALL, stack, root=BASELINE) for stack in STACKS]
    with group([*ceiling, *pairs]):
        b.load("ceiling c=1", "ceiling", ceiling, 1)
        b.load("ceiling c=32", "ceiling", ceiling, 32)
        b.load("GetTask rpc c=32", "get-rpc", pairs, 32, ceiling)
        b.load("GetTask rest c=32", "get-rest", pairs, 32, ceiling)
        b.load("ListTasks rpc c=1", "list-rpc", pairs, 1)
        b.stream([sdk, ours])
        b.fanout([sdk, ours])
        b.load("SendMessage rpc c=1", "send-rpc", pairs, 1, ceiling)
        b.load("SendMessage rpc c=32", "send-rpc", pairs, 32, ceiling)
        b.load("SendMessage rest c=1", "send-rest", pairs, 1, ceiling)
        b.load("SendMessage rest c=32", "send-rest", pairs, 32, ceiling)

    # Group 1b: memory per task created through the protocol, on fresh servers.
    if b.wants_group("memory"):
        sdk_mem = Server("sdk", "sdk", 0)
        ours_mem = Server("ours", "ours", 0)
        with group([sdk_mem, ours_mem]):
            b.memory([sdk_mem, ours_mem])

    # Group 2: BIG tasks stored through the storage API before serving (the store's size, not
    # its memory per task: that is measured through the protocol in group 1b).
    if b.wants_group("big"):
        sdk_big = Server("sdk", "sdk", BIG)
        ours_big = Server("ours", "ours", BIG)
        with group([sdk_big, ours_big]):
            k = f"{BIG // 1000}k"
            b.load(f"big: GetTask rpc c=32 ({k} tasks)", "get-rpc", [sdk_big, ours_big], 32)
            # c=1: the SDK sorts every stored task per call; more would only queue up.
            b.load(f"big: ListTasks rpc c=1 ({k} tasks)", "list-rpc", [sdk_big, ours_big], 1)
            b.load(f"big: SendMessage rpc c=32 ({k} tasks)", "send-rpc", [sdk_big, ours_big], 32)

    # Group 3: SQLite storage (ours only; the SDK's SQL stores need SQLAlchemy).
    # "ours" is SQLite here; its rounds interleave our memory store ("memory") and the SDK's
    # in-memory store, so both ratios are paired per round.
    if b.wants_group("sqlite"):
        ours_sql = Server("ours", "ours-sqlite", SMALL)
        memory = Server("memory", "ours", SMALL)
        sdk_mem = Server("sdk", "sdk", SMALL)
        trio = [sdk_mem, memory, ours_sql]
        if BASELINE is not None and not FLOOR:  # the other checkout on SQLite too
            trio.append(Server("base", "ours-sqlite", SMALL, root=BASELINE))
        try:
            with group(trio):
                b.load("sqlite: GetTask rpc c=32", "get-rpc", trio, 32)
                b.load("sqlite: SendMessage rpc c=1", "send-rpc", trio, 1)
                b.load("sqlite: SendMessage rpc c=32", "send-rpc", trio, 32)
        except Exception as exc:
            b.notes.append(f"sqlite: skipped ({exc})")

    report = {
        "tag": os.environ.get("BENCH_TAG", ""),
        "baseline": _baseline_label(),
        "quick": QUICK,
        "runs": RUNS,
        "duration_s": DURATION,
        "machine": machine(),
        "elapsed_s": round(time.monotonic() - started, 1),
        "results": b.results,
        "notes": b.notes,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(report, indent=2))
    from bench.report import markdown

    md = markdown(report)
    (RESULTS / "latest.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
