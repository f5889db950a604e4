"""MCP App views on the canvas host: the `ui://` HTML an MCP server declared for a tool.

A view is stored as a document `ma_<hex>` (its `viewId`) by whoever fetched the resource, and
served here under the canvas capability with `Content-Security-Policy: sandbox allow-scripts`
(`sandbox` in `strict`) and the MCP Apps default resource policy: inline script and style,
`data:`/`blob:` images, media and fonts, no network (`connect-src 'none'`), no frames, and with
the realm guard (`_realm.py`) as the document's first script: no WebRTC, and Trusted Types so
that no frame can be made. The chat's frame never has `allow-same-origin`; the app talks to the
host only over `postMessage` (JSON-RPC, see `static/surfaces.js`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Final

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from .._protocol import DocumentStore
from .._realm import REALM_POLICY, with_realm_guard
from .._settings import EmbedSandbox

__all__ = ["MCP_APPS_PATH", "mcp_app_csp", "mcp_app_route"]

MCP_APPS_PATH: Final = "/__openclaw__/canvas/mcp-apps/{view}/index.html"
_VIEW: Final = re.compile(r"ma_[A-Za-z0-9_-]{1,61}")
_POLICY: Final = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; "
    "frame-src 'none'; child-src 'none'; worker-src 'none'; form-action 'none'; "
    "base-uri 'none'; " + REALM_POLICY
)


def mcp_app_csp(tier: EmbedSandbox) -> str:
    """The policy an MCP App view is served with in a sandbox tier."""
    sandbox = "sandbox" if tier == "strict" else "sandbox allow-scripts"
    return f"{sandbox}; {_POLICY}"


def mcp_app_route(
    store: DocumentStore, tier: EmbedSandbox
) -> Callable[[Request], Awaitable[Response]]:
    """The canvas-host endpoint serving `…/__openclaw__/canvas/mcp-apps/<viewId>/index.html`."""
    headers = {
        "content-security-policy": mcp_app_csp(tier),
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
    }

    async def endpoint(request: Request) -> Response:
        view = request.path_params["view"]
        data = await store.get_document_file(view, "index.html") if _VIEW.fullmatch(view) else None
        if data is None:
            return PlainTextResponse(f"No MCP App view {view!r}.", 404)
        return Response(
            with_realm_guard(data), media_type="text/html; charset=utf-8", headers=headers
        )

    return endpoint
