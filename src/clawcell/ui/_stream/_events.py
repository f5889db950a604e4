"""A turn's events as page operations, sent to the browser over Server-Sent Events.

Every agent event becomes one SSE message `{"event": <event.to_dict()>, "ops": [...]}`; an op
inserts a server-rendered (autoescaped, sanitized) HTML fragment into an element, replaces
one, or appends plain text, so the browser code never builds HTML from model output.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from .._protocol import AgentEvent
from .._render._markdown import join_parts, render_markdown
from .._render._messages import Renderer
from .._render._views import HtmlView, ItemView, MessageView
from .._subagent_rows import SUBAGENT_EVENT, RunWatch, subagent_view
from .._templates import fragment
from ._coalesce import coalesce_deltas
from ._draft import DraftFilter, Placeholder
from ._draft_markdown import DraftMarkdown
from ._ops import Op

__all__ = ["Op", "TurnStream", "sse_message"]

_ID_BITS = 40
"""A turn's element ids are random: a page follows turns run by any worker (relayed through the
store), and a per-process counter gave two workers' turns the same ids on one page."""
_BATCH_HTML = 65_536
"""HTML per SSE message: a long reply's later parts follow in `render` messages."""


def sse_message(event_name: str, data: Mapping[str, Any]) -> str:
    """One Server-Sent Events message (`data:` is compact JSON on one line)."""
    return f"event: {event_name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _cell_key(data: Mapping[str, Any]) -> str | None:
    for key in ("cellId", "callId", "toolCallId", "runId"):
        if isinstance(data.get(key), str):
            return data[key]
    return None


def _envelope_of(data: Mapping[str, Any]) -> Mapping[str, Any]:
    envelope = data.get("envelope")
    if isinstance(envelope, Mapping):
        return cast(Mapping[str, Any], envelope)
    # A call rejected outright (`InputError`) has no envelope, only the message.
    return {"status": "failed", "code": "invalid_input", "error": data.get("error")}


