"""`PartialReply`: a running turn's text so far, stored for a page reloaded on any worker."""

from __future__ import annotations

import asyncio
import time

import pytest

from clawcell.agent import _partial
from clawcell.agent._partial import MAX_CHARS, PartialReply, read_partial
from clawcell.store import MemoryStore, StoredValue
from tests._growth import tail_growth


class _CountingStore(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.puts = 0

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        self.puts += 1
        await super().put(session_id, key, value)


def _stream(store: MemoryStore, parts: list[str], deltas: list[str]) -> None:
    async def main() -> None:
        partial = PartialReply(store, "s", "t1")
        for delta in deltas:
            parts.append(delta)
            await partial.update(parts)

    asyncio.run(main())


def test_the_start_is_stored_and_a_full_partial_is_not_written_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_partial, "EVERY", 0.0)
    store = _CountingStore()
    _stream(store, [], ["ab" * 1000] * (MAX_CHARS // 1000) + ["more"] * 100)
    stored = asyncio.run(read_partial(store, "s"))
    assert stored == ("ab" * 1000 * (MAX_CHARS // 1000))[:MAX_CHARS]
    assert store.puts == MAX_CHARS // 2000 + 1  # one write per growth until it is full


def _tail_seconds(head: int) -> float:
    parts = ["x" * head]
    store = MemoryStore()
    started = time.thread_time()
    _stream(store, parts, ["word "] * 1000)
    return time.thread_time() - started


def test_deltas_after_a_long_head_cost_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # A write due at every delta (`EVERY` 0) is the streaming turn after its first second:
    # the partial used to join the whole reply on every delta once it was full (1 MB reply:
    # 3 of 4 CPU samples of the server were that join).
    monkeypatch.setattr(_partial, "EVERY", 0.0)
    ratio = tail_growth(_tail_seconds, 1_000, 4_000_000, bound=4.0)
    assert ratio < 4.0, f"1,000 deltas after 4 MB cost {ratio:.1f}x those after 1 KB"
