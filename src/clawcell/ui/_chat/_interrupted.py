"""What the pages following a dead worker's turn are told as another worker ends it.

The turn's stored SSE messages say which cells it drew and how each last stood: a cell still
`running` or `waiting` when its worker died is redrawn as failed (`worker_lost`), so no card
says "waiting" forever; then an `error` message says what happened, and `done`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, cast

from .._stream._events import sse_message
from .._templates import fragment

__all__ = ["WORKER_LOST", "interrupted_messages"]

WORKER_LOST: Final = (
    "The worker running this turn stopped before the turn ended (it died or lost the "
    "database), so another worker ended it. What it streamed is kept; send a message to go on."
)
_STATUS = re.compile(r'class="status status-(\w+)" id="(cell-[\w-]+)-status"')


def interrupted_messages(stored: list[str], container: str = "transcript") -> list[str]:
    """The SSE messages that end the turn whose messages so far were `stored`."""
    last: dict[str, str] = {}  # each cell's last status, in the order the page drew them
    for message in stored:
        for op in _ops(message):
            for status, cell in _STATUS.findall(str(op.get("html", ""))):
                last[cell] = status
    lost = {"status": "failed", "code": "worker_lost"}
    ops: list[dict[str, Any]] = [
        {"op": "replace", "target": f"{cell}-status", "html": fragment("status", id=cell,
                                                                       value=lost)}
        for cell, status in last.items() if status in ("running", "waiting")
    ]  # fmt: skip
    data = {"type": "error", "code": "worker_lost", "message": WORKER_LOST}
    ops.append({"op": "append", "target": container, "html": fragment("error", value=data)})
    done: dict[str, Any] = {"event": {"type": "done"}, "ops": []}
    return [sse_message("error", {"event": data, "ops": ops}), sse_message("done", done)]


def _ops(message: str) -> list[dict[str, Any]]:
    for line in message.splitlines():
        if line.startswith("data: "):
            try:
                ops = json.loads(line.removeprefix("data: ")).get("ops")
            except (ValueError, AttributeError):
                return []
            items = cast(list[object], ops) if isinstance(ops, list) else []
            return [cast(dict[str, Any], op) for op in items if isinstance(op, dict)]
    return []