@dataclass(kw_only=True)
class TurnStream:
    """Renders one turn's events into ops against the turn's container element."""

    renderer: Renderer
    container: str
    turn: int = field(default_factory=lambda: secrets.randbits(_ID_BITS))
    cells: dict[str | None, str] = field(default_factory=dict[str | None, str])
    last_cell: str | None = None
    drafts: int = 0
    draft_text: list[str] | None = None
    """The open draft's text in pieces (joined once, when the draft closes)."""
    draft_filter: DraftFilter = field(default_factory=DraftFilter)
    """What of the draft the page may show: directives become placeholders (`_draft`)."""
    draft_markdown: DraftMarkdown = field(
        default_factory=lambda: DraftMarkdown(draft="", render=render_markdown)
    )
    """The draft's text as Markdown blocks and a tail (`_draft_markdown`)."""
    finished: set[str] = field(default_factory=set[str])
    work: str | None = None
    """The open disclosure the turn's current cells go into."""
    work_cells: int = 0
    work_failed: bool = False
    work_started: float = 0.0
    started: dict[str, float] = field(default_factory=dict[str, float])
    runs: set[str] = field(default_factory=set[str])
    """The sub-agent runs with a row on the page (shown before the turn, or added by it)."""
    work_runs: int = 0
    last_work: str | None = None

    def ops(self, data: Mapping[str, Any]) -> list[Op]:
        """The page operations for one event (its `to_dict()` data)."""
        kind = data.get("type")
        if kind == "text_delta":
            return self._text(str(data.get("text", data.get("delta", ""))))
        if kind == "cell_started":
            return self._cell_started(data)
        if kind == "cell_output":
            return self._cell_output(data)
        if kind == "cell_finished":
            return self._cell_finished(data)
        if kind == "reply":
            return self._reply(data)
        if kind == "approval_requested":
            return self._approval_requested(data)
        if kind == "approval_decided":
            html = fragment("decided", value=data)
            target = f"approval-{data.get('approvalId')}-controls"
            return [{"op": "replace", "target": target, "html": html}]
        if kind == "error":
            html = fragment("error", value=data)
            return [{"op": "append", "target": self.container, "html": html}]
        if kind == SUBAGENT_EVENT:
            return self._subagent_run(data)
        if kind == "turn_stopped":
            return self._stopped()
        if kind == "turn_finished" and data.get("state") == "waiting_approval":
            return self._fold_work("Waiting for approval", fold=False)
        return []

    def _fold_work(self, verb: str = "Worked for", *, fold: bool = True) -> list[Op]:
        """The turn's cells so far: their disclosure folds, its summary says what was done."""
        if self.work is None:
            return []
        work, self.work = self.work, None
        fold = fold and not self.work_failed  # a failure stays in view
        seconds = time.monotonic() - self.work_started
        count = f"{self.work_cells} cell{'s' if self.work_cells != 1 else ''}"
        if self.work_runs:
            count += f" · {self.work_runs} sub-agent{'s' if self.work_runs != 1 else ''}"
        summary = (
            f"{verb} {seconds:.1f} s · {count}"
            if verb != "Waiting for approval"
            else (f"{verb} · {count}")
        )
        op: Op = {"op": "fold", "target": f"{work}-summary", "text": summary}
        return [op if fold else {**op, "keepOpen": True}]

    def _stopped(self) -> list[Op]:
        """The turn was cancelled: the text so far stays, running cells say they stopped."""
        ops = self._close_draft()
        for cell in self.cells.values():
            if cell not in self.finished:
                html = fragment("status", id=cell, value={"status": "stopped"})
                ops.append({"op": "replace", "target": f"{cell}-status", "html": html})
        ops += self._fold_work("Stopped after", fold=False)  # what was cut off stays in view
        html = fragment("stopped")
        return [*ops, {"op": "append", "target": self.container, "html": html}]

    @property
    def _draft(self) -> str:
        return f"turn-{self.turn}-draft-{self.drafts}"

    def _text(self, text: str) -> list[Op]:
        ops: list[Op] = self._fold_work()
        if self.draft_text is None:
            self.drafts += 1
            self.draft_text, self.draft_filter = [], DraftFilter()
            self.draft_markdown = DraftMarkdown(draft=self._draft, render=render_markdown)
            ops.append({"op": "append", "target": self.container,
                        "html": fragment("draft", id=self._draft)})  # fmt: skip
        self.draft_text.append(text)
        shown: list[str] = []  # the text between placeholders, fed to the Markdown at once
        for piece in [*self.draft_filter.feed(text), None]:
            if isinstance(piece, str):
                shown.append(piece)
                continue
            ops += self.draft_markdown.feed("".join(shown))
            shown = []
            if isinstance(piece, Placeholder):
                ops += self.draft_markdown.block(fragment("draft_directive", value=piece))
        return ops

    def _close_draft(self) -> list[Op]:
        """Text the model wrote before a cell stays, rendered like the history shows it."""
        if self.draft_text is None:
            return []
        text, self.draft_text = "".join(self.draft_text), None
        return self._in_place_of_draft(self.renderer.reply_text(text))

    def _in_place_of_draft(self, message: MessageView) -> list[Op]:
        """The rendered message before the draft, the draft removed, then long Markdown's
        later parts a part per op (the page lays out a bounded slice a frame; were the draft
        removed last, every part that then came into view would be laid out at once)."""
        draft = self._draft
        if not message.items:
            return [{"op": "remove", "target": draft}]
        shell, parts = _deferred_parts(message, draft)
        html = fragment("message", value=shell)
        return [{"op": "before", "target": draft, "html": html},
                {"op": "remove", "target": draft}, *parts]  # fmt: skip

    def _cell_started(self, data: Mapping[str, Any]) -> list[Op]:
        ops = self._close_draft()
        cell = f"cell-{self.turn}-{len(self.cells) + 1}"
        self.cells[_cell_key(data)] = cell
        self.last_cell = cell
        self.started[cell] = time.monotonic()
        if self.work is None:  # the first cell since text: a new "worked for" disclosure
            self.work = f"turn-{self.turn}-work-{len(self.cells)}"
            self.work_cells, self.work_started, self.work_runs = 0, time.monotonic(), 0
            self.last_work = self.work
            self.work_failed = False
            html = fragment("work", id=self.work)
            ops.append({"op": "append", "target": self.container, "html": html})
        self.work_cells += 1
        html = fragment("cell", id=cell, value=data)
        return [*ops, {"op": "append", "target": f"{self.work}-cells", "html": html}]

    def _cell_for(self, data: Mapping[str, Any]) -> str | None:
        return self.cells.get(_cell_key(data), self.last_cell)

    def _cell_output(self, data: Mapping[str, Any]) -> list[Op]:
        cell = self._cell_for(data)
        if cell is None:
            return []
        html = fragment("output", value=data.get("item"))
        return [{"op": "append", "target": f"{cell}-output", "html": html}]

    def _cell_finished(self, data: Mapping[str, Any]) -> list[Op]:
        cell = self._cell_for(data)
        if cell is None:
            return []
        self.finished.add(cell)
        envelope = _envelope_of(data)
        html = fragment("result", id=cell, value=envelope)
        seconds = time.monotonic() - self.started.get(cell, time.monotonic())
        ops: list[Op] = [
            {"op": "replace", "target": f"{cell}-result", "html": html},
            {"op": "replace", "target": f"{cell}-status",
             "html": fragment("status", id=cell, value=envelope)},
            {"op": "text", "target": f"{cell}-time", "text": f"{seconds:.1f} s"},
        ]  # fmt: skip
        if envelope.get("status") == "completed":
            ops.append({"op": "fold", "target": cell})
        self.work_failed = self.work_failed or envelope.get("status") == "failed"
        if isinstance(envelope.get("output"), list):
            outputs = fragment("outputs", id=cell, value=envelope)
            ops.append({"op": "replace", "target": f"{cell}-output", "html": outputs})
        return ops

    def _subagent_run(self, data: Mapping[str, Any]) -> list[Op]:
        """A run started or changed: its row joins the turn's work group, or is redrawn."""
        if not isinstance(data.get("run"), Mapping):
            return []
        row = subagent_view(data).items[0]
        html = fragment("subagent", value=row)
        run_id = getattr(row, "run_id", "")
        if run_id in self.runs:
            return [{"op": "replace", "target": f"subagent-{run_id}", "html": html}]
        self.runs.add(run_id)
        work = self.work or self.last_work  # a run that outlives its cell joins that group
        if work is None:
            return [{"op": "append", "target": self.container, "html": html}]
        if work == self.work:
            self.work_runs += 1
        return [{"op": "append", "target": f"{work}-cells", "html": html}]

    def _approval_requested(self, data: Mapping[str, Any]) -> list[Op]:
        cell = self._cell_for(data)
        target = f"{cell}-approvals" if cell is not None else self.container
        html = fragment("approval", value=data.get("approval"), run_id=data.get("runId"))
        return [{"op": "append", "target": target, "html": html}]

    def _reply(self, data: Mapping[str, Any]) -> list[Op]:
        ops: list[Op] = self._fold_work()
        streamed, self.draft_text = self.draft_text is not None, None
        if data.get("isSilent") is True:  # a silent reply (`NO_REPLY`) shows nothing, as in history
            return [*ops, {"op": "remove", "target": self._draft}] if streamed else ops
        text = data.get("text")
        message = (
            self.renderer.reply_text(text)
            if isinstance(text, str)
            else self.renderer.message({"role": "assistant", "content": data.get("content", [])})
        )
        if streamed:  # the streamed reply itself: the rendered one takes the draft's place
            return [*ops, *self._in_place_of_draft(message)]
        html = fragment("message", value=message)
        ops.append({"op": "append", "target": self.container, "html": html})
        return ops


