"""A griffe extension for the API reference: Sphinx roles in docstrings become links, and
``#:`` comments document attributes (as Sphinx reads them).

The docstrings use Sphinx roles (``:class:`~simple_a2a.client.Client```), which mkdocstrings
would print as they are. Before rendering, each role becomes an optional cross-reference
(``<autoref identifier=... optional>``): a link when the target is on a page of the reference,
plain code when it is not (a private helper), never a warning. Relative targets are resolved
in the docstring's scope, as Sphinx does. ``tests/test_docs_site.py`` checks that the built
site shows no raw role.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|attr|data|exc|obj|const):`(~?)([^`]+)`")
TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^>]+)>$")


def _resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path of ``target`` as seen from ``obj``, or None."""
    target = target.lstrip(".")
    head, _, rest = target.partition(".")
    scope: griffe.Object | None = obj
    while scope is not None:
        try:
            full = scope.resolve(head)
        except Exception:  # griffe.NameResolutionError, or an unloadable alias target
            scope = scope.parent
            continue
        return f"{full}.{rest}" if rest else full
    return target if target.startswith("simple_a2a.") else None


def _link(obj: griffe.Object, match: re.Match[str]) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    titled = TITLED.match(target)
    title = titled["title"] if titled else None
    if titled:
        target = titled["target"]
    shown = title or (target.rsplit(".", 1)[-1] if tilde else target.lstrip("."))
    full = _resolve(obj, target)
    code = f"<code>{html.escape(shown)}</code>"
    if full is None:
        return code
    return f'<autoref identifier="{html.escape(full)}" optional>{code}</autoref>'


COMMENT_DOC = re.compile(r"#:\s?(.*)$")


def _comment_docstring(obj: griffe.Object) -> str | None:
    """Sphinx's ``#:`` documentation of an attribute: the comments on the lines just above
    it, else the one at the end of its line (griffe reads only string docstrings)."""
    lines = obj.module.lines if obj.lineno else []
    if not lines or obj.lineno is None or obj.lineno > len(lines):
        return None
    above: list[str] = []
    index = obj.lineno - 2  # 0-based line above the assignment
    while index >= 0 and (found := COMMENT_DOC.match(lines[index].strip())):
        above.insert(0, found.group(1))
        index -= 1
    if above:
        return "\n".join(above)
    trailing = re.search(r"\s#:\s?(.*)$", lines[obj.lineno - 1])
    return trailing.group(1) if trailing else None


class SphinxRoles(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        seen: set[int] = set()

        def visit(obj: griffe.Object) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if obj.is_attribute and obj.docstring is None:
                text = _comment_docstring(obj)
                if text:
                    obj.docstring = griffe.Docstring(text, parent=obj)
            if obj.docstring is not None and ":" in obj.docstring.value:
                obj.docstring.value = ROLE.sub(lambda m: _link(obj, m), obj.docstring.value)
            for member in obj.members.values():
                if not member.is_alias:
                    visit(member)  # type: ignore[arg-type]

        visit(pkg)
