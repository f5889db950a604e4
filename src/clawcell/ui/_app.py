"""`create_app`: the Control UI as a Starlette ASGI application.

Pages are rendered on the server; the browser runs small ES modules from `/static/` (the chat,
the stream of page operations, attachments, media, surfaces and MCP Apps, the session drawer,
the playground, the Jobs panel). The chat's pages are `_chat/_pages.py`, its turns
`_chat/_turn_routes.py`; this module puts the parts together.
Every response passes the `Guard` (Host, token, CSRF); pages carry a strict CSP without
inline script.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Final

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..catalog import Tool
from ._attachments import Uploads
from ._canvas_host import canvas_origin, create_canvas_app
from ._chat._pages import ChatPages, Transcripts
from ._chat._store_turns import StoreTurns
from ._chat._turn_routes import ChatTurns
from ._chat._turns import TurnRegistry
from ._jobs_panel import JobsPanel
from ._mcp_apps._api import McpAppApi
from ._media import MEDIA_PATH, MediaRoots, media_route
from ._playground._routes import Playground
from ._protocol import ChatAgent, DocumentStore, agent_store
from ._render._markdown import highlight_css
from ._render._messages import Renderer
from ._security import CAP_PREFIX, Guard, Secrets
from ._sessions._paths import SessionSegments, path_session
from ._sessions._routes import SessionList
from ._settings import UiSettings
from ._surface_routes import YOUTUBE_PLAYER_ORIGIN, surface_routes
from ._templates import STATIC_DIR, render_template

__all__ = ["create_app", "page_csp"]


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
    """The app's parts, sharing the agent, settings and secrets: the chat's pages and turns,
    the session drawer, uploads, the playground, the Jobs panel and MCP App calls."""

    def __init__(
        self,
        agent: ChatAgent,
        settings: UiSettings,
        documents: DocumentStore | None,
        automations: Tool | None,
    ) -> None:
        self.settings = settings
        self.secrets = Secrets(token=settings.token)
        self.media = MediaRoots(settings.media_roots)
        self.playground = Playground(agent, self.page)
        self.jobs = JobsPanel(agent, self.page, automations)
        self.apps = McpAppApi(agent, documents)
        self.uploads = Uploads(agent, settings)
        transcripts = Transcripts(agent)
        self.turns = ChatTurns(
            agent, self.renderer, self.apps, transcripts.count, uploads=self.uploads
        )
        self.sessions = SessionList(agent, self.turns.turns)
        self.pages = ChatPages(agent=agent, transcripts=transcripts, turns=self.turns.turns,
                               sessions=self.sessions, uploads=self.uploads,
                               renderer=self.renderer, page=self.page)  # fmt: skip

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

    def routes(self) -> list[Route | Mount]:
        return [
            *self.pages.routes(),
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


_HIGHLIGHT_CSS: Final = highlight_css()


def _lifespan(turns: TurnRegistry) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The app's life: a registry shared through the store starts its sweep with the app,
    so a worker that has run no turn yet still ends dead workers' turns; the registry is
    closed (turns stopped, streams ended, the sweep stopped, the heartbeat withdrawn) as the
    app stops."""

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncGenerator[None]:
        if isinstance(turns, StoreTurns):
            turns.tend()
        try:
            yield
        finally:
            await turns.close()

    return lifespan


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
    store = agent_store(agent)
    if documents is None and isinstance(store, DocumentStore):
        documents = store
    ui = _Ui(agent, settings, documents, automations)
    app = Starlette(routes=ui.routes(), lifespan=_lifespan(ui.turns.turns))
    app.state.ui_settings = settings
    app.state.turns = ui.turns.turns  # `serve_ui` closes it first: live streams end, turns stop
    routes = surface_routes(documents, settings)
    app.state.canvas_app = create_canvas_app(documents, settings, ui.secrets, routes=routes)
    app.add_middleware(SessionSegments)
    app.add_middleware(Guard, settings=settings, secrets=ui.secrets)
    return app
