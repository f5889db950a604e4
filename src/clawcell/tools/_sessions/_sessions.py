"""`sessions(agent)`: tools over the agent's own sessions - list, history, search, send, status.

Every tool acts for the session of the Code Mode run that calls it (`call_session`) and is
held to a `SessionVisibility` on the host. Transcripts are read from the agent's store, so
every backend works; `sessions_search` uses the store's own full-text search when it has one
(`TranscriptSearch`) and a bounded scan otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, cast, runtime_checkable

from ...catalog import Tool, call_session
from ...errors import ToolError
from ...store import transcript_text
from ._sessions_contract import (
    HISTORY_INPUT,
    HISTORY_OUTPUT,
    LIST_INPUT,
    LIST_OUTPUT,
    SEARCH_INPUT,
    SEARCH_OUTPUT,
    SEND_INPUT,
    SEND_OUTPUT,
    STATUS_INPUT,
    STATUS_OUTPUT,
)  # fmt: skip
from ._sessions_policy import SessionVisibility, check_text
from ._sessions_search import search_transcripts
from ._sessions_sends import SendLedger, SendLimits, current_turn, sender_mark

if TYPE_CHECKING:
    from ...store import SessionInfo, SessionStore

__all__ = ["AgentSlot", "bind_agent", "sessions"]

_TITLE_CHARS: Final = 80
_START_WAIT: Final = 5.0


def message_text(entry: Mapping[str, Any]) -> str:
    """The text blocks of a transcript entry, one per line (`clawcell.store.transcript_text`)."""
    return transcript_text(entry)


@runtime_checkable
class SessionHost(Protocol):
    """What the session tools use of a `clawcell.agent.Agent` (which satisfies it)."""

    @property
    def store(self) -> SessionStore:
        """The store holding transcripts."""
        ...

    @property
    def model(self) -> Any:
        """The model (its `name` is reported)."""
        ...

    def mode(self, session_id: str) -> Any:
        """The session's `CodeMode` (its `pending_approvals(run_id)` is read)."""
        ...

    def run(
        self, session_id: str, text: str, *, sender: Mapping[str, Any] | None = None
    ) -> AsyncGenerator[Any, None]:
        """Run one turn (its message marked with `sender`); yields events with a `turn_id`."""
        ...

    async def transcript(self, session_id: str) -> list[dict[str, Any]]:
        """The stored transcript."""
        ...

    async def sessions(self) -> list[SessionInfo]:
        """Sessions with a transcript, most recent first."""
        ...


class AgentSlot:
    """The agent of session tools built before it (`from_config`); `bind_agent` fills it."""

    def __init__(self) -> None:
        self.agent: SessionHost | None = None

    def __call__(self) -> SessionHost:
        if self.agent is None:
            raise ToolError(
                "These session tools are not bound to an agent yet: call "
                "`clawcell.tools.bind_agent(tools, agent)` once the agent exists.",
                code="unbound_session_tools",
            )
        return self.agent


def bind_agent(tools: Sequence[Tool], agent: SessionHost) -> None:
    """Bind the session tools among `tools` that were built without an agent to `agent`."""
    for tool in tools:
        owner = getattr(tool.execute, "__self__", None)
        if isinstance(owner, _SessionTools) and isinstance(owner.source, AgentSlot):
            owner.source.agent = agent


