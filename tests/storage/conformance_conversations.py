"""Conformance of conversation state (``Storage.conversations``, issue #35): mixed into
``StorageConformance``. One opaque blob per (owner, context id, key), replaced on save, scoped
by owner, bounded in size, forgotten by age; durable backends keep it across instances."""

from __future__ import annotations

import asyncio

import pytest

from simple_a2a.storage import ConversationStateTooLarge, ConversationStore, Storage

from .conformance_leases import StorageFactory


def _conversations(storage: Storage) -> ConversationStore:
    assert storage.conversations is not None, "every shipped backend keeps conversations"
    return storage.conversations


class ConversationConformance:
    durable: bool

    async def test_conversation_state_is_replaced_and_scoped_by_owner(
        self, storage: Storage
    ) -> None:
        store = _conversations(storage)
        assert await store.load("ctx-1", "history", owner=None) is None
        await store.save("ctx-1", "history", b"\x00one", owner=None)
        await store.save("ctx-1", "history", b"two", owner=None)
        await store.save("ctx-1", "other", b"x", owner=None)
        assert await store.load("ctx-1", "history", owner=None) == b"two"
        assert await store.load("ctx-1", "other", owner=None) == b"x"
        # another caller with the same context id sees nothing and overwrites nothing
        assert await store.load("ctx-1", "history", owner="mallory") is None
        await store.save("ctx-1", "history", b"hers", owner="mallory")
        assert await store.load("ctx-1", "history", owner=None) == b"two"
        assert await store.forget("ctx-1", owner=None) == 2
        assert await store.load("ctx-1", "history", owner=None) is None
        assert await store.load("ctx-1", "history", owner="mallory") == b"hers"

    async def test_conversation_state_is_bounded(self, storage: Storage) -> None:
        store = _conversations(storage)
        big = b"x" * (store.max_state_bytes + 1)
        with pytest.raises(ConversationStateTooLarge, match="over the limit"):
            await store.save("ctx-big", "k", big, owner=None)
        assert await store.load("ctx-big", "k", owner=None) is None

    async def test_conversation_state_is_forgotten_by_age(self, storage: Storage) -> None:
        store = _conversations(storage)
        await store.save("ctx-old", "k", b"old", owner=None)
        await asyncio.sleep(0.05)
        await store.save("ctx-new", "k", b"new", owner=None)
        assert await store.forget_older(0.03) == 1
        assert await store.load("ctx-old", "k", owner=None) is None
        assert await store.load("ctx-new", "k", owner=None) == b"new"

    async def test_conversation_state_survives_reopening(
        self, make_storage: StorageFactory
    ) -> None:
        if not self.durable:
            pytest.skip("not a durable backend")
        first = make_storage()
        await first.open()
        await _conversations(first).save("ctx-d", "k", b"kept", owner="alice")
        await first.close()
        second = make_storage()
        await second.open()
        try:
            assert await _conversations(second).load("ctx-d", "k", owner="alice") == b"kept"
        finally:
            await second.close()
