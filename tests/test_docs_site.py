"""The built documentation site reads right and works offline (issue #18).

Builds the site (``mkdocs build --strict``, as scripts/test does) and reads the HTML a visitor
gets: no raw Sphinx roles in the API reference (docs/griffe_sphinx_roles.py turns them into
links), no attribute dumped as its value, no script or diagram fetched from another host.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAW_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|data|exc|obj|const):`?")
REMOTE = re.compile(r"""<(?:script|link|img|iframe)[^>]+(?:src|href)=["']https?://""", re.I)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_the_api_reference_shows_no_raw_sphinx_roles(site: Path) -> None:
    reference = sorted((site / "reference").rglob("*.html"))
    assert len(reference) >= 5
    found = {
        str(page.relative_to(site)): RAW_ROLE.findall(page.read_text(encoding="utf-8"))
        for page in reference
    }
    assert {page: roles for page, roles in found.items() if roles} == {}
    client = (site / "reference" / "client" / "index.html").read_text(encoding="utf-8")
    assert 'class="autorefs autorefs-internal"' in client  # roles became links


def test_attributes_show_their_comment_docs_without_labels(site: Path) -> None:
    client = (site / "reference" / "client" / "index.html").read_text(encoding="utf-8")
    assert "seconds before the first retry; doubles each time" in client  # a ``#:`` comment
    assert "doc-label-instance-attribute" not in client


def test_constants_are_not_dumped_as_values(site: Path) -> None:
    protocol = (site / "reference" / "protocol" / "index.html").read_text(encoding="utf-8")
    assert "OPERATIONS" in protocol
    assert "SendStreamingMessage&#39;, &#39;" not in protocol  # the tuple's repr
    assert "OperationSpec(name=" not in protocol


def test_the_site_needs_no_other_host(site: Path) -> None:
    remote = {
        str(page.relative_to(site)): REMOTE.findall(page.read_text(encoding="utf-8"))
        for page in pages(site)
    }
    assert {page: tags for page, tags in remote.items() if tags} == {}
    concepts = (site / "concepts" / "index.html").read_text(encoding="utf-8")
    assert 'class="mermaid"' not in concepts  # mermaid would load its script from a CDN
    assert 'src="../img/task-states.svg"' in concepts
    assert (site / "img" / "task-states.svg").is_file()
