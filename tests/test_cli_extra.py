"""The command line's libraries (click, rich) are the ``cli`` extra, not core dependencies
(issue #19): without them the library works in full and ``simple-a2a`` says how to install them.

click stays installed in practice (uvicorn, a core dependency, needs it), so what a plain
``pip install simple-a2a`` lacks is rich; then httpx no longer imports its own command line.
"Without" is a fresh interpreter whose import system refuses the named modules (a meta path
finder that raises ``ModuleNotFoundError``, as if they were not installed), so the tests need no
second virtual environment; tests/test_packaging.py checks the built wheel's metadata.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "simple_a2a"
HINT = "error: the simple-a2a command needs the cli extra: pip install 'simple-a2a[cli]'\n"
CLI_LIBRARIES = ("click", "rich")

#: First lines of every program below: the modules named in MISSING cannot be imported.
NOT_INSTALLED = """\
import sys
from importlib.abc import MetaPathFinder

class NotInstalled(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in MISSING:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""


def run_without(
    missing: tuple[str, ...], code: str, *args: str
) -> subprocess.CompletedProcess[str]:
    program = f"MISSING = {missing!r}\n" + NOT_INSTALLED + code
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def console_script() -> str:
    """The ``simple-a2a`` entry point as pyproject.toml declares it (``module:function``)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^simple-a2a = "([\w.]+:\w+)"$', text, re.MULTILINE)
    assert match, "no simple-a2a console script in pyproject.toml"
    return match.group(1)


@pytest.mark.parametrize("missing", [("rich",), ("click",), CLI_LIBRARIES])
@pytest.mark.parametrize("args", [[], ["--help"], ["send", "localhost:9", "hi"]])
def test_the_console_script_says_to_install_the_extra(
    missing: tuple[str, ...], args: list[str]
) -> None:
    module, function = console_script().split(":")
    code = (
        "import importlib\n"
        f"sys.argv[0] = 'simple-a2a'\n"
        f"getattr(importlib.import_module({module!r}), {function!r})()\n"
    )
    done = run_without(missing, code, *args)
    assert (done.returncode, done.stderr, done.stdout) == (2, HINT, "")


def test_python_m_simple_a2a_cli_says_to_install_the_extra() -> None:
    code = "import runpy\nrunpy.run_module('simple_a2a.cli', run_name='__main__')\n"
    done = run_without(CLI_LIBRARIES, code, "--version")
    assert (done.returncode, done.stderr, done.stdout) == (2, HINT, "")


def test_with_the_extra_the_command_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "simple_a2a.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("simple-a2a, version ")


def test_importing_the_package_and_its_command_module_loads_neither() -> None:
    """With click and rich installed (this run's environment), ``import simple_a2a`` and
    ``import simple_a2a.cli`` (the console script's module) load neither."""
    code = (
        "import sys, simple_a2a, simple_a2a.cli\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'click', 'rich'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_the_library_works_without_them() -> None:
    """Without rich and its pygments (click comes with uvicorn): every module outside cli/
    imports, and a server with the inspector serves a round trip of the client (httpx without
    its command line)."""
    code = """
import importlib, pkgutil
import simple_a2a
from simple_a2a.server.background import BackgroundServer

for info in pkgutil.walk_packages(simple_a2a.__path__, "simple_a2a."):
    if info.name == "simple_a2a.demo" or not info.name.startswith("simple_a2a.cli"):
        importlib.import_module(info.name)

card = simple_a2a.AgentCard(name="Echo", description="d", version="1")
app = simple_a2a.server(card, lambda ctx: f"You said: {ctx.text}", inspector=True)
with BackgroundServer(app.app) as srv, simple_a2a.client(srv.url) as agent:
    print(agent.send("hello").text)
print("httpx._main" in sys.modules)
"""
    done = run_without(("rich", "pygments"), code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["You said: hello", "False"]


def test_the_package_keeps_its_names() -> None:
    """``simple_a2a.cli.main`` stays the entry function after the commands module (which has a
    ``main`` of its own) is imported, and ``cli`` and ``ExitCode`` load on first use."""
    code = (
        "import simple_a2a.cli as package\n"
        "assert package.ExitCode.USAGE == 2\n"
        "import simple_a2a.cli.commands, simple_a2a.cli.serve\n"
        "print(type(package.main).__name__, package.cli.name)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "function cli\n"), done.stderr


def test_click_and_rich_are_the_cli_extra_not_core() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {dep.split(">")[0].split("=")[0].split("[")[0] for dep in project["dependencies"]}
    assert not names & set(CLI_LIBRARIES)
    assert {d.split(">")[0] for d in project["optional-dependencies"]["cli"]} == {"click", "rich"}
    assert project["scripts"]["simple-a2a"] == "simple_a2a.cli:main"


def test_only_cli_imports_click_or_rich() -> None:
    """On the source: no module outside cli/ imports click or rich, even inside a function."""
    bad = {}
    for path in SRC.rglob("*.py"):
        if path.relative_to(SRC).parts[0] == "cli":
            continue
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
        if found & set(CLI_LIBRARIES):
            bad[str(path.relative_to(SRC))] = sorted(found & set(CLI_LIBRARIES))
    assert not bad, bad
