"""Protocol version negotiation (spec §3.6). No I/O.

The version comes from the ``A2A-Version`` header or the ``A2A-Version`` query parameter. With
none, the spec says 0.3 (§3.6.2); we are liberal: a request whose method name or route exists only
in 1.0 is served as 1.0, one whose method or route is a 0.3 one as 0.3.
"""

from __future__ import annotations

import functools

from .errors import VersionNotSupportedError

V1 = "1.0"
V03 = "0.3"
SUPPORTED = (V1, V03)
HEADER = "A2A-Version"


@functools.lru_cache(maxsize=64)  # every request brings one of a few spellings
def normalize(version: str) -> str | None:
    """``"1"``, ``"1.0"``, ``"1.0.1"`` → ``"1.0"``; ``"0.3"``, ``"0.3.0"`` → ``"0.3"``."""
    parts = version.strip().lstrip("vV").split(".")
    if not parts or not parts[0].isdigit():
        return None
    major, minor = parts[0], parts[1] if len(parts) > 1 and parts[1].isdigit() else "0"
    candidate = f"{int(major)}.{int(minor)}"
    return candidate if candidate in SUPPORTED else None


def negotiate(requested: str | None, *, is_v03_name: bool) -> str:
    """The version to serve a request with, or :class:`VersionNotSupportedError`."""
    if requested is None or not requested.strip():
        return V03 if is_v03_name else V1
    version = normalize(requested)
    if version is None:
        raise VersionNotSupportedError(
            f"A2A-Version {requested!r} is not supported; this agent speaks "
            + " and ".join(SUPPORTED),
            metadata={"supportedVersions": ",".join(SUPPORTED)},
        )
    if version == V1 and is_v03_name:
        return V03  # a 0.3 method name always gets 0.3 shapes
    return version
