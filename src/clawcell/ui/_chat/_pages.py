"""The chat's pages: the chat page itself, older history on scroll, the projected history and
the session list as JSON.

A page shows the transcript a page at a time: with an agent that gives its raw transcript
(`TranscriptAgent`), only the page is projected for display (so a long session's page costs
what a short one's does) and delivery facts are kept; otherwise `ChatAgent.history` is shown
whole. A turn running while the page is drawn is drawn from its backlog (`_turns`), and one
streaming on another worker shows what it has stored so far.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..._lazy import value_class
from ...reply import project_chat_display_messages
from .._approvals import with_pending
from .._attachments import Uploads
from .._protocol import ChatAgent, SessionSummary, SharedTurnsAgent, TranscriptAgent
from .._render._messages import Renderer, grouped, with_delivery_facts
from .._responses import bad_request
from .._sessions._paths import bad_session, path_session, session_problem
from .._sessions._routes import SessionList
from .._subagent_rows import CHILD_SESSION_ID, parent_of, stored_runs, with_subagent_runs
from .._templates import fragment
from ._turns import TurnRegistry

__all__ = ["ChatPages", "Transcripts"]

PAGE_MESSAGES: Final = 100
"""History messages a chat page renders at first, and per page loaded on scroll up."""
SESSION_LIST: Final = 50
"""Sessions the chat page lists (the most recent); the search box finds the others."""
MAX_FOUND: Final = 2_000
"""Messages a page opened at a search hit renders at most (from the hit to the latest)."""
MAX_DISPLAY_CHARS: Final = 4_000_000
"""History shows messages whole up to this size (long ones fold behind "Show more")."""

PageRenderer = Callable[..., HTMLResponse]
"""Renders a template as a page: `(request, name, **context)`."""


class Transcripts:
    """A session's stored messages as the chat reads them: raw when the agent gives them
    (`TranscriptAgent`), else its projected `history`."""

    def __init__(self, agent: ChatAgent) -> None:
        self.agent = agent
        self.raw = agent if isinstance(agent, TranscriptAgent) else None

    async def stored(self, session_id: str) -> list[dict[str, Any]]:
        reader = self.raw.transcript if self.raw is not None else self.agent.history
        return await reader(session_id)

    async def count(self, session_id: str) -> int:
        """How many messages the session's transcript holds."""
        return len(await self.stored(session_id))

    async def stamp_at(self, session_id: str, index: int) -> float | None:
        """The timestamp (ms) of stored message `index`, when there is one: where the newer
        page begins."""
        stored = await self.stored(session_id)
        stamp = stored[index].get("timestamp") if index < len(stored) else None
        return float(stamp) if isinstance(stamp, int | float) else None

    async def page(
        self, session_id: str, before: int | None, since: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Up to `PAGE_MESSAGES` stored messages before index `before` (the latest when
        `None`), projected for display, and the index they start at; from index `since` (a
        search hit the page opens at, its first message) up to `MAX_FOUND` messages back."""
        stored = await self.stored(session_id)
        end = len(stored) if before is None else min(before, len(stored))
        start = max(0, end - PAGE_MESSAGES)
        if since is not None and since < end:
            start = max(since, end - MAX_FOUND)
        page = stored[start:end]
        if self.raw is not None:
            page = _projected(page)
        return page, start

    async def history(self, session_id: str) -> list[dict[str, Any]]:
        """The projected history, with delivery facts kept when the raw transcript is there."""
        stored = await self.stored(session_id)
        return _projected(stored) if self.raw is not None else stored


def _projected(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return project_chat_display_messages(with_delivery_facts(stored), max_chars=MAX_DISPLAY_CHARS)


@value_class
class ChatPages:
    """The chat page and the history routes, over the agent, its turns and the drawer."""

    agent: ChatAgent
    transcripts: Transcripts
    turns: TurnRegistry
    sessions: SessionList
    uploads: Uploads
    renderer: Callable[[Request], Renderer]
    page: PageRenderer

    async def _listed(self) -> tuple[list[Any], int | str]:
        """The drawer's first page of sessions, and how many more there are (a count) or the
        cursor of the next page (with the store's session list)."""
        if self.sessions.directory is not None:
            page = await self.sessions.directory.session_page(limit=SESSION_LIST)
            return list(page.sessions), page.next or 0
        sessions = list(await self.agent.sessions())
        listed = _bounded(sessions, "", SESSION_LIST)
        return listed, len(sessions) - len(listed)

    async def chat(self, request: Request) -> Response:
        listed, more = await self._listed()
        default = listed[0].session_id if listed else "main"
        session_id = request.query_params.get("session", default)
        if session_problem(session_id) is not None:
            return bad_session(session_id)
        at = request.query_params.get("at", "")
        found = int(at) if at.isdigit() else None
        record = None
        if self.sessions.directory is not None:
            record = await self.sessions.directory.session_record(session_id)
        child = CHILD_SESSION_ID.fullmatch(session_id) is not None  # a sub-agent's: read-only
        running = await self.turns.current(session_id)  # drawn from its backlog, live
        if running is not None:
            await running.indexed.wait()
        end = running.history_index if running is not None else None
        page, start = await self.transcripts.page(session_id, end, found)  # older on scroll
        if running is None and (streamed := await _partial_reply(self.agent, session_id)):
            # a turn streams on another worker: what it has stored so far
            page = [*page, {"role": "assistant", "content": [{"type": "text", "text": streamed}]}]
        page = with_subagent_runs(page, await stored_runs(self.agent, session_id))
        renderer = dataclasses.replace(self.renderer(request), session_id=session_id)
        messages = renderer.messages(page)
        messages = await with_pending(messages, lambda: self.agent.mode(session_id))
        messages = grouped(messages)
        return self.page(
            request,
            "chat.html",
            page="chat",
            older=start,
            sessions=listed,
            more_sessions=more if isinstance(more, int) else 0,
            next_sessions=more if isinstance(more, str) else "",
            titled=self.sessions.directory is not None,
            found=found is not None and found == start,
            session_id=session_id,
            session_title=record.title if record is not None and record.title else session_id,
            parent_session=parent_of(session_id) if child else None,
            messages=messages,
            live_turn=running.turn_id if running is not None else "",
            queue=await self.turns.queue(session_id),
            attach=self.uploads.page_caps() if self.uploads.enabled and not child else None,
        )

    async def older(self, request: Request) -> Response:
        """`GET …/messages?before=N`: the page of history before message N, as HTML."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        before = request.query_params.get("before", "")
        if not before.isdigit():
            return bad_request(f"`before` must be a message index, got {before!r:.40}.")
        page, start = await self.transcripts.page(session_id, int(before))
        runs = await stored_runs(self.agent, session_id)
        until = await self.transcripts.stamp_at(session_id, int(before))
        page = with_subagent_runs(page, runs, until=until)
        views = grouped(self.renderer(request).messages(page))
        html = "".join(fragment("message", value=view) for view in views)
        return JSONResponse({"html": html, "before": start})

    async def list_sessions(self, request: Request) -> Response:
        """`GET /api/sessions[?q=<text>][&limit=<n>]`: the sessions, most recent first; `q`
        keeps those whose id contains it (case-folded), `limit` (1–1,000) bounds the list."""
        sessions = list(await self.agent.sessions())
        query, limit = request.query_params.get("q", ""), request.query_params.get("limit")
        if limit is not None and not (limit.isdigit() and 1 <= int(limit) <= 1_000):
            return bad_request(f"`limit` must be a count from 1 to 1000, got {limit!r:.40}.")
        if query or limit is not None:
            sessions = _bounded(sessions, query, int(limit or 1_000))
        return JSONResponse(
            [{"sessionId": s.session_id, "updatedAt": s.updated_at} for s in sessions]
        )

    async def history(self, request: Request) -> Response:
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        return JSONResponse(await self.transcripts.history(session_id))

    def routes(self) -> list[Route]:
        return [
            Route("/", self.chat, methods=["GET"]),
            Route("/api/sessions", self.list_sessions, methods=["GET"]),
            Route("/api/sessions/{session}/history", self.history, methods=["GET"]),
            Route("/api/sessions/{session}/messages", self.older, methods=["GET"]),
        ]


async def _partial_reply(agent: ChatAgent, session_id: str) -> str | None:
    """What the session's running turn on another worker has streamed so far."""
    return await agent.partial_reply(session_id) if isinstance(agent, SharedTurnsAgent) else None


def _bounded(sessions: list[SessionSummary], query: str, limit: int) -> list[SessionSummary]:
    """At most `limit` sessions whose id contains `query` (case-folded), in their order."""
    needle = query.casefold()
    return [s for s in sessions if needle in s.session_id.casefold()][:limit]