def _iso(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat()


class _SessionTools:
    def __init__(
        self,
        agent: SessionHost | Callable[[], SessionHost],
        visibility: SessionVisibility,
        limits: SendLimits,
    ) -> None:
        self._agent = agent
        self.visibility = visibility
        self.ledger = SendLedger(limits)
        self.turns: set[asyncio.Task[None]] = set()

    @property
    def source(self) -> SessionHost | Callable[[], SessionHost]:
        return self._agent

    @property
    def agent(self) -> SessionHost:
        found = self._agent
        return found if isinstance(found, SessionHost) else found()

    @staticmethod
    def caller() -> str:
        return call_session.get() or "default"

    async def list(self, params: dict[str, Any]) -> dict[str, Any]:
        caller = self.caller()
        visible = [
            info for info in await self.agent.sessions()
            if self.visibility.may_see(caller, info.session_id)
        ]  # fmt: skip
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", 20))
        page = visible[offset : offset + limit]
        rows: list[dict[str, Any]] = []
        for info in page:
            transcript = await self.agent.transcript(info.session_id)
            first = next((m for m in transcript if m.get("role") == "user"), None)
            title = " ".join(message_text(first).split())[:_TITLE_CHARS] if first else ""
            runs = await self.agent.store.list_runs(info.session_id)
            rows.append(
                {"sessionId": info.session_id, "title": title, "updatedAt": _iso(info.updated_at),
                 "messages": info.entries, "parkedRuns": len(runs),
                 "current": info.session_id == caller}
            )  # fmt: skip
        result: dict[str, Any] = {"sessions": rows, "total": len(visible)}
        if offset + limit < len(visible):
            result["nextOffset"] = offset + limit
        return result

    async def history(self, params: dict[str, Any]) -> dict[str, Any]:
        target = check_text("sessionId", str(params["sessionId"]), session_id=True)
        self.visibility.check_see(self.caller(), target)
        transcript = await self.agent.transcript(target)
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", 50))
        cap = int(params.get("maxChars", 2000))
        messages: list[dict[str, Any]] = []
        for index, entry in enumerate(transcript[offset : offset + limit], start=offset):
            text = message_text(entry)
            row: dict[str, Any] = {
                "index": index,
                "role": str(entry.get("role", "")),
                "text": text[:cap],
                "truncated": len(text) > cap,
            }
            for key, name in (("toolName", "toolName"), ("turnId", "turnId")):
                if isinstance(entry.get(key), str):
                    row[name] = entry[key]
            messages.append(row)
        result: dict[str, Any] = {"sessionId": target, "messages": messages,
                                  "total": len(transcript)}  # fmt: skip
        if offset + limit < len(transcript):
            result["nextOffset"] = offset + limit
        return result

    async def search(self, params: dict[str, Any]) -> dict[str, Any]:
        caller = self.caller()
        limit = int(params.get("limit", 20))
        hits, engine, cut = await search_transcripts(
            self.agent.store,
            check_text("query", str(params["query"])),
            visible=lambda session_id: self.visibility.may_see(caller, session_id),
            limit=limit,
            text_of=message_text,
        )
        return {"results": hits, "engine": engine, "truncated": cut}

    async def send(self, params: dict[str, Any]) -> dict[str, Any]:
        caller = self.caller()
        target = check_text("sessionId", str(params["sessionId"]), session_id=True)
        check_text("text", str(params["text"]))
        if not self.visibility.may_send(caller, target):
            reason = "its own session" if target == caller else f"session {target!r}"
            raise ToolError(
                f"This session may not send to {reason}; `SessionVisibility.send` decides "
                "which sessions it may post to (never itself).",
                code="session_not_allowed",
            )
        agent = self.agent
        turn = current_turn(await agent.transcript(caller))
        await self.ledger.admit(agent.store, caller, turn, target)
        started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = asyncio.get_running_loop().create_task(
            self._turn(target, str(params["text"]), sender_mark(caller, turn), started)
        )
        self.turns.add(task)
        task.add_done_callback(self.turns.discard)
        try:
            turn_id = await asyncio.wait_for(asyncio.shield(started), _START_WAIT)
        except TimeoutError:
            return {"sessionId": target, "status": "queued"}
        return {"sessionId": target, "status": "started", "turnId": turn_id}

    async def _turn(
        self, target: str, text: str, sender: dict[str, Any], started: asyncio.Future[str]
    ) -> None:
        try:
            async with contextlib.aclosing(self.agent.run(target, text, sender=sender)) as events:
                async for event in events:
                    turn_id = getattr(event, "turn_id", None)
                    if isinstance(turn_id, str) and not started.done():
                        started.set_result(turn_id)
        except Exception as exc:  # the turn's own error events are in its transcript
            if not started.done():
                started.set_exception(
                    ToolError(f"The turn in {target!r} did not start: {exc}", code="send_failed")
                )

    async def status(self, params: dict[str, Any]) -> dict[str, Any]:
        caller = self.caller()
        transcript = await self.agent.transcript(caller)
        usage = {"input": 0, "output": 0}
        for entry in transcript:
            spent = entry.get("usage")
            if isinstance(spent, Mapping):
                for key in usage:
                    value = cast(Mapping[str, Any], spent).get(key)
                    usage[key] += value if isinstance(value, int) else 0
        runs = await self.agent.store.list_runs(caller)
        mode = self.agent.mode(caller)
        pending = 0
        for run in runs:
            pending += len(await mode.pending_approvals(run.run_id))
        return {
            "sessionId": caller,
            "model": self.agent.model.name,
            "messages": len(transcript),
            "usage": usage,
            "parkedRuns": [run.run_id for run in runs],
            "pendingApprovals": pending,
        }


def sessions(
    agent: SessionHost | Callable[[], SessionHost],
    *,
    visibility: SessionVisibility | None = None,
    limits: SendLimits | None = None,
) -> list[Tool]:
    """The session tools of `agent`: `sessions_list`, `sessions_history`, `sessions_search`,
    `sessions_send` and `session_status`.

    The tools belong to the agent they are given to; since `Agent(tools=...)` needs them
    first, pass a function that returns the agent once it exists (see `docs/tools.md`).
    The readers are replay-safe; `sessions_send` is not.

    Args:
        agent: The agent whose store and sessions the tools read and drive, or a function
            returning it (called at each tool call).
        visibility: Which sessions a session may see and send to (all of the agent's by
            default), enforced on the host.
        limits: How many sends one turn and one session may make, and how deep a chain of
            sends may go (`SendLimits()` by default: 4 per turn, 30 per session per hour,
            depth 3). Forwarded messages are stored with a `sender` mark.
    """
    state = _SessionTools(agent, visibility or SessionVisibility(), limits or SendLimits())
    return [
        Tool(name="sessions_list", execute=state.list, parameters=LIST_INPUT,
             output_schema=LIST_OUTPUT, replay_safe=True,
             description="This agent's sessions you may see, most recent first (paged): id, "
             "title (first user message), last activity, message count, parked runs."),
        Tool(name="sessions_history", execute=state.history, parameters=HISTORY_INPUT,
             output_schema=HISTORY_OUTPUT, replay_safe=True,
             description="A session's transcript, paged, with bounded text per message."),
        Tool(name="sessions_search", execute=state.search, parameters=SEARCH_INPUT,
             output_schema=SEARCH_OUTPUT, replay_safe=True,
             description="Full-text search over the transcripts of the sessions you may see; "
             "hits with snippets."),
        Tool(name="sessions_send", execute=state.send, parameters=SEND_INPUT,
             output_schema=SEND_OUTPUT,
             description="Post a user message into another session and start a turn there; "
             "returns the turn's id (or `queued` while that session is busy)."),
        Tool(name="session_status", execute=state.status, parameters=STATUS_INPUT,
             output_schema=STATUS_OUTPUT, replay_safe=True,
             description="This session: model, messages, token usage so far, parked runs and "
             "pending approvals."),
    ]  # fmt: skip
