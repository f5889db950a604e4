"""`TurnStream`: the element ids of a turn's ops."""

from __future__ import annotations

import subprocess
import sys

_FIRST_TURN_ID = """
from clawcell.ui import UiSettings
from clawcell.ui._media import MediaRoots
from clawcell.ui._render._messages import Renderer
from clawcell.ui._stream._events import TurnStream
renderer = Renderer(settings=UiSettings(), media=MediaRoots([]), canvas_host_url=None)
print(TurnStream(renderer=renderer, container="transcript").turn)
"""


def _first_turn_id_of_a_new_worker() -> str:
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_TURN_ID], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_two_workers_first_turns_draw_different_element_ids() -> None:
    # A page follows turns run by any worker (relayed through the store): two workers' first
    # turns used to be `turn-1`, so the second one's ops landed on the first one's cells.
    ids = {_first_turn_id_of_a_new_worker() for _ in range(2)}
    assert len(ids) == 2, ids