def _deferred_parts(message: MessageView, prefix: str) -> tuple[MessageView, list[Op]]:
    """`message` with only the first part of each long Markdown item, and the ops that append
    the other parts to that item's element (`<prefix>-md-<index>`)."""
    items: list[ItemView] = []
    ops: list[Op] = []
    for index, item in enumerate(message.items):
        if not isinstance(item, HtmlView) or len(item.parts) < 2:
            items.append(item)
            continue
        target = f"{prefix}-md-{index}"
        items.append(replace(item, html=join_parts(item.parts[:1], wrap=True), id=target))
        for part in item.parts[1:]:
            ops.append({"op": "append", "target": target, "html": join_parts((part,), wrap=True)})
    return replace(message, items=tuple(items)), ops


def _batches(ops: list[Op]) -> list[list[Op]]:
    """`ops` in runs of about `_BATCH_HTML` characters of HTML (always at least one run)."""
    batches: list[list[Op]] = [[]]
    size = 0
    for op in ops:
        if batches[-1] and size + len(op.get("html", "")) > _BATCH_HTML:
            batches.append([])
            size = 0
        batches[-1].append(op)
        size += len(op.get("html", ""))
    return batches


async def _as_dicts(events: AsyncIterator[AgentEvent]) -> AsyncIterator[dict[str, Any]]:
    """Each event's data; closing this closes `events` (the agent then cancels its cell)."""
    try:
        async for event in events:
            yield event.to_dict()
    finally:
        if isinstance(events, AsyncGenerator):
            await cast(AsyncGenerator[AgentEvent, None], events).aclose()


