"""The playground: run a cell against the agent's tools and stream its live output.

`POST /api/playground/exec` (`{"session", "code"}`) and `POST /api/playground/wait`
(`{"session", "runId"}`) answer with Server-Sent Events: a cell card placed at the top of the
run history (newest first), one op per live output item (`on_update`) as the cell runs, and
finally the envelope, with an approval card for each call the run waits to have approved.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from .._protocol import CellRunner
from .._stream._events import Op, sse_message
from .._templates import TEMPLATES, fragment, render_template
from ._runs import PlayHistory, waiting_approvals

__all__ = ["EXAMPLE_CELL", "RUNS_TOP", "panel_fragment", "playground_events"]

RUNS_TOP: Final = "runs-top"
"""The marker at the top of the run history: a new run replaces it with itself and a new
marker, so the newest run comes first with the page's plain `replace` operation."""

EXAMPLE_CELL: Final = """\
// Every tool is an async global; text()/json() emit output as the cell runs.
text("hello from the playground");
json({ now: new Date(0).toISOString() });
return 6 * 7;
"""


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


def _iso(seconds: float) -> str:
    """Seconds since the epoch as ISO 8601 UTC (the `when` filter then shows it)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


TEMPLATES.filters["iso"] = _iso


def panel_fragment(name: str, value: object = None, **context: Any) -> str:
    """One fragment of `_panels.html` (the playground's and the jobs panel's own)."""
    return render_template("_panels.html", fragment=name, value=value, **context).strip()


async def playground_events(
    runner: CellRunner,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    history: PlayHistory,
    session_id: str,
    before: Sequence[Op] = (),
) -> AsyncIterator[str]:
    """SSE messages of one `exec`/`wait` call: card, live output, then the envelope; the
    run is recorded in `history`. `before` ops go with the card (expired approval cards)."""
    code, run_id = arguments.get("code"), arguments.get("runId")
    card = (await history.start(session_id, tool=tool, code=code, run_id=run_id)).id
    cell = {"tool": tool, "code": code, "runId": run_id}
    html = f'<span id="{RUNS_TOP}" hidden></span>' + fragment("cell", id=card, value=cell)
    placed: Op = {"op": "replace", "target": RUNS_TOP, "html": html}
    yield sse_message("cell_started", {"ops": [*before, placed]})
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
    run = await history.finished(session_id, card, envelope)
    ops = [*_result_ops(card, envelope), *_approval_ops(card, envelope)]
    if run is not None and run.seconds is not None:
        time_html = f'<span class="cell-time" id="{card}-time">{run.seconds:.1f} s</span>'
        ops.append({"op": "replace", "target": f"{card}-time", "html": time_html})
    yield sse_message("cell_finished", {"envelope": envelope, "ops": ops})


def _envelope(call: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
    exc = call.exception()
    if exc is None:
        return call.result()
    code = getattr(exc, "code", "error")
    return {"status": "failed", "code": code, "error": str(exc), "output": []}


def _approval_ops(card: str, envelope: Mapping[str, Any]) -> list[Op]:
    """A live approval card for each call the run waits to have approved."""
    prompts = waiting_approvals(envelope)
    if not prompts:
        return []
    html = panel_fragment("approvals", id=card, value=[(p, None) for p in prompts],
                          run_id=envelope["runId"])  # fmt: skip
    return [{"op": "replace", "target": f"{card}-approvals", "html": html}]


def _result_ops(card: str, envelope: Mapping[str, Any]) -> list[Op]:
    result = panel_fragment("play_result", id=card, value=envelope)
    outputs = fragment("outputs", id=card, value=envelope)
    envelope_html = fragment("envelope", value=envelope)
    status = fragment("status", id=card, value=envelope)
    return [
        {"op": "replace", "target": f"{card}-result", "html": result + envelope_html},
        {"op": "replace", "target": f"{card}-output", "html": outputs},
        {"op": "replace", "target": f"{card}-status", "html": status},
    ]
