"""`create_app`: the Control UI as a Starlette ASGI application.

Pages are rendered on the server; the browser runs three small ES modules from `/static/`.
Every response passes the `Guard` (Host, token, CSRF); pages carry a strict CSP without
inline script.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..catalog import Tool
from ..reply import project_chat_display_messages
from ._approvals import with_pending
from ._attachments import Uploads
from ._canvas_host import canvas_origin, create_canvas_app
from ._chat._turn_routes import ChatTurns
from ._jobs_panel import JobsPanel
from ._mcp_apps._api import McpAppApi
from ._media import MEDIA_PATH, MediaRoots, media_route
from ._playground._routes import Playground
from ._protocol import ChatAgent, DocumentStore, SessionSummary, SharedTurnsAgent
from ._render._markdown import highlight_css
from ._render._messages import Renderer, grouped, with_delivery_facts
from ._responses import bad_request as _bad_request
from ._security import CAP_PREFIX, Guard, Secrets
from ._session_paths import SessionSegments, bad_session, path_session, session_problem
from ._session_routes import SessionList
from ._settings import UiSettings
from ._subagent_rows import (
    CHILD_SESSION_ID,
    parent_of,
    stored_runs,
    with_subagent_runs,
)
from ._surface_routes import YOUTUBE_PLAYER_ORIGIN, surface_routes
from ._templates import STATIC_DIR, fragment, render_template

__all__ = ["create_app", "page_csp"]

PAGE_MESSAGES: Final = 100
"""History messages a chat page renders at first, and per page loaded on scroll up."""
SESSION_LIST: Final = 50
"""Sessions the chat page lists (the most recent); the search box finds the others."""
MAX_FOUND: Final = 2_000
"""Messages a page opened at a search hit renders at most (from the hit to the latest)."""
MAX_DISPLAY_CHARS: Final = 4_000_000
"""History shows messages whole up to this size (long ones fold behind "Show more")."""


def page_csp(settings: UiSettings, canvas: str | None = None) -> str:
    """The Content-Security-Policy of the app's pages (no inline script, no plugins); frames
    only from the canvas host `canvas` (and any `http(s)` URL when external embeds are on)."""
    frames = f"{canvas or ''} {YOUTUBE_PLAYER_ORIGIN}".strip()  # cards play whatever the policy
    if settings.allow_external_embed_urls:
        frames = f"{canvas or ''} http: https:".strip()
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; "
        "img-src 'self' https: data:; media-src 'self' https: data:; "
        f"frame-src {frames}; connect-src 'self'; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'"
    )


class _Ui:
    """The request handlers, sharing the agent, settings and secrets."""

    def __init__(
        self,
        agent: ChatAgent,
        settings: UiSettings,
        documents: DocumentStore | None,
        automations: Tool | None,
    ) -> None:
        self.agent, self.settings, self.documents = agent, settings, documents
        self.playground = Playground(agent, self.page)
        self.jobs = JobsPanel(agent, self.page, automations)
        self.secrets = Secrets(token=settings.token)
        self.media = MediaRoots(settings.media_roots)
        self.apps = McpAppApi(agent, documents)
        self.uploads = Uploads(agent, settings, getattr(agent, "transcript", None))
        self.turns = ChatTurns(
            agent, self.renderer, self.apps, self._stored_count, uploads=self.uploads
        )
        self.sessions = SessionList(agent, self.turns.turns)

    def canvas(self, request: Request) -> str | None:
        """The canvas host's origin for this request's host name (`None` without one)."""
        return canvas_origin(self.settings, request.headers.get("host", ""))

    def renderer(self, request: Request) -> Renderer:
        origin = self.canvas(request)
        host = f"{origin}{CAP_PREFIX}{self.secrets.canvas_cap}" if origin else None
        session = path_session(request) if "session" in request.path_params else None
        return Renderer(settings=self.settings, media=self.media, canvas_host_url=host,
                        session_id=session if isinstance(session, str) else None)  # fmt: skip

    def page(self, request: Request, name: str, **context: Any) -> HTMLResponse:
        html = render_template(name, csrf=self.secrets.csrf, settings=self.settings, **context)
        csp = page_csp(self.settings, self.canvas(request))
        return HTMLResponse(html, headers={"content-security-policy": csp})

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
        running = await self.turns.turns.current(session_id)  # drawn from its backlog, live
        if running is not None:
            await running.indexed.wait()
        end = running.history_index if running is not None else None
        page, start = await self._page(session_id, end, found)  # the latest; older on scroll
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
            queue=await self.turns.turns.queue(session_id),
            attach=self.uploads.page_caps() if self.uploads.enabled and not child else None,
        )

    async def _page(
        self, session_id: str, before: int | None, since: int | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """Up to `PAGE_MESSAGES` stored messages before index `before` (the latest when
        `None`), projected for display, and the index they start at; from index `since` (a
        search hit the page opens at, its first message) up to `MAX_FOUND` messages back.
        Only the page is projected, so a long session's page costs what a short one's does."""
        transcript: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = getattr(
            self.agent, "transcript", None
        )
        stored = await (transcript or self.agent.history)(session_id)
        end = len(stored) if before is None else min(before, len(stored))
        start = max(0, end - PAGE_MESSAGES)
        if since is not None and since < end:
            start = max(since, end - MAX_FOUND)
        page = stored[start:end]
        if transcript is not None:
            page = project_chat_display_messages(
                with_delivery_facts(page), max_chars=MAX_DISPLAY_CHARS
            )
        return page, start

    async def _stored_count(self, session_id: str) -> int:
        """How many messages the session's transcript holds."""
        transcript: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = getattr(
            self.agent, "transcript", None
        )
        return len(await (transcript or self.agent.history)(session_id))

    async def _stamp_at(self, session_id: str, index: int) -> float | None:
        """The timestamp (ms) of stored message `index`, when there is one: where the newer
        page begins."""
        transcript: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = getattr(
            self.agent, "transcript", None
        )
        stored = await (transcript or self.agent.history)(session_id)
        stamp = stored[index].get("timestamp") if index < len(stored) else None
        return float(stamp) if isinstance(stamp, int | float) else None

    async def _history(self, session_id: str) -> list[dict[str, Any]]:
        """The projected history, with delivery facts kept when the raw transcript is there."""
        transcript: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = getattr(
            self.agent, "transcript", None
        )
        if transcript is None:
            return await self.agent.history(session_id)
        stored = await transcript(session_id)
        return project_chat_display_messages(
            with_delivery_facts(stored), max_chars=MAX_DISPLAY_CHARS
        )

    async def older(self, request: Request) -> Response:
        """`GET …/messages?before=N`: the page of history before message N, as HTML."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        before = request.query_params.get("before", "")
        if not before.isdigit():
            return _bad_request(f"`before` must be a message index, got {before!r:.40}.")
        page, start = await self._page(session_id, int(before))
        runs = await stored_runs(self.agent, session_id)
        page = with_subagent_runs(page, runs, until=await self._stamp_at(session_id, int(before)))
        views = grouped(self.renderer(request).messages(page))
        html = "".join(fragment("message", value=view) for view in views)
        return JSONResponse({"html": html, "before": start})

    async def list_sessions(self, request: Request) -> Response:
        """`GET /api/sessions[?q=<text>][&limit=<n>]`: the sessions, most recent first; `q`
        keeps those whose id contains it (case-folded), `limit` (1–1,000) bounds the list."""
        sessions = list(await self.agent.sessions())
        query, limit = request.query_params.get("q", ""), request.query_params.get("limit")
        if limit is not None and not (limit.isdigit() and 1 <= int(limit) <= 1_000):
            return _bad_request(f"`limit` must be a count from 1 to 1000, got {limit!r:.40}.")
        if query or limit is not None:
            sessions = _bounded(sessions, query, int(limit or 1_000))
        return JSONResponse(
            [{"sessionId": s.session_id, "updatedAt": s.updated_at} for s in sessions]
        )

    async def history(self, request: Request) -> Response:
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        return JSONResponse(await self._history(session_id))

    def routes(self) -> list[Route | Mount]:
        return [
            Route("/", self.chat, methods=["GET"]),
            Route("/api/sessions", self.list_sessions, methods=["GET"]),
            Route("/api/sessions/{session}/history", self.history, methods=["GET"]),
            Route("/api/sessions/{session}/messages", self.older, methods=["GET"]),
            *self.turns.routes(),
            *self.sessions.routes(),
            *self.uploads.routes(),
            *self.playground.routes(),
            *self.jobs.routes(),
            *self.apps.routes(),
            Route(MEDIA_PATH, media_route(self.media), methods=["GET"]),
            Route("/highlight.css", _highlight_css, methods=["GET"]),
            Mount("/static", StaticFiles(directory=STATIC_DIR)),
        ]


async def _partial_reply(agent: ChatAgent, session_id: str) -> str | None:
    """What the session's running turn on another worker has streamed so far."""
    return await agent.partial_reply(session_id) if isinstance(agent, SharedTurnsAgent) else None


