"""A table the cyclic garbage collector never walks, for the memory stores' per-task rows.

A dict whose keys and values are all atoms (``str``, ``bytes``, ``int``, ``None``, and tuples
of them) is one CPython untracks, so the collector skips it however large it grows. But a new
tuple starts out tracked (the collector untracks it at the first collection that sees it), and
storing a tracked value makes the dict tracked again, as a young object: every collection, even
the frequent youngest ones, then walks the whole dict. With a row per stored task that is a
pause that grows with the store: at 100,000 tasks over HTTP, ~13 ms per full collection and
~2 ms per young one, p99 2.75x p50 and climbing (issue #19, bench/README.md round 8).

So new values wait in a small ``fresh`` dict; once it holds ``FRESH_LIMIT`` of them, those the
collector has untracked meanwhile (nearly all: a young collection runs every few hundred
allocations) move to the big ``settled`` dict, which then stays untracked. Keys are in one of
the two, never both.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Generic, TypeVar

V = TypeVar("V")

#: How many fresh values wait before the untracked ones move to the settled dict.
FRESH_LIMIT = 512


class UntrackedTable(Generic[V]):
    """A ``str``-keyed mapping of atom values, never ``None`` (see the module doc): ``get``,
    ``[]``, ``[]=``, ``pop``, ``in``, ``len`` and ``values`` as a dict's, in no particular order."""

    __slots__ = ("_fresh", "_limit", "_settled")

    def __init__(self) -> None:
        self._settled: dict[str, V] = {}
        self._fresh: dict[str, V] = {}
        self._limit = FRESH_LIMIT

    def get(self, key: str) -> V | None:
        value = self._fresh.get(key)
        return self._settled.get(key) if value is None else value

    def __getitem__(self, key: str) -> V:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: V) -> None:
        fresh = self._fresh
        if key not in fresh:
            self._settled.pop(key, None)
        fresh[key] = value
        if len(fresh) > self._limit:
            self._settle()

    def _settle(self) -> None:
        settled = self._settled
        if not gc.isenabled() or gc.get_threshold()[0] == 0:
            # No automatic collection (gc.disable() or a threshold of 0): none untracks
            # anything, and none walks the dict.
            settled.update(self._fresh)
            self._fresh = {}
            return
        waiting: dict[str, V] = {}
        for key, value in self._fresh.items():
            if gc.is_tracked(value):  # not yet seen by a collection: it waits
                waiting[key] = value
            else:
                settled[key] = value
        self._fresh = waiting
        # Many still tracked (rare collections: a high threshold): wait for twice as many
        # before looking again, so each value is looked at a bounded number of times.
        self._limit = max(FRESH_LIMIT, 2 * len(waiting))

    def pop(self, key: str, default: V | None = None) -> V | None:
        value = self._fresh.pop(key, None)
        if value is None:
            value = self._settled.pop(key, None)
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return key in self._fresh or key in self._settled

    def __len__(self) -> int:
        return len(self._fresh) + len(self._settled)

    def values(self) -> Iterator[V]:
        yield from self._settled.values()
        yield from self._fresh.values()
