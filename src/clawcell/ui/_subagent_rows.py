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
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast
from urllib.parse import quote

from ..store import EntryStore
from ._views import MessageView, SubagentRowView

__all__ = [
    "CHILD_SESSION_ID",
    "SUBAGENT_ROLE",
    "parent_of",
    "stored_runs",
    "subagent_view",
    "with_subagent_runs",
]

SUBAGENT_ROLE: Final = "subagentRun"
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
    store = getattr(agent, "store", None)
    if not isinstance(store, EntryStore):
        return []
    from ..agent import subagent_runs

    return await subagent_runs(store, session_id)


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
