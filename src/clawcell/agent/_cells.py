"""One model tool call answered by a cell, with its live progress as events.

The cell runs as its own task; `CodeMode`'s `on_update` callback pushes each output item into
an `asyncio.Queue` that `CellCall.events()` drains, so `cell_output` events reach the consumer
while the cell is still running. Tool updates are handled in the callback itself: they open
and close child spans of the cell's span when they happen and are counted for the turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Mapping
from typing import Any, Final

from .. import CellUpdate, CodeMode
from ..errors import ClawcellError
from ._caller import Caller, current_caller
from ._events import AgentEvent, CellFinished, CellOutput, CellStarted
from ._model import ToolCall
from ._text import valid_json
from ._tracing import Span, code_attributes

__all__ = ["CellCall"]

_log = logging.getLogger("clawcell.agent")
CANCELLED_TEXT: Final = "the cell was cancelled: the agent turn stopped before it ended."


class CellCall:
    """Answers one `exec`/`wait` call and reports it as `cell_*` events.

    After `events()` is exhausted, `result_text` and `is_error` hold the tool result to send
    back to the model, and `tool_calls` the number of tool calls the cell made.
    """

    def __init__(
        self,
        mode: CodeMode,
        call: ToolCall,
        *,
        turn_id: str,
        span: Span,
        caller: Caller | None = None,
    ) -> None:
        self._mode = mode
        self._caller = caller
        self._call = call
        self._turn_id = turn_id
        self._span = span.child("clawcell.cell", {"clawcell.cell.tool": call.name})
        self._tools: dict[str, Span] = {}
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._output: list[dict[str, Any]] = []
        """The output items reported so far (a stopped cell's result keeps them)."""
        self.result_text = ""
        self.is_error = True
        self.tool_calls = 0

    def started(self) -> CellStarted:
        """The `cell_started` event of this call."""
        arguments = _mapping(self._call.arguments)
        code, title, run_id = arguments.get("code"), arguments.get("title"), arguments.get("runId")
        if isinstance(code, str):
            self._span.set(dict(code_attributes(code)))
        return CellStarted(
            turn_id=self._turn_id,
            call_id=self._call.id,
            tool=self._call.name,
            code=code if isinstance(code, str) else None,
            title=title if isinstance(title, str) else None,
            run_id=run_id if isinstance(run_id, str) else None,
        )

    async def events(self, deadline: float) -> AsyncGenerator[AgentEvent, None]:
        """Run the cell; yield `cell_output` events as they happen, then `cell_finished`.

        Raises:
            TimeoutError: `deadline` (an event-loop time) passed while the cell ran; the cell
                is cancelled.
        """
        task = asyncio.create_task(self._answer())
        task.add_done_callback(lambda _: self._queue.put_nowait(None))  # None: the cell ended
        try:
            while (item := await self._next(deadline)) is not None:
                self._output.append(item)
                yield CellOutput(turn_id=self._turn_id, call_id=self._call.id, item=item)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                self._cancelled()
            self._span.end(failure_code="internal_error")  # no-op after `_answer` ended it
        yield task.result()

    async def _next(self, deadline: float) -> dict[str, Any] | None:
        async with asyncio.timeout_at(deadline):
            return await self._queue.get()

    def _cancelled(self) -> None:
        """The result of a cell the turn stopped: an envelope with the status `stopped` and
        the output it had reported, so the model and a reloaded page see what it did."""
        envelope = {"status": "stopped", "code": "cancelled", "error": CANCELLED_TEXT,
                    "output": self._output}  # fmt: skip
        self.result_text = json.dumps(envelope, ensure_ascii=False)
        for span in self._tools.values():
            span.end(failure_code="cancelled")
        self._span.end(failure_code="cancelled")

    async def _answer(self) -> CellFinished:
        # This task's context only: the cell's tool calls are tasks copied from it.
        current_caller.set(self._caller)
        try:
            envelope = await self._mode.call_tool(
                self._call.name, self._call.arguments, on_update=self._on_update
            )
        except ClawcellError as exc:  # InputError and friends go back to the model as errors
            return self._failed(exc.code, exc.message)
        except Exception as exc:  # a defect below: the model hears of it, the turn goes on
            _log.exception("answering %s call %s failed", self._call.name, self._call.id)
            return self._failed(
                "internal_error", f"the call failed unexpectedly: {type(exc).__name__}: {exc}"
            )
        envelope = valid_json(envelope)  # a guest string may hold a lone surrogate
        self.result_text = self._mode.render(envelope)
        self.is_error = envelope.get("status") == "failed"
        self._span.set({"clawcell.cell.status": envelope.get("status")})
        self._span.set({"clawcell.cell.run_id": envelope.get("runId")})
        if self.is_error:
            self._span.end(failure_code=str(envelope.get("code")), message=envelope.get("error"))
        else:
            self._span.end()
        return CellFinished(turn_id=self._turn_id, call_id=self._call.id, envelope=envelope)

    def _failed(self, code: str, message: str) -> CellFinished:
        self.result_text = message
        self._span.end(failure_code=code, message=message)
        return CellFinished(turn_id=self._turn_id, call_id=self._call.id, error=message)

    def _on_update(self, update: CellUpdate) -> None:
        if update.kind == "output":
            if update.item is not None:
                self._queue.put_nowait(valid_json(update.item))  # guest text may not be UTF-8
            return
        key = update.call_id or ""
        if update.kind == "tool_started":
            self.tool_calls += 1
            self._tools[key] = self._span.child(
                "clawcell.tool", {"clawcell.tool": update.tool or ""}
            )
        elif update.kind == "tool_settled" and key in self._tools:
            span = self._tools.pop(key)
            span.set({"clawcell.tool.ok": update.ok})
            span.end(failure_code=None if update.ok else "tool_error")


def _mapping(arguments: Mapping[str, Any] | str) -> Mapping[str, Any]:
    return arguments if isinstance(arguments, Mapping) else {}
