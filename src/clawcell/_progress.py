"""Live progress of a running cell: output items and tool calls as they happen.

`CodeMode.call_tool(..., on_update=callback)` (and `exec`/`wait`) calls `callback` with a
`CellUpdate` for each output item as the guest emits it and for each catalog tool call as it
starts and settles, before the leg's envelope exists. This is what the original delivers as
progress updates, and what the agent runtime and the Control UI show while a cell runs.

The callback is a plain function called on the event-loop thread; it must return quickly
(push into a queue). An exception it raises is logged and ignored: a broken observer never
changes what the cell does. Tool arguments are not reported (they may be large or private).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeAlias

from ._lazy import value_class

__all__ = ["CellUpdate", "OnUpdate", "Progress"]

_log = logging.getLogger("clawcell")

UpdateKind = Literal["output", "tool_started", "tool_settled"]


@value_class
class CellUpdate:
    """One progress event of a running cell.

    Attributes:
        kind: `"output"` (an output item), `"tool_started"` or `"tool_settled"`.
        run_id: The cell's run id (`cm_<uuid>`), the one a `waiting` envelope would carry.
        item: For `output`: the item as it will appear in the envelope's `output`
            (`{"type": "text", "text": …}` or `{"type": "json", "value": …}`), before the
            output budget cuts anything.
        tool: For tool kinds: the callable name the cell called.
        call_id: For tool kinds: the bridge request id (`bridge:callValue:<n>`).
        ok: For `tool_settled`: whether the call succeeded.
    """

    kind: UpdateKind
    run_id: str
    item: dict[str, Any] | None = None
    tool: str | None = None
    call_id: str | None = None
    ok: bool | None = None


OnUpdate: TypeAlias = Callable[[CellUpdate], None]


class Progress:
    """Reports one leg's events to its `on_update` callback."""

    def __init__(self, run_id: str, callback: OnUpdate) -> None:
        self._run_id = run_id
        self._callback = callback

    def output(self, items: Iterable[str]) -> None:
        """Output items, given as the JSON texts the guest produced."""
        for text in items:
            self._emit(CellUpdate(kind="output", run_id=self._run_id, item=json.loads(text)))

    def tool_started(self, call_id: str, tool: str) -> None:
        self._emit(CellUpdate(kind="tool_started", run_id=self._run_id, tool=tool, call_id=call_id))

    def tool_settled(self, call_id: str, tool: str, ok: bool) -> None:
        update = CellUpdate(
            kind="tool_settled", run_id=self._run_id, tool=tool, call_id=call_id, ok=ok
        )
        self._emit(update)

    def _emit(self, update: CellUpdate) -> None:
        try:
            self._callback(update)
        except Exception:
            _log.exception("clawcell: an on_update callback raised; the cell goes on")
