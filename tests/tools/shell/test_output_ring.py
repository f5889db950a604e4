"""`OutputRing` against a plain string that keeps everything (property tests)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clawcell.tools._shell._output_ring import OutputRing

CHUNKS = st.lists(st.text(max_size=40), max_size=30)


@given(chunks=CHUNKS, capacity=st.integers(1, 64), offset=st.integers(0, 1500),
       limit=st.none() | st.integers(0, 80))  # fmt: skip
def test_a_read_is_the_kept_part_of_what_was_written(
    chunks: list[str], capacity: int, offset: int, limit: int | None
) -> None:
    ring = OutputRing(capacity)
    for chunk in chunks:
        ring.append(chunk)
    full = "".join(chunks)
    first = max(0, len(full) - capacity)
    read = ring.read(offset, limit)
    assert (ring.written, ring.truncated, ring.lines) == (len(full), first > 0, full.count("\n"))
    assert read.text == full[read.start : read.end]
    assert first <= read.start <= read.end <= len(full)
    assert read.start == min(max(offset, first), len(full))
    assert read.dropped == max(0, read.start - offset)
    if limit is not None:
        assert read.end - read.start <= limit
    assert ring.tail(capacity) == full[first:]
