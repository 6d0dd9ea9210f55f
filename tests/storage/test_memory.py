"""The conformance suite against the in-memory reference backend."""

from __future__ import annotations

from typing import Any

import pytest

from simple_a2a.storage import MemoryStorage, Storage

from .conformance import StorageConformance, StorageFactory


class TestMemoryStorage(StorageConformance):
    durable = False

    @pytest.fixture
    def make_storage(self) -> StorageFactory:
        def make(max_events_per_task: int = 10_000, **_: Any) -> Storage:
            return MemoryStorage(max_events_per_task=max_events_per_task)

        return make
