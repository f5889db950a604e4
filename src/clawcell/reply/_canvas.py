"""Canvas previews: the stored `canvas` block shape, its coercion, iframe source and sandbox.

A canvas preview is what the Control UI renders as an iframe. Previews come from `[embed]`
shortcodes (`_embeds`) or from structured records (tool results, stored assistant blocks),
which `coerce_canvas_preview` validates field by field: unknown kinds, surfaces and sandboxes are
refused, heights are clamped to 160–1200, HTML/inline sources never render.

`resolve_canvas_iframe_url` confines the iframe to the gateway's own canvas paths
(`/__openclaw__/canvas`, `/__openclaw__/a2ui`, after WHATWG dot-segment normalisation) unless
external embeds are explicitly allowed; `resolve_embed_sandbox` picks the iframe `sandbox`
attribute, never looser than the preview's own ceiling.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, NotRequired, TypedDict

from ._text import as_record, js_trim, require_str, utf16_len
from ._urls import parse_whatwg_url

__all__ = [
    "CanvasPreview",
    "coerce_canvas_preview",
    "extract_canvas_from_details",
    "extract_canvas_from_text",
    "normalize_preferred_height",
    "resolve_canvas_iframe_url",
    "resolve_embed_sandbox",
]

MIN_PREFERRED_HEIGHT: Final = 160
MAX_PREFERRED_HEIGHT: Final = 1200
_WIDGET_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_CANVAS_PATHS: Final = ("/__openclaw__/canvas", "/__openclaw__/a2ui")


class McpAppDescriptor(TypedDict):
    """An MCP App view a canvas preview belongs to."""

    viewId: str
    serverName: NotRequired[str]
    toolName: NotRequired[str]
    uiResourceUri: NotRequired[str]
    toolCallId: NotRequired[str]
    originSessionKey: NotRequired[str]
    resultMetaState: NotRequired[Literal["unavailable"]]


class CanvasPreview(TypedDict):
    """The `preview` of a stored `{"type": "canvas", "preview": …}` block (protocol keys)."""

    kind: Literal["canvas"]
    surface: Literal["assistant_message", "node_panel"]
    render: Literal["url"]
    url: NotRequired[str]
    viewId: NotRequired[str]
    title: NotRequired[str]
    preferredHeight: NotRequired[int]
    className: NotRequired[str]
    style: NotRequired[str]
    sandbox: NotRequired[Literal["strict", "scripts"]]
    boardWidgetName: NotRequired[str]
    mcpApp: NotRequired[McpAppDescriptor]


def normalize_preferred_height(value: object) -> int | None:
    """A finite number ≥ 160, truncated and capped at 1200; anything else gives `None`."""
    number = _finite(value)
    if number is None or number < MIN_PREFERRED_HEIGHT:
        return None
    return min(math.trunc(number), MAX_PREFERRED_HEIGHT)


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value) if isinstance(value, float) else value
    if isinstance(number, float) and not math.isfinite(number):
        return None
    return number


def _record(value: object) -> Mapping[str, object] | None:
    return as_record(value)


def _text(record: Mapping[str, object] | None, key: str) -> str | None:
    value = None if record is None else record.get(key)
    return value if isinstance(value, str) and js_trim(value) else None


def _mcp_app(record: Mapping[str, object] | None) -> McpAppDescriptor | None:
    view_id = _text(record, "viewId")
    if view_id is None or utf16_len(view_id) > 128:
        return None
    server, tool = _text(record, "serverName"), _text(record, "toolName")
    uri, call = _text(record, "uiResourceUri"), _text(record, "toolCallId")
    if not (
        server
        and utf16_len(server) <= 256
        and tool
        and utf16_len(tool) <= 256
        and uri
        and uri.startswith("ui://")
        and utf16_len(uri) <= 2048
        and call
        and utf16_len(call) <= 512
    ):
        return {"viewId": view_id}
    app: McpAppDescriptor = {
        "viewId": view_id,
        "serverName": server,
        "toolName": tool,
        "uiResourceUri": uri,
        "toolCallId": call,
    }
    origin = _text(record, "originSessionKey")
    if origin and utf16_len(origin) <= 512:
        app["originSessionKey"] = origin
    if record is not None and record.get("resultMetaState") == "unavailable":
        app["resultMetaState"] = "unavailable"
    return app


def _first_height(*sources: tuple[Mapping[str, object] | None, str]) -> int | None:
    for record, key in sources:
        number = _finite(None if record is None else record.get(key))
        if number is not None:
            return normalize_preferred_height(number)
    return None


def coerce_canvas_preview(record: object) -> CanvasPreview | None:
    """Validate a canvas record (`{kind, presentation?, view?, source?, mcpApp?}`) into a preview.

    Returns `None` unless the kind is `canvas`, the surface is allowed, and a URL source exists
    (`view.url`/`view.entryUrl`, or `source` of type `url`), or an MCP App view is named.
    """
    data = _record(record)
    kind = _text(data, "kind")
    if data is None or kind is None or js_trim(kind).lower() != "canvas":
        return None
    presentation, view = _record(data.get("presentation")), _record(data.get("view"))
    source = _record(data.get("source"))
    surface = _text(presentation, "target") or _text(data, "target") or "assistant_message"
    if surface not in ("assistant_message", "node_panel"):
        return None
    mcp_app = _mcp_app(_record(data.get("mcpApp")))
    view_url = _text(view, "url") or _text(view, "entryUrl")
    view_id = _text(view, "id") or _text(view, "docId")
    preview: CanvasPreview = {"kind": "canvas", "surface": surface, "render": "url"}
    if mcp_app is not None and view_id is not None and view_id == mcp_app["viewId"]:
        preview["viewId"] = view_id
        _decorate(preview, presentation, view, styled=False)
        preview["mcpApp"] = mcp_app
        return preview
    source_type = _text(source, "type")
    is_url_source = source_type is not None and js_trim(source_type).lower() == "url"
    url = view_url or (_text(source, "url") if is_url_source else None)
    if url is None:
        return None
    preview["url"] = url
    if view_url and view_id:
        preview["viewId"] = view_id
    _decorate(preview, presentation, view, styled=True)
    widget = _text(view, "boardWidgetName")
    if view_url and widget and _WIDGET_NAME.fullmatch(widget):
        preview["boardWidgetName"] = widget
    if mcp_app is not None:
        preview["mcpApp"] = mcp_app
    return preview


def _decorate(
    preview: CanvasPreview,
    presentation: Mapping[str, object] | None,
    view: Mapping[str, object] | None,
    *,
    styled: bool,
) -> None:
    title = _text(presentation, "title") or _text(view, "title")
    if title:
        preview["title"] = title
    height = _first_height(
        (presentation, "preferred_height"),
        (presentation, "preferredHeight"),
        (view, "preferred_height"),
        (view, "preferredHeight"),
    )
    if height:
        preview["preferredHeight"] = height
    class_name = _text(presentation, "class_name") or _text(presentation, "className")
    style = _text(presentation, "style")
    if styled and class_name:
        preview["className"] = class_name
    if styled and style:
        preview["style"] = style
    sandbox = _text(presentation, "sandbox")
    if sandbox == "strict":
        preview["sandbox"] = "strict"
    elif sandbox == "scripts":
        preview["sandbox"] = "scripts"


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def extract_canvas_from_text(output_text: str | None) -> CanvasPreview | None:
    """A canvas preview from a JSON object text (tool output), else `None`."""
    if not output_text:
        return None
    try:
        parsed = json.loads(
            require_str(output_text, "output_text"), parse_constant=_reject_constant
        )
    except (ValueError, RecursionError):
        return None
    return coerce_canvas_preview(parsed)


def extract_canvas_from_details(details: object) -> CanvasPreview | None:
    """A canvas preview from tool-result `details.mcpAppPreview`, else `None`."""
    data = _record(details)
    return None if data is None else coerce_canvas_preview(data.get("mcpAppPreview"))


def resolve_canvas_iframe_url(
    entry_url: str,
    canvas_host_url: str | None = None,
    *,
    allow_external_embed_urls: bool = False,
) -> str | None:
    """The iframe `src` for a preview URL, or `None` when it must not be embedded.

    Same-origin URLs must stay under `/__openclaw__/canvas` or `/__openclaw__/a2ui`; with a
    capability-scoped `canvas_host_url` (`…/__openclaw__/cap/<token>`) they are rewritten onto
    that host. External `http(s)` URLs pass only with `allow_external_embed_urls=True`.
    """
    entry = js_trim(require_str(entry_url, "entry_url"))
    parsed = parse_whatwg_url(entry, "http://localhost") if entry else None
    if parsed is None:
        return None
    if parsed.origin != "http://localhost":
        external = parsed.protocol in ("http:", "https:")
        return parsed.href if allow_external_embed_urls and external else None
    path = parsed.pathname
    if not any(path == root or path.startswith(root + "/") for root in _CANVAS_PATHS):
        return None
    safe = path + parsed.search + parsed.hash
    host = parse_whatwg_url(canvas_host_url) if canvas_host_url else None
    prefix = host.pathname.rstrip("/") if host is not None else ""
    if host is None or not prefix.startswith("/__openclaw__/cap"):
        return safe
    userinfo = host.username + (f":{host.password}" if host.password else "")
    at = f"{userinfo}@" if userinfo else ""
    return f"{host.protocol}//{at}{host.host}{prefix}{safe}"


def resolve_embed_sandbox(mode: str | None = None, ceiling: str | None = None) -> str:
    """The iframe `sandbox` attribute for a gateway mode and a preview's own ceiling."""
    if ceiling == "strict" or (ceiling == "scripts" and mode == "strict"):
        return ""
    if ceiling == "scripts":
        return "allow-scripts"
    if mode == "strict":
        return ""
    if mode == "trusted":
        return "allow-scripts allow-same-origin"
    return "allow-scripts"
