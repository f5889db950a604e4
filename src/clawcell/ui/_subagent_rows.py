"""Sub-agent runs in the chat view: a collapsed row in the parent's turn that opens the child
session.

The runs come from their records in the agent's store (`clawcell.agent.subagent_runs`), so a
reloaded page, or one served by another process, shows them too. `with_subagent_runs(page,
runs)` puts each run into the projected page as a `subagentRun` message right after the first
cell result stamped at or after the run's start (the cell that spawned it ended then; a run
whose cell has not ended yet goes last); `Renderer.messages` turns that message into a
`SubagentRowView` inside the turn's work group. Runs that started before the page's first
message belong to an older page and are left out; that page, loaded on scroll, shows them.
The row shows the status, the profile and label, and a link to the child session; opened, the
task and the reply (or the error), cut to `EXCERPT_CHARS`.

While a turn streams, a `RunWatch` reads the same records every `WATCH_INTERVAL_S` and turns
each new or changed run into a `subagent_run` event (`{"type": "subagent_run", "run": {…}}`,
the run as `subagent_runs` gives it, camelCase); `TurnStream` appends a new run's row to the
turn's work group and replaces a known one, so rows appear and change as the runs do.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, Final, cast
from urllib.parse import quote

from ..store import EntryStore, cancel_requested
from ._protocol import agent_store
from ._render._views import MessageView, SubagentRowView

__all__ = [
    "CHILD_SESSION_ID",
    "SUBAGENT_EVENT",
    "SUBAGENT_ROLE",
    "WATCH_INTERVAL_S",
    "RunWatch",
    "parent_of",
    "stored_runs",
    "subagent_view",
    "with_subagent_runs",
]

SUBAGENT_ROLE: Final = "subagentRun"
SUBAGENT_EVENT: Final = "subagent_run"
"""The stream event of a run that started or changed while its parent's turn streams."""
WATCH_INTERVAL_S: Final = 0.5
"""How often a streaming turn re-reads its session's run records."""
EXCERPT_CHARS: Final = 600
CHILD_SESSION_ID: Final = re.compile(r"(?s).+?(?:/sub/[0-9]{1,9}){1,5}")
"""A sub-agent's session id (`<parent>/sub/<n>`, nested at most five deep): the chat page
shows it read-only and takes no turn for it."""
_CELL_TOOLS: Final = frozenset({"exec", "wait"})


def parent_of(session_id: str) -> str:
    """The session a child session's run was spawned from."""
    return session_id.rsplit("/sub/", 1)[0]


async def stored_runs(agent: object, session_id: str) -> list[dict[str, Any]]:
    """The runs `session_id` started, when the agent keeps them in a store (else none)."""
    store = agent_store(agent)
    if not isinstance(store, EntryStore):
        return []
    from ..agent import subagent_runs

    return await subagent_runs(store, session_id)


class RunWatch:
    """The runs of one session while a turn of it streams: `start` notes the runs already
    there, `changes` the `subagent_run` events of runs new or changed since, `events` polls."""

    def __init__(self, agent: object, session_id: str) -> None:
        self._agent, self._session_id = agent, session_id
        self._seen: dict[str, str] = {}
        """What the polling side last handed on, per run (it may be dropped on the way: a
        turn that ends closes the side stream with events still queued)."""
        self._sent: dict[str, str] = {}
        """What the page was actually sent, per run (`sent`): `changes` compares with it."""

    async def start(self) -> set[str]:
        """The ids of the runs already recorded (the page may show them)."""
        runs = await stored_runs(self._agent, self._session_id)
        self._seen = {str(run["runId"]): _fingerprint(run) for run in runs}
        self._sent = dict(self._seen)
        return set(self._seen)

    def sent(self, event: Mapping[str, Any]) -> None:
        """Note that a `subagent_run` event reached the page."""
        run = event.get("run")
        if isinstance(run, Mapping):
            run = cast(Mapping[str, Any], run)
            self._sent[str(run.get("runId"))] = _fingerprint(run)

    async def changes(self) -> list[dict[str, Any]]:
        """A `subagent_run` event for each run that is new or changed since the page was last
        sent it (whatever the polling side saw meanwhile)."""
        events: list[dict[str, Any]] = []
        for run in await stored_runs(self._agent, self._session_id):
            run_id, fingerprint = str(run["runId"]), _fingerprint(run)
            if self._sent.get(run_id) != fingerprint:
                self._seen[run_id] = self._sent[run_id] = fingerprint
                events.append({"type": SUBAGENT_EVENT, "run": run})
        return events

    async def events(self, interval: float = WATCH_INTERVAL_S) -> AsyncGenerator[dict[str, Any]]:
        """New or changed runs, looked at every `interval` seconds, until closed."""
        while not cancel_requested():  # a store read may have swallowed the cancellation
            await asyncio.sleep(interval)
            for run in await stored_runs(self._agent, self._session_id):
                run_id, fingerprint = str(run["runId"]), _fingerprint(run)
                if self._seen.get(run_id) != fingerprint:
                    self._seen[run_id] = fingerprint
                    yield {"type": SUBAGENT_EVENT, "run": run}


def _fingerprint(run: Mapping[str, Any]) -> str:
    return json.dumps(run, sort_keys=True, default=str)


def with_subagent_runs(
    page: Sequence[Mapping[str, Any]],
    runs: Sequence[Mapping[str, Any]],
    *,
    until: float | None = None,
) -> list[Mapping[str, Any]]:
    """`page` with a `subagentRun` message for each run it covers, placed in its turn; an
    older page (`until`: the newer page's first stamp, ms) leaves the runs from then on to it."""
    first = next((_stamp(m) for m in page if _stamp(m) is not None), None)
    placed: dict[int, list[Mapping[str, Any]]] = {}
    for run in runs:
        started = float(run.get("startedAt", 0.0)) * 1000
        if (first is not None and started < first) or (until is not None and started >= until):
            continue
        at = next(
            (
                i
                for i, m in enumerate(page)
                if m.get("role") == "toolResult"
                and m.get("toolName") in _CELL_TOOLS
                and (_stamp(m) or 0) >= started
            ),
            len(page) - 1,
        )
        placed.setdefault(at, []).append({"role": SUBAGENT_ROLE, "run": run})
    out: list[Mapping[str, Any]] = []
    for index, message in enumerate(page):
        out += [message, *placed.get(index, [])]
    return out if page else [m for ms in placed.values() for m in ms]


def subagent_view(message: Mapping[str, Any]) -> MessageView:
    """A `subagentRun` message as a cell-group row (grouped with the turn's cells)."""
    run = cast(Mapping[str, Any], message["run"])
    session_id = str(run["sessionId"])
    status = "interrupted" if run.get("interrupted") else str(run["status"])
    row = SubagentRowView(
        run_id=str(run["runId"]),
        session_id=session_id,
        href="/?session=" + quote(session_id, safe=""),
        profile=str(run["profile"]),
        label=_optional(run.get("label")),
        status=cast(Any, status),
        task=_excerpt(run.get("task")) or "",
        reply=_excerpt(run.get("reply")),
        error=_excerpt(run.get("error")),
    )
    return MessageView(role="cell", items=(row,))


def _stamp(message: Mapping[str, Any]) -> float | None:
    value = message.get("timestamp")
    return float(value) if isinstance(value, int | float) else None


def _optional(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _excerpt(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value if len(value) <= EXCERPT_CHARS else value[:EXCERPT_CHARS] + "…"
