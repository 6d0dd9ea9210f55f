"""The JSON of protocol objects that are never changed in place, remembered by identity.

A stored task is a snapshot: every change builds a new one (``reducer.py``), and executors change
a task only through the context's verbs (docs/guides/executors.md). A logged event is never
changed either. So the same object always has the same JSON, and the server can encode it once
for everyone who needs its bytes: a client polling an unchanged task (GetTask), a thousand
subscribers of one event, and the memory store cooling the very task a blocking send answered
with (issue #19: encoding is a tenth of a GetTask's instructions and ~3 % of a SendMessage's).

Each entry holds its object, so an ``id()`` cannot be reused while it is remembered; the oldest
entry goes first. No lock: each step is one C call on an ``OrderedDict`` (atomic under the GIL);
two threads meeting at the bound at worst evict one entry more.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any


class EncodedCache:
    """``obj.to_json()`` for the ``kept`` objects encoded most recently."""

    __slots__ = ("_entries", "kept")

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._entries: OrderedDict[int, tuple[Any, bytes]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, obj: Any) -> bytes:
        """The object's JSON: remembered, or encoded now and remembered."""
        hit = self._entries.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        data = bytes(obj.to_json())
        entries = self._entries
        entries[id(obj)] = (obj, data)
        if len(entries) > self.kept:
            entries.popitem(last=False)
        return data

    def take(self, obj: Any) -> bytes:
        """The object's JSON for a keeper that will hold the bytes from now on: the entry (if
        any) is forgotten, and a miss is encoded without being remembered."""
        hit = self._entries.pop(id(obj), None)
        return hit[1] if hit is not None and hit[0] is obj else bytes(obj.to_json())


#: Tasks: GetTask and SendMessage answers, and the memory store's cold copy. Room for the memory
#: store's 256 hot tasks (each answered, then taken when it cools) and as many polled ones.
TASKS = EncodedCache(512)
#: Logged events, as each SSE subscriber renders them.
EVENTS = EncodedCache(256)
