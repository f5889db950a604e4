"""Canvas previews the chat draws as something other than a plain hosted-document frame.

- A **widget** (a `show_widget` preview, its URL under `/__openclaw__/canvas/widgets/`): a
  frame on the canvas host that never gets `allow-same-origin`; `allow-scripts` unless the
  tier or the preview's ceiling is `strict`. `static/surfaces.js` fits its height and relays
  its prompts.
- A **YouTube card** (an `[embed url=…]` that `youtube_card` accepts): the thumbnail and a
  Play button; only Play loads the player. `allowExternalEmbedUrls` does not apply; `strict`
  shows the watch link only.
- An **MCP App** (a preview with a complete `mcpApp` descriptor): a frame on the canvas host
  serving the app's `ui://` resource, never `allow-same-origin`, which `static/surfaces.js`
  speaks the MCP Apps host protocol with (`_mcp_apps`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal, cast

from ..._lazy import value_class
from ...reply import youtube_card
from .._settings import UiSettings
from .._widgets._page import REPORT_PREFIX, REPORT_SANDBOX

__all__ = ["McpAppView", "WidgetView", "YouTubeView", "surface_view"]

WIDGET_PREFIX: Final = "/__openclaw__/canvas/widgets/"
MCP_APP_PREFIX: Final = "/__openclaw__/canvas/mcp-apps/"
_INITIAL_HEIGHT: Final = 120
_VIEW_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


@value_class
class WidgetView:
    """A `show_widget` frame; `src` is `None` without a canvas host (shown as blocked)."""

    kind: Literal["widget"] = "widget"
    src: str | None
    sandbox: str
    """`allow-scripts` or `""`; a report's (`REPORT_SANDBOX`) allows popups only."""
    title: str
    height: int = _INITIAL_HEIGHT
    report: bool = False
    """A `show_widget` report: a static card (no script, no bridge, a fixed height)."""


@value_class
class YouTubeView:
    """A YouTube card: a thumbnail and Play (or, under `strict`, the watch link only)."""

    kind: Literal["youtube"] = "youtube"
    title: str
    thumbnail: str
    player: str
    watch: str
    link_only: bool


@value_class
class McpAppView:
    """An MCP App frame and what the host bridge needs to initialise it."""

    kind: Literal["mcp_app"] = "mcp_app"
    src: str | None
    sandbox: Literal["allow-scripts", ""]
    title: str
    view_id: str
    server: str
    tool: str
    tool_call_id: str
    height: int = _INITIAL_HEIGHT


def _strict(settings: UiSettings, preview: Mapping[str, Any]) -> bool:
    return settings.embed_sandbox == "strict" or preview.get("sandbox") == "strict"


def _framed(canvas_host_url: str | None, path: str) -> str | None:
    return f"{canvas_host_url}{path}" if canvas_host_url else None


def surface_view(
    preview: Mapping[str, Any], settings: UiSettings, canvas_host_url: str | None
) -> WidgetView | YouTubeView | McpAppView | None:
    """The special view for a canvas preview, or `None` for an ordinary canvas frame."""
    url = str(preview.get("url", ""))
    strict = _strict(settings, preview)
    title = str(preview.get("title") or preview.get("viewId") or "")
    sandbox: Literal["allow-scripts", ""] = "" if strict else "allow-scripts"
    app = preview.get("mcpApp")
    if isinstance(app, Mapping) and "uiResourceUri" in app:
        named = str(preview.get("title") or "")  # else the tool's name, not the view id
        return _mcp_app(cast(Mapping[str, Any], app), named, sandbox, canvas_host_url)
    if url.startswith(WIDGET_PREFIX) and ".." not in url and "%" not in url:
        src = _framed(canvas_host_url, url)
        if url.startswith(WIDGET_PREFIX + REPORT_PREFIX):
            height = int(preview.get("preferredHeight") or _INITIAL_HEIGHT)
            return WidgetView(src=src, sandbox=REPORT_SANDBOX, title=title or "Report",
                              height=height, report=True)  # fmt: skip
        return WidgetView(src=src, sandbox=sandbox, title=title or "Widget")
    card = youtube_card(url)
    if card is None:
        return None
    return YouTubeView(
        title=title or "YouTube video",
        thumbnail=card.thumbnail_url,
        player=card.player_url,
        watch=card.watch_url,
        link_only=strict,
    )


def _mcp_app(
    app: Mapping[str, Any],
    title: str,
    sandbox: Literal["allow-scripts", ""],
    canvas_host_url: str | None,
) -> McpAppView:
    view_id = str(app["viewId"])
    path = f"{MCP_APP_PREFIX}{view_id}/index.html"
    return McpAppView(
        src=_framed(canvas_host_url, path) if _VIEW_ID.fullmatch(view_id) else None,
        sandbox=sandbox,
        title=title or str(app.get("toolName", "MCP App")),
        view_id=view_id,
        server=str(app.get("serverName", "")),
        tool=str(app.get("toolName", "")),
        tool_call_id=str(app.get("toolCallId", "")),
    )
