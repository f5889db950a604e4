"""What the pages of a dead worker's turn are told: its unfinished cells redrawn as failed,
an `error` naming `worker_lost`, then `done`."""

from __future__ import annotations

import json

from clawcell.ui._chat._interrupted import WORKER_LOST, interrupted_messages
from clawcell.ui._stream._events import sse_message
from clawcell.ui._templates import fragment


def _drawn(cell: str, status: str | None = None) -> str:
    """A stored message that drew `cell` (running), or redrew its status as `status`."""
    if status is None:
        html = fragment("cell", id=cell, value={"code": "hold()"})
        return sse_message("cell_started", {"ops": [{"op": "append", "target": "w", "html": html}]})
    html = fragment("status", id=cell, value={"status": status})
    op = {"op": "replace", "target": f"{cell}-status", "html": html}
    return sse_message("cell_finished", {"ops": [op]})


def test_cells_left_running_or_waiting_are_redrawn_as_failed_and_the_error_follows() -> None:
    stored = [
        _drawn("cell-1-1"),
        _drawn("cell-1-1", "completed"),
        _drawn("cell-1-2"),
        _drawn("cell-1-3"),
        _drawn("cell-1-3", "waiting"),
    ]
    error, done = interrupted_messages(stored)
    data = json.loads(error.split("data: ", 1)[1])
    assert error.startswith("event: error\n") and done.startswith("event: done\n")
    assert data["event"] == {"type": "error", "code": "worker_lost", "message": WORKER_LOST}
    replaced = [op["target"] for op in data["ops"] if op["op"] == "replace"]
    assert replaced == ["cell-1-2-status", "cell-1-3-status"]  # not the completed one
    assert all("status-failed" in op["html"] for op in data["ops"] if op["op"] == "replace")
    assert data["ops"][-1]["target"] == "transcript" and WORKER_LOST in data["ops"][-1]["html"]


def test_a_turn_without_cells_is_told_only_the_error() -> None:
    error, _ = interrupted_messages(["event: text_delta\ndata: not json\n\n"])
    ops = json.loads(error.split("data: ", 1)[1])["ops"]
    assert [op["op"] for op in ops] == ["append"]
