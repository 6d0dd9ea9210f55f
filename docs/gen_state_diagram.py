"""Draw docs/img/task-states.svg, the task lifecycle, from a small model of it.

    .venv/bin/python docs/gen_state_diagram.py

The picture is a plain SVG file (no script, nothing fetched: it renders offline). It draws group
edges to stay readable: an arrow into the *interrupted* box means "to either interrupted state",
and the one arrow into the *terminal* box means "from any state that has not ended, to any
terminal state". ``EDGES`` below is that model; ``tests/test_docs.py`` expands it and checks it
equals ``simple_a2a.protocol.states.TRANSITIONS`` (every legal edge drawn, no illegal one), and
that the SVG in the repository is what this script writes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img" / "task-states.svg"

ACTIVE = ("submitted", "working")
INTERRUPTED = ("input-required", "auth-required")
TERMINAL = ("completed", "failed", "canceled", "rejected")
#: The boxes that stand for several states ("new" is a task being created: UNSPECIFIED).
GROUPS: dict[str, tuple[str, ...]] = {
    "interrupted": INTERRUPTED,
    "not ended": ACTIVE + INTERRUPTED,
    "terminal": TERMINAL,
    "any state": ACTIVE + INTERRUPTED + TERMINAL,
}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    path: str  # SVG path data; the arrow head is at its end
    label: str = ""
    label_at: tuple[float, float] = (0, 0)


EDGES = (
    Edge("new", "submitted", "M 37 120 L 78 120"),
    Edge("new", "any state", "", "(a new task may also start in any other state)", (20, 378)),
    Edge("submitted", "working", "M 210 120 L 288 120"),
    Edge("working", "working", "M 330 100 C 330 60, 380 60, 380 98", "progress", (355, 58)),
    Edge("submitted", "interrupted", "M 195 140 L 195 218"),
    Edge("working", "interrupted", "M 385 140 L 385 218"),
    Edge("interrupted", "submitted", "M 95 220 L 95 142", "the client", (101, 178)),
    Edge("interrupted", "submitted", "", "answers", (101, 192)),
    Edge("interrupted", "working", "M 325 220 L 325 142"),
    Edge(
        "interrupted",
        "interrupted",
        "M 230 320 C 230 348, 270 348, 270 322",
        "asks again",
        (278, 345),
    ),
    Edge("not ended", "terminal", "M 440 185 L 518 185", "ends", (479, 177)),
)

BOXES = {  # state -> (x, y); every state box is 130 x 40
    "submitted": (80, 100),
    "working": (290, 100),
    "input-required": (90, 265),
    "auth-required": (270, 265),
    "completed": (540, 70),
    "failed": (540, 135),
    "canceled": (540, 200),
    "rejected": (540, 265),
}
CLUSTERS = {  # group -> (x, y, width, height, caption)
    "not ended": (60, 30, 380, 325, "not ended"),
    "interrupted": (75, 220, 350, 100, "interrupted: waiting for the client"),
    "terminal": (520, 30, 170, 325, "terminal: nothing leaves"),
}
COLORS = {"active": "#3949ab", "interrupted": "#8e24aa", "terminal": "#2e7d32"}


def expanded_edges() -> set[tuple[str, str]]:
    """The model as (state, state) pairs; ``new`` stands for a task being created."""
    pairs: set[tuple[str, str]] = set()
    for edge in EDGES:
        for source in GROUPS.get(edge.source, (edge.source,)):
            for target in GROUPS.get(edge.target, (edge.target,)):
                pairs.add((source, target))
    return pairs


def _color(state: str) -> str:
    if state in TERMINAL:
        return COLORS["terminal"]
    return COLORS["interrupted"] if state in INTERRUPTED else COLORS["active"]


def render() -> str:
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 710 390" width="710" height="390"'
        ' font-family="sans-serif" font-size="13" role="img"'
        ' aria-label="The task lifecycle: which state may follow which">',
        "<title>Task states and their legal transitions</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7"'
        ' markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"'
        ' fill="#444"/></marker></defs>',
        '<rect width="710" height="390" fill="#ffffff"/>',
    ]
    for group, (x, y, w, h, caption) in CLUSTERS.items():
        color = COLORS.get(group, "#777777")
        out.append(
            f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="10" fill="none"'
            f' stroke="{color}" stroke-dasharray="5 4"/>'
        )
        out.append(f'<text x="{x + 8}" y="{y + 16}" fill="{color}">{caption}</text>')
    out.append('<circle cx="30" cy="120" r="7" fill="#444"/>')
    out.append('<text x="10" y="100" fill="#444">new</text>')
    for state, (x, y) in BOXES.items():
        color = _color(state)
        out.append(
            f'<rect x="{x}" y="{y}" width="130" height="40" rx="8" fill="{color}"'
            f' fill-opacity="0.08" stroke="{color}" stroke-width="1.5"/>'
        )
        out.append(
            f'<text x="{x + 65}" y="{y + 25}" text-anchor="middle" fill="#222">{state}</text>'
        )
    for edge in EDGES:
        if edge.path:
            out.append(
                f'<path d="{edge.path}" fill="none" stroke="#444" stroke-width="1.5"'
                ' marker-end="url(#arrow)"/>'
            )
        if edge.label:
            x, y = edge.label_at
            anchor = "middle" if edge.target in ("working", "terminal") else "start"
            out.append(
                f'<text x="{x}" y="{y}" text-anchor="{anchor}" fill="#444"'
                f' font-size="12">{edge.label}</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {OUT.relative_to(ROOT)}\n")
