"""One agent session: its own `CodeMode`, its turn lock and the media its tools produced.

Every session's `CodeMode` is built from the agent's tools and `CodeModeOptions`, with the
session id as its `session_id`, so store entries, parked cells and saved results never leak
between sessions. No transcript is kept here: every turn reads it from the store, which is
the truth when several workers serve one session (a turn on another worker appended to it;
docs/scale-out.md). The agent adds one `after_tool_call` hook, last, that collects the media a tool
result carries (`MEDIA:` lines in its content, `details.media`, `details.mcpAppPreview`) for
the turn's reply; it never changes a result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .. import CodeMode, CodeModeOptions, Tool
from ..catalog import ToolCallEvent
from ..reply import ToolMedia
from ..store import TurnHold

__all__ = ["Session"]


class Session:
    """The state of one session inside an `Agent`."""

    def __init__(self, session_id: str, tools: Sequence[Tool], options: CodeModeOptions) -> None:
        self.session_id = session_id
        self.media: list[ToolMedia] = []
        self.lock = asyncio.Lock()
        self.hold: TurnHold | None = None
        """The session's turn lease while a turn of this process runs."""
        self.mode = CodeMode(
            tools,
            options=options.replace(
                session_id=session_id,
                after_tool_call=(*options.after_tool_call, self._collect_media),
            ),
        )

    def _collect_media(self, event: ToolCallEvent) -> None:
        result = event.result
        if result is None:
            return
        binding = self.mode.catalog.binding(event.callable_name)
        trusted = binding is not None and binding.tool.source == "openclaw"
        record: dict[str, Any] = {"content": [dict(block) for block in result.content]}
        details = cast(object, result.details)
        if isinstance(details, Mapping):
            record["details"] = details
        media = ToolMedia.from_result(record, trusted=trusted)
        if media.urls or media.canvas is not None:
            self.media.append(media)