def _bounded(sessions: list[SessionSummary], query: str, limit: int) -> list[SessionSummary]:
    """At most `limit` sessions whose id contains `query` (case-folded), in their order."""
    needle = query.casefold()
    return [s for s in sessions if needle in s.session_id.casefold()][:limit]


_HIGHLIGHT_CSS: Final = highlight_css()


async def _highlight_css(_: Request) -> Response:
    return Response(_HIGHLIGHT_CSS, media_type="text/css")


def create_app(
    agent: ChatAgent,
    settings: UiSettings | None = None,
    *,
    documents: DocumentStore | None = None,
    automations: Tool | None = None,
) -> Starlette:
    """The Control UI for `agent` as an ASGI app (`serve_ui` serves it with its canvas host).

    Hosted canvas documents are not served by this app but by the canvas host, a second ASGI
    app (`app.state.canvas_app`) that must listen on `settings.canvas_port` of the same host
    names; with `canvas_port = 0` canvases show as blocked.

    Args:
        agent: The agent to chat with (`clawcell.agent.Agent`, or anything with its shape).
        settings: Bind address, token, embed and media policy; defaults when omitted (with a
            fresh random token: read it from `settings.token`).
        documents: Where hosted canvas documents live; the agent's `store` when omitted and
            it can hold documents. Without one, canvas URLs answer 404.
    """
    settings = settings or UiSettings()
    store: object = getattr(agent, "store", None)
    if documents is None and isinstance(store, DocumentStore):
        documents = store
    ui = _Ui(agent, settings, documents, automations)
    app = Starlette(routes=ui.routes())
    app.state.ui_settings = settings
    app.state.turns = ui.turns.turns  # `serve_ui` closes it as it stops (streams end, turns stop)
    routes = surface_routes(documents, settings)
    app.state.canvas_app = create_canvas_app(documents, settings, ui.secrets, routes=routes)
    app.add_middleware(SessionSegments)
    app.add_middleware(Guard, settings=settings, secrets=ui.secrets)
    return app