async def stream_turn(
    events: AsyncIterator[AgentEvent],
    stream: TurnStream,
    stop: asyncio.Event | None = None,
    watch: RunWatch | None = None,
) -> AsyncIterator[str]:
    """SSE messages for a turn's events (text deltas coalesced, see `_coalesce`); an exception
    becomes a final `error` message. Setting `stop` cancels the turn (`turn_stopped`). With
    `watch`, the session's sub-agent runs go out as `subagent_run` events as they start and
    change, before each `cell_finished`, and once more as the turn ends."""
    reported = False
    if watch is not None:
        stream.runs |= await watch.start()
    try:
        side = watch.events() if watch is not None else None
        coalesced_events = coalesce_deltas(_as_dicts(events), stop=stop, side=side)
        async with contextlib.aclosing(coalesced_events) as coalesced:
            async for data in coalesced:
                kind = str(data.get("type"))
                reported = reported or kind == "error"
                if watch is not None and kind == "cell_finished":  # its runs' news first
                    for change in await watch.changes():
                        yield sse_message(SUBAGENT_EVENT, {"event": change,
                                                           "ops": stream.ops(change)})  # fmt: skip
                first, *rest = _batches(stream.ops(data))
                if watch is not None and kind == SUBAGENT_EVENT:  # a polled change, delivered
                    watch.sent(data)
                yield sse_message(kind, {"event": data, "ops": first})
                for ops in rest:  # a long reply's later parts: the page applies them in turn
                    yield sse_message("render", {"ops": ops})
    except Exception as exc:  # the page must learn the turn broke; the server stays up
        if not reported:  # an agent raises its typed error right after its `error` event
            data = {"type": "error", "message": f"{type(exc).__name__}: {exc}"}
            data["code"] = getattr(exc, "code", "error")
            yield sse_message("error", {"event": data, "ops": stream.ops(data)})
    if watch is not None:
        for data in await watch.changes():
            yield sse_message(SUBAGENT_EVENT, {"event": data, "ops": stream.ops(data)})
    yield sse_message("done", {"event": {"type": "done"}, "ops": []})
