"""What a user installs works: ``python -m build`` makes a wheel and an sdist, each installs in
a fresh virtual environment, and the README's hello agent and client run from it (issue #18).

The fresh environments get the package from the built file only (``--no-deps --no-index``); its
dependencies come from this test run's own site-packages through a ``.pth`` line (a path only:
the ``.pth`` files there, such as the editable install of this checkout, are not processed).
That keeps the test offline and a few seconds long; that the dependencies install from PyPI is
what ``pip install -e .[dev]`` in scripts/bootstrap checks every run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import httpx
import pytest

from simple_a2a.server.background import free_port

ROOT = Path(__file__).resolve().parents[1]
#: what the installed copy runs with: no PYTHONPATH, which could point at this checkout's src/
#: (a developer's shell, a runner) and make it import that instead
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def readme_block(heading: str) -> str:
    """The first ```python block under ``## heading`` in the README."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, heading
    return match.group(1)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build")
    pytest.importorskip("hatchling")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def fresh_env(where: Path) -> Path:
    """A new virtual environment whose dependencies are this run's (see the module doc)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        env=CLEAN_ENV,
    ).stdout.strip()
    (Path(purelib) / "_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_built_package_installs_and_runs_hello_world(dist: Path, tmp_path: Path, kind: str) -> None:
    (built,) = dist.glob("*.whl" if kind == "wheel" else "*.tar.gz")
    python = fresh_env(tmp_path / "env")
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    install += ["--no-deps", "--no-index", "--no-build-isolation", str(built)]
    done = subprocess.run(install, capture_output=True, text=True, timeout=300, env=CLEAN_ENV)
    assert done.returncode == 0, done.stdout + done.stderr

    where = subprocess.run(
        [str(python), "-c", "import simple_a2a; print(simple_a2a.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=CLEAN_ENV,
    )
    assert str(tmp_path / "env") in where.stdout, where  # the installed copy, not this checkout

    port = free_port()
    hello = tmp_path / "hello.py"
    hello.write_text(readme_block("Hello, agent").replace("port=9292", f"port={port}"))
    agent = subprocess.Popen(
        [str(python), str(hello)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=CLEAN_ENV,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            assert agent.poll() is None, agent.communicate()
            try:
                httpx.get(f"{url}/.well-known/agent-card.json").raise_for_status()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "the hello agent did not start"
                time.sleep(0.1)
        client = readme_block("Hello, client").replace("http://localhost:9292", url)
        said = subprocess.run(
            [str(python), "-c", client],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
            env=CLEAN_ENV,
        )
        assert said.stdout.strip() == "You said: hello", said.stderr
        cli = subprocess.run(
            [str(tmp_path / "env" / "bin" / "simple-a2a"), "send", url, "hi"],
            capture_output=True,
            text=True,
            timeout=60,
            env=CLEAN_ENV,
        )
        assert cli.returncode == 0, cli.stderr
        assert "You said: hi" in cli.stdout
    finally:
        agent.terminate()
        agent.communicate(timeout=30)


def test_the_wheel_declares_the_cli_extra(dist: Path) -> None:
    """click and rich are the ``cli`` extra of the built wheel, not core requirements."""
    import zipfile

    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = zf.read(name).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert "Provides-Extra: cli" in metadata.splitlines()
    for library in ("click", "rich"):
        mine = [r for r in requires if r.startswith(f"Requires-Dist: {library}")]
        assert any("extra == 'cli'" in r for r in mine), library
        assert not any("extra" not in r for r in mine), library
