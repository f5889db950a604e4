"""`clawcell chat` never lets model, cell or command text drive the terminal."""

from __future__ import annotations

import io

import pytest

from clawcell.agent._events import (  # pyright: ignore[reportPrivateUsage]
    AgentEvent,
    CellFinished,
    CellOutput,
    CellStarted,
    TextDelta,
)
from clawcell.cli._chat_view import ChatView  # pyright: ignore[reportPrivateUsage]

HOSTILE = "a\x1b]52;c;cHduZWQ=\x07b\x1b[2J\rc\x9b31md\x7fe\x00f\tg"
SHOWN = "a\\x1b]52;c;cHduZWQ=\\x07b\\x1b[2J\\x0dc\\x9b31md\\x7fe\\x00f\tg"


@pytest.mark.parametrize(
    "event",
    [
        TextDelta(turn_id="t", text=HOSTILE),
        CellStarted(turn_id="t", call_id="c", tool="exec", code=HOSTILE, title=HOSTILE),
        CellOutput(turn_id="t", call_id="c", item={"type": "text", "text": HOSTILE}),
        CellFinished(turn_id="t", call_id="c", envelope={"status": "failed", "error": HOSTILE}),
        CellFinished(turn_id="t", call_id="c", error=HOSTILE),
    ],
    ids=["text", "cell code and title", "command output", "cell error", "rejection"],
)
def test_control_characters_from_any_event_are_shown_not_sent(event: AgentEvent) -> None:
    out = io.StringIO()
    view = ChatView(out)
    view.show(event)
    view.failure(HOSTILE)
    drawn = out.getvalue()
    assert not any(ch in drawn for ch in "\x1b\x07\r\x9b\x7f\x00")
    assert drawn.count(SHOWN) >= 2  # the event's copy and the failure line
