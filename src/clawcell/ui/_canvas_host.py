"""The canvas origin: a second loopback listener serving what a model writes for frames.

Threat model: a hosted canvas document is model-written HTML and script, so it is hostile to
the app. Its iframe's `sandbox` tier decides whether its scripts run, but the origin decides
what they can reach: served from the app's own origin, a `trusted` (`allow-same-origin`)
document could read the page's CSRF token through `parent`, call the API with the user's
cookie, send turns and decide approvals. So documents are never served by the app. They come
from this separate ASGI app, listening on its own loopback port (`UiSettings.canvas_port`,
started beside the app by `serve_ui`): a different origin in every tier, so a document can
never read the app's DOM, cookie (HttpOnly, and never sent with its requests' answers
readable) or CSRF token, and the app refuses its requests (`Origin` must be the app's own,
`Sec-Fetch-Site` must be `same-origin`). `trusted` then means same-origin with the canvas
host only: such a document may use storage and fetch other canvas files of this host.

This listener has no cookie, no token and no API: it answers `GET`/`HEAD` of
`/__openclaw__/cap/<cap>/…` with a valid canvas capability (derived from the token, so
another local page cannot guess document URLs) and nothing else. Every response has
`nosniff` and the tier's `CSP: sandbox …`, so a document opened directly is sandboxed too.

Extension seam: other frame content a model writes (widgets) belongs here as well; pass its
routes as `routes` to `create_canvas_app`, under `CANVAS_PREFIX`.
"""

from __future__ import annotations

import hmac
import urllib.parse
from collections.abc import Sequence
from typing import Final

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ._documents import document_route
from ._protocol import DocumentStore
from ._security import CAP_PREFIX, HostCheck, Secrets, host_name, with_default_headers
from ._settings import UiSettings

__all__ = ["CANVAS_PREFIX", "DOCUMENTS_PATH", "canvas_origin", "create_canvas_app"]

CANVAS_PREFIX: Final = CAP_PREFIX + "{cap}"
"""Where every canvas-host route lives (the capability checked by the guard)."""
DOCUMENTS_PATH: Final = "/__openclaw__/canvas/documents/{ref}/{path:path}"


def canvas_origin(settings: UiSettings, host_header: str) -> str | None:
    """The canvas host's origin as the browser reaches it: the configured public
    `canvas_origin` (the same from every worker behind a proxy), else `http://<same
    host>:<canvas port>`, or `None` when no canvas listener runs (`canvas_port` still 0)."""
    if settings.canvas_origin is not None:
        return settings.canvas_origin
    name = host_name(host_header)
    if not settings.canvas_port or name is None:
        return None
    host = f"[{name}]" if ":" in name else name
    return f"http://{host}:{settings.canvas_port}"


class _CanvasGuard:
    """Admits only `GET`/`HEAD` of the capability path with a known `Host`."""

    def __init__(self, app: ASGIApp, *, settings: UiSettings, secrets: Secrets) -> None:
        self.app = app
        origin = settings.canvas_origin  # the proxy's name for this listener only
        also = frozenset([str(urllib.parse.urlsplit(origin).hostname)] if origin else [])
        self.hosts = HostCheck.of(settings, also=also)
        self.prefix = CAP_PREFIX + secrets.canvas_cap + "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, with_default_headers(send))
            return
        await self.app(scope, receive, with_default_headers(send))

    def _refusal(self, scope: Scope) -> Response | None:
        if not self.hosts.admits(Headers(scope=scope).get("host", "")):
            return PlainTextResponse("Refused: unexpected Host header.", status_code=403)
        if scope["method"] not in ("GET", "HEAD"):
            return PlainTextResponse("Refused: the canvas host is read-only.", status_code=405)
        path: str = scope["path"]
        given = path[: len(self.prefix)]
        if not hmac.compare_digest(given.encode(), self.prefix.encode()):
            return PlainTextResponse("Not found: unknown canvas capability.", status_code=404)
        return None


def create_canvas_app(
    documents: DocumentStore | None,
    settings: UiSettings,
    secrets: Secrets,
    *,
    routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """The canvas host as an ASGI app: hosted documents (and `routes`) under the capability.

    Without a document store, document URLs answer 404.
    """
    served: list[BaseRoute] = list(routes)
    if documents is not None:
        endpoint = document_route(documents, settings.embed_sandbox)
        served.append(Route(CANVAS_PREFIX + DOCUMENTS_PATH, endpoint, methods=["GET"]))
    app = Starlette(routes=served)
    app.add_middleware(_CanvasGuard, settings=settings, secrets=secrets)
    return app
