"""The command line's libraries are the ``cli`` extra (issue #19): without rich the package
works, httpx does not load its own command line, and the ``simple-a2a`` command says what to
install instead of a traceback.

click stays installed either way (uvicorn, a core dependency, requires it); rich and its
pygments come only with the extra. "Without" is made real in a subprocess by a finder that
refuses to import them, as an environment that never installed them would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]

WITHOUT_CLI_EXTRA = """
import importlib.abc, sys
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in ("rich", "pygments"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NotInstalled())
"""


def run_without_cli_extra(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_CLI_EXTRA + code],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_command_names_the_extra_it_needs() -> None:
    done = run_without_cli_extra("from simple_a2a.cli import main\nmain()\n")
    assert done.returncode == 2, done.stderr
    assert "pip install 'simple-a2a[cli]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_client_and_server_work_without_the_cli_extra() -> None:
    code = (
        "import simple_a2a, sys\n"
        "from simple_a2a.server.background import BackgroundServer\n"
        "@simple_a2a.agent\n"
        "async def echo(ctx):\n"
        "    return f'You said: {ctx.text}'\n"
        "card = simple_a2a.AgentCard(name='Echo', description='d', version='1')\n"
        "with BackgroundServer(simple_a2a.server(card, echo).app) as srv:\n"
        "    print(simple_a2a.client(srv.url).send('hi').text)\n"
        "print(sorted(m for m in ('httpx._main', 'rich') if m in sys.modules))\n"
    )
    done = run_without_cli_extra(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["You said: hi", "[]"]


def test_click_and_rich_are_the_cli_extra_not_core() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {dep.split(">")[0].split("=")[0].split("[")[0] for dep in project["dependencies"]}
    assert not names & {"click", "rich"}
    assert {d.split(">")[0] for d in project["optional-dependencies"]["cli"]} == {"click", "rich"}
    assert project["scripts"]["simple-a2a"] == "simple_a2a.cli:main"
