"""The Control UI's turn stream costs the same per text delta however long the draft is.

The draft's text was one string grown by `+=` on an attribute (a copy of the whole draft per
delta). The same 2,000 deltas are timed (`tests/_growth.py`, CPU time of this thread) after a
first delta of 1 KB and after one of 8 MB; `tests/agent/test_stream_growth.py` shows the
measurement failing that defect.

Not an `isolated` test: the ratios are about 1 against tens, far from the bound, and the
clock is this thread's CPU time, which other workers do not add to.
"""

from __future__ import annotations

import time

from clawcell.ui import UiSettings
from clawcell.ui._media import MediaRoots
from clawcell.ui._render._messages import Renderer
from clawcell.ui._stream._events import TurnStream
from tests._growth import tail_growth

_BOUND = 4.0


def _draft_tail_seconds(head: int) -> float:
    renderer = Renderer(settings=UiSettings(), media=MediaRoots([]), canvas_host_url=None)
    stream = TurnStream(renderer=renderer, container="transcript")
    stream.ops({"type": "text_delta", "text": "x" * head})
    started = time.thread_time()
    for _ in range(2000):
        stream.ops({"type": "text_delta", "text": "word "})
    return time.thread_time() - started


def test_a_drafts_deltas_cost_the_same_after_a_long_head() -> None:
    ratio = tail_growth(_draft_tail_seconds, 1_000, 8_000_000, bound=_BOUND)
    assert ratio < _BOUND, f"2,000 deltas after 8 MB cost {ratio:.1f}x those after 1 KB"
