"""Hosted canvas documents: the `canvas` tool that writes them and the routes that serve them.

Threat model: a document is model-written HTML and scripts, so it is hostile to the app. It is
served with `Content-Security-Policy: sandbox …` (the spec's `sandbox allow-scripts` in the
default `scripts` tier, no scripts in `strict`, `allow-same-origin` only in `trusted`), which
gives the document an opaque origin even when opened directly: it cannot read the app's
cookie or call its API. Iframes load documents through the canvas capability path
(`/__openclaw__/cap/<cap>/__openclaw__/canvas/…`), which authorizes canvas reads and nothing
else, so a document's relative assets load without the session cookie.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, cast

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from .. import Tool
from ..errors import ToolError
from ._protocol import DocumentStore
from ._settings import EmbedSandbox

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_DOCUMENT_FILES",
    "RESERVED_REFS",
    "canvas_tool",
    "document_route",
]

MAX_DOCUMENT_BYTES: Final = 2 * 1024 * 1024
MAX_DOCUMENT_FILES: Final = 64
RESERVED_REFS: Final = ("wg", "ma_")
"""Ref prefixes of widget and MCP App documents: served only by their own canvas-host routes
(with their own policy), never by the hosted-document route, and never written by `canvas`."""
_REF: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_SEGMENT: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_TYPES: Final = {
    "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
    "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
    "mjs": "text/javascript; charset=utf-8", "json": "application/json",
    "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
    "gif": "image/gif", "webp": "image/webp", "txt": "text/plain; charset=utf-8",
    "woff2": "font/woff2", "wasm": "application/wasm", "csv": "text/csv; charset=utf-8",
}  # fmt: skip
_SANDBOX_HEADERS: Final[dict[str, str]] = {
    "strict": "sandbox",
    "scripts": "sandbox allow-scripts",
    "trusted": "sandbox allow-scripts allow-same-origin",
}

_PARAMETERS: Final = {
    "type": "object",
    "properties": {
        "html": {"type": "string", "description": "The document's index.html."},
        "ref": {"type": "string", "description": "An existing document to replace."},
        "title": {"type": "string"},
        "height": {"type": "integer", "minimum": 160, "maximum": 1200},
        "assets": {
            "type": "object",
            "description": "Relative path → file text (or `base64:` + data) beside index.html.",
            "additionalProperties": {"type": "string"},
        },
    },
    "required": ["html"],
    "additionalProperties": False,
}


def is_document_path(path: str) -> bool:
    """Whether `path` is a safe relative document path (`index.html`, `img/a.png`)."""
    parts = path.split("/")
    return 0 < len(parts) <= 8 and all(_SEGMENT.fullmatch(p) and p != ".." for p in parts)


def _asset_bytes(path: str, value: str) -> bytes:
    if not is_document_path(path) or path == "index.html":
        raise ToolError(
            f"canvas asset path {path!r} is not allowed; use a relative path such as "
            "`style.css` or `img/chart.png` (letters, digits, `.`, `_`, `-`)."
        )
    if not value.startswith("base64:"):
        return value.encode("utf-8")
    try:
        return base64.b64decode(value[7:], validate=True)
    except binascii.Error as exc:
        raise ToolError(f"canvas asset {path!r} is not valid base64: {exc}") from exc


def _files(arguments: Mapping[str, Any]) -> dict[str, bytes]:
    files = {"index.html": str(arguments["html"]).encode("utf-8")}
    assets = cast(Mapping[str, str], arguments.get("assets") or {})
    if len(assets) + 1 > MAX_DOCUMENT_FILES:
        raise ToolError(
            f"a canvas document holds at most {MAX_DOCUMENT_FILES} files, got {len(assets) + 1}."
        )
    files.update((path, _asset_bytes(path, value)) for path, value in assets.items())
    total = sum(len(data) for data in files.values())
    if total > MAX_DOCUMENT_BYTES:
        raise ToolError(
            f"canvas document is {total} bytes; the limit is {MAX_DOCUMENT_BYTES} bytes "
            "(make the HTML smaller or drop assets)."
        )
    return files


def _embed(ref: str, arguments: Mapping[str, Any]) -> str:
    attributes = f'ref="{ref}"'
    title = str(arguments.get("title") or "").replace('"', "'").replace("]", ")")
    if title:
        attributes += f' title="{title}"'
    if arguments.get("height"):
        attributes += f' height="{int(arguments["height"])}"'
    return f"[embed {attributes} /]"


def canvas_tool(store: DocumentStore) -> Tool:
    """The built-in `canvas` tool: create or replace a hosted canvas document.

    The model passes `html` (and optional `assets`, `title`, `height`, or the `ref` of a
    document to replace) and gets back the `ref`, its URL and the `[embed …]` shortcode to put
    in its reply. Documents are capped at 64 files and 2 MiB.
    """

    async def execute(arguments: dict[str, Any]) -> dict[str, Any]:
        ref = arguments.get("ref")
        if ref is None:
            ref = "cv_" + secrets.token_hex(8)
        elif (
            not _REF.fullmatch(ref)
            or ref.startswith(RESERVED_REFS)  # checked and written only by their own tools
            or await store.get_document_file(ref, "index.html") is None
        ):
            raise ToolError(
                f"no canvas document {ref!r} to update; omit `ref` to create a new one."
            )
        await store.put_document(ref, _files(arguments))
        url = f"/__openclaw__/canvas/documents/{ref}/index.html"
        return {"ref": ref, "url": url, "embed": _embed(ref, arguments)}

    return Tool(
        name="canvas",
        description=(
            "Create or update a hosted HTML canvas document shown in the chat. Returns its "
            '`ref`; put the returned `embed` (`[embed ref="…" /]`) in your reply to show it.'
        ),
        parameters=_PARAMETERS,
        execute=execute,
    )


def document_route(
    store: DocumentStore, tier: EmbedSandbox
) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint serving `…/__openclaw__/canvas/documents/<ref>/<path>`."""
    policy = _SANDBOX_HEADERS[tier]

    async def endpoint(request: Request) -> Response:
        ref, path = request.path_params["ref"], request.path_params["path"] or "index.html"
        data = None
        if _REF.fullmatch(ref) and not ref.startswith(RESERVED_REFS) and is_document_path(path):
            data = await store.get_document_file(ref, path)
        if data is None:
            return PlainTextResponse(f"No canvas file {path!r} in document {ref!r}.", 404)
        extension = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        return Response(
            data,
            media_type=_TYPES.get(extension, "application/octet-stream"),
            headers={"content-security-policy": policy, "x-content-type-options": "nosniff"},
        )

    return endpoint
