"""The playground: run a cell against the agent's tools and stream its live output.

`POST /api/playground/exec` (`{"session", "code"}`) and `POST /api/playground/wait`
(`{"session", "runId"}`) answer with Server-Sent Events: a cell card, one op per live output
item (`on_update`) as the cell runs, and finally the envelope.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

from ._protocol import CellRunner
from ._stream import Op, sse_message
from ._templates import fragment

__all__ = ["EXAMPLE_CELL", "playground_events"]

EXAMPLE_CELL: Final = """\
// Every tool is an async global; text()/json() emit output as the cell runs.
text("hello from the playground");
json({ now: new Date(0).toISOString() });
return 6 * 7;
"""
_IDS = itertools.count(1)


def _accepts_updates(runner: CellRunner) -> bool:
    try:
        return "on_update" in inspect.signature(runner.call_tool).parameters
    except (TypeError, ValueError):
        return False


def _update_ops(card: str, update: Any) -> list[Op]:
    kind = getattr(update, "kind", None)
    if kind == "output":
        item = getattr(update, "item", None)
    elif kind in ("tool_started", "tool_settled"):
        ok = getattr(update, "ok", None)
        state = "started" if kind == "tool_started" else ("ok" if ok else "failed")
        item = {"type": "text", "text": f"→ {getattr(update, 'tool', '?')} {state}"}
    else:
        return []
    html = fragment("output", value=item)
    return [{"op": "append", "target": f"{card}-output", "html": html}]


async def playground_events(
    runner: CellRunner, tool: str, arguments: Mapping[str, Any]
) -> AsyncIterator[str]:
    """SSE messages of one `exec`/`wait` call: card, live output, then the envelope."""
    card = f"play-{next(_IDS)}"
    cell = {"tool": tool, "code": arguments.get("code"), "runId": arguments.get("runId")}
    html = fragment("cell", id=card, value=cell)
    yield sse_message("cell_started", {"ops": [{"op": "append", "target": "runs", "html": html}]})
    updates: asyncio.Queue[Any] = asyncio.Queue()
    options = {"on_update": updates.put_nowait} if _accepts_updates(runner) else {}
    call = asyncio.ensure_future(runner.call_tool(tool, dict(arguments), **options))
    try:
        while not (call.done() and updates.empty()):
            getter = asyncio.ensure_future(updates.get())
            await asyncio.wait({getter, call}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                yield sse_message("cell_output", {"ops": _update_ops(card, getter.result())})
            else:
                getter.cancel()
        envelope = _envelope(call)
    finally:
        call.cancel()
        with contextlib.suppress(BaseException):
            await call
    yield sse_message("cell_finished", {"envelope": envelope, "ops": _result_ops(card, envelope)})


def _envelope(call: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
    exc = call.exception()
    if exc is None:
        return call.result()
    code = getattr(exc, "code", "error")
    return {"status": "failed", "code": code, "error": str(exc), "output": []}


def _result_ops(card: str, envelope: Mapping[str, Any]) -> list[Op]:
    result = fragment("result", id=card, value=envelope)
    outputs = fragment("outputs", id=card, value=envelope)
    envelope_html = fragment("envelope", value=envelope)
    status = fragment("status", id=card, value=envelope)
    return [
        {"op": "replace", "target": f"{card}-result", "html": result + envelope_html},
        {"op": "replace", "target": f"{card}-output", "html": outputs},
        {"op": "replace", "target": f"{card}-status", "html": status},
    ]
