"""Write the pins of a requirements lock into itk/pyproject.toml's ``[tool.uv]
constraint-dependencies`` (scripts/lock), between marker comments, so that the integration test
kit's ``uv run main.py`` resolves the same versions as ``locks/itk.txt`` without a uv.lock."""

from __future__ import annotations

import re
import sys
from pathlib import Path

START = "# -- constraint-dependencies: written by scripts/lock from locks/itk.txt --"
END = "# -- end of scripts/lock's constraint-dependencies --"


def pins(lock: str) -> list[str]:
    found = []
    for line in Path(lock).read_text().splitlines():
        line = line.split("#", 1)[0].strip().rstrip("\\").strip()
        if re.match(r"^[A-Za-z0-9_.\-\[\]]+==", line):
            found.append(line)
    return found


def main(lock: str, pyproject: str) -> None:
    path = Path(pyproject)
    text = path.read_text()
    block = "\n".join(
        [START, "constraint-dependencies = ["]
        + [f'  "{p}",' for p in pins(lock) if not p.startswith("simple-a2a")]
        + ["]", END]
    )
    if START in text:
        text = re.sub(re.escape(START) + r".*?" + re.escape(END), block, text, flags=re.S)
    else:
        text = text.replace("[tool.uv]\n", "[tool.uv]\n" + block + "\n", 1)
    path.write_text(text)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
