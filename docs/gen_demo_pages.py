"""Regenerate docs/demos/: one page per demo, with the demo's real output.

    .venv/bin/python docs/gen_demo_pages.py            # every demo
    .venv/bin/python docs/gen_demo_pages.py 02 05      # some

Each page is the demo's README, its source (included by mkdocs from examples/, so it is always
current) and the output of ``A2A_DEMO_FAST=1 python -m examples.run NN_name``, pasted as it was
printed (fast mode shrinks the sleeps; ids, ports and timings differ on every run).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
OUT = ROOT / "docs" / "demos"


def demos() -> list[str]:
    return sorted(p.name for p in EXAMPLES.iterdir() if (p / "client.py").is_file())


def readme(demo: str) -> tuple[str, str]:
    """(title, body) of the demo's README, the body without its run command."""
    lines = (EXAMPLES / demo / "README.md").read_text(encoding="utf-8").splitlines()
    title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("#") else demo
    body = [line for line in lines[1:] if not line.startswith("    python -m examples.run")]
    return title, "\n".join(body).strip()


def run(demo: str) -> tuple[int, str]:
    env = {**os.environ, "A2A_DEMO_FAST": "1", "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "examples.run", demo],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, (proc.stdout + proc.stderr).rstrip() + "\n"


def page(demo: str, status: int, output: str) -> str:
    title, body = readme(demo)
    sources = sorted(
        p.name for p in (EXAMPLES / demo).iterdir() if p.suffix in (".py", ".html", ".md")
    )
    parts = [
        f"# Demo {title}",
        "",
        body,
        "",
        "## Run it",
        "",
        "```bash",
        f"python -m examples.run {demo}",
        f"A2A_DEMO_FAST=1 python -m examples.run {demo}   # fast mode, as the tests run it",
        "```",
        "",
        "## Output",
        "",
        "Captured by `docs/gen_demo_pages.py` in fast mode"
        + (
            " (the run passed)." if status == 0 else f" (**the run failed: exit status {status}**)."
        ),
        "",
        "```text",
        output.rstrip("\n"),
        "```",
        "",
        "## Source",
        "",
    ]
    for name in ("server.py", "client.py"):
        if name in sources:
            parts += [
                ("???+" if name == "server.py" else "???") + f' example "examples/{demo}/{name}"',
                "",
                "    <!-- not-run: the demo's source, run by examples/run -->",
                "",
                "    ```python",
                f'    --8<-- "examples/{demo}/{name}"',
                "    ```",
                "",
            ]
    others = [n for n in sources if n not in ("server.py", "client.py", "README.md")]
    if others:
        parts += ["Also in the folder: " + ", ".join(f"`{n}`" for n in others) + ".", ""]
    return "\n".join(parts)


def index(names: list[str]) -> str:
    rows = ["| demo | what it shows |", "|---|---|"]
    for demo in names:
        title, body = readme(demo)
        first = " ".join(body.split("\n\n")[0].split())
        rows.append(f"| [{title}]({demo}.md) | {first} |")
    return "\n".join(
        [
            "# Demos",
            "",
            "Eleven runnable scenarios, each a server and a client, started by one runner",
            "that starts the server, waits until it answers, runs the client, stops the",
            "server and exits non-zero if any check failed. `A2A_DEMO_FAST=1` shrinks every",
            "sleep; the test suite runs all eleven that way.",
            "",
            "```bash",
            "python -m examples.run                   # list them",
            "python -m examples.run 01_basic_usage    # one (or: 01, basic_usage)",
            "python -m examples.run all               # all of them",
            "```",
            "",
            *rows,
            "",
        ]
    )


def main(argv: list[str]) -> int:
    chosen = [d for d in demos() if not argv or any(d.startswith(a) for a in argv)]
    OUT.mkdir(parents=True, exist_ok=True)
    failed = []
    for demo in chosen:
        status, output = run(demo)
        (OUT / f"{demo}.md").write_text(page(demo, status, output), encoding="utf-8")
        print(f"{demo}: {'ok' if status == 0 else f'FAILED ({status})'}")
        if status:
            failed.append(demo)
    (OUT / "index.md").write_text(index(demos()), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
