"""Cold documents of the memory stores (tasks, event logs), deflated in batches.

A finished task's JSON is a few hundred bytes: deflating each one alone costs ~6 us, mostly the
per-call set-up and the final block's Huffman trees, and finds few repeats. Deflating 32 of them
at once costs ~1.3 us each and packs them ~40 % smaller (bench/README.md, round 5). So a cold
document first waits, as its raw JSON, in the packer's open batch; when the batch is full, the
batch is deflated as one buffer and each document is then known by its handle
``(packed batch, index)``. Whoever keeps the documents (a row of the task store, the event log's
table) swaps the raw JSON for the handle, if it still holds that very document.

Both forms are atoms (``bytes``; a tuple of ``bytes`` and ``int``), so the garbage collector
stops tracking what holds them. A packed batch lives while any of its documents is still held
cold: a document thawed (and changed) or deleted leaves its bytes in the batch until the others
go too — at worst one cold document keeps a batch of 32 (a few kilobytes) alive.

Reading one document inflates its whole batch (~15 us for 32); the last batch inflated is kept,
so a page of neighbours costs one inflate.
"""

from __future__ import annotations

import zlib
from typing import TypeAlias

#: A document of a packed batch: ``(packed batch, index)``.
Packed: TypeAlias = tuple[bytes, int]
#: A cold document: its raw JSON while its batch is open, else its packed form.
Cold: TypeAlias = bytes | Packed

# What every task and event repeats (keys, enum values, the timestamp's shape), as deflate's
# preset dictionary: the first documents of a batch find their repeats there. The most frequent
# strings come last, closest to the data.
_ZDICT = (
    b'"metadata":{"extensions":["referenceTaskIds":["mediaType":"application/json"'
    b'"filename":"url":"raw":"data":{"name":"description":"lastChunk":true"append":true'
    b'"TASK_STATE_FAILED""TASK_STATE_CANCELED""TASK_STATE_REJECTED""TASK_STATE_INPUT_REQUIRED"'
    b'"TASK_STATE_AUTH_REQUIRED""TASK_STATE_WORKING"{"message":{"messageId":"ROLE_AGENT"'
    b'{"task":{"id":"{"artifactUpdate":{"taskId":"{"statusUpdate":{"taskId":"'
    b'"status":{"state":"TASK_STATE_SUBMITTED","timestamp":"2026-01-01T00:00:00.000Z"}'
    b'"artifacts":[{"artifactId":"","parts":[{"text":"'
    b'"history":[{"messageId":"","contextId":"","taskId":"","role":"ROLE_USER","parts":[{"text":"'
    b'"status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-'
)
# Raw deflate (no header or checksum); level 3 is as fast as level 1 here and packs a little
# smaller. A 16 KiB window and memory level 6 rather than zlib's 32 KiB and 8: a batch is
# 15-25 KiB of documents whose repeats are mostly near (the previous document, the dictionary),
# and it packs as small (74.4 bytes a document against 74.6, bench/README.md), while the
# compressor's state is a quarter as big: it is made afresh for each batch (set up, and the
# dictionary hashed: ~530,000 instructions a batch, all of it counted) where copying a primed
# 32 KiB compressor cost ~740,000 (deflateCopy copies its ~270 KiB state: issue #36). The
# decompressor's 32 KiB window reads any of these, and is copied primed (its state is small).
_WBITS = -15
_PACK_WBITS = -14
_PACK_MEMLEVEL = 6
_UNPACKER = zlib.decompressobj(_WBITS, _ZDICT)
# Between documents in a batch: JSON never holds a raw NUL (it escapes control characters).
_SEPARATOR = b"\0"


def _deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(
        3, zlib.DEFLATED, _PACK_WBITS, _PACK_MEMLEVEL, zlib.Z_DEFAULT_STRATEGY, _ZDICT
    )
    return packer.compress(data) + packer.flush()


def _inflate(packed: bytes) -> bytes:
    unpacker = _UNPACKER.copy()
    return unpacker.decompress(packed) + unpacker.flush()


class BatchPacker:
    """Collects cold documents and deflates them ``batch`` at a time (see the module doc)."""

    def __init__(self, batch: int = 32) -> None:
        self.batch = max(1, batch)
        self._keys: list[str] = []
        self._docs: list[bytes] = []
        self._last: tuple[bytes, list[bytes]] = (b"", [])  # the last batch inflated

    def add(self, key: str, doc: bytes) -> list[tuple[str, bytes, Packed]]:
        """Queue ``doc`` (keep it as its cold form meanwhile). When that fills the batch, returns
        ``(key, doc, handle)`` for each of its documents, for the keeper to swap in."""
        self._keys.append(key)
        self._docs.append(doc)
        if len(self._docs) < self.batch:
            return []
        keys, docs = self._keys, self._docs
        self._keys, self._docs = [], []
        packed = _deflate(_SEPARATOR.join(docs))
        return [(keys[i], doc, (packed, i)) for i, doc in enumerate(docs)]

    def read(self, cold: Cold) -> bytes:
        """The document a cold form stands for."""
        if isinstance(cold, bytes):
            return cold  # still waiting in the open batch
        packed, index = cold
        last_packed, docs = self._last
        if packed is not last_packed:
            docs = _inflate(packed).split(_SEPARATOR)
            self._last = (packed, docs)
        return docs[index]
