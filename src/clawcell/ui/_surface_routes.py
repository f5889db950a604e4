"""The canvas-host routes of widgets and MCP App views, and the app's YouTube frame origin.

Both serve documents of the store that only their own tools write (`RESERVED_REFS`): widget
pages (`wg_…`, `_widgets._page.widget_route`) and MCP App views (`ma_…`, the `ui://` HTML an
MCP server declared, `_mcp_apps._host.mcp_app_route`). They are added to `create_canvas_app` as
`routes`, so they sit behind the canvas capability like hosted documents.
"""

from __future__ import annotations

from typing import Final

from starlette.routing import BaseRoute, Route

from ._canvas_host import CANVAS_PREFIX
from ._mcp_apps._host import MCP_APPS_PATH, mcp_app_route
from ._protocol import DocumentStore
from ._settings import UiSettings
from ._widgets._page import WIDGETS_PATH, widget_route
from ._widgets._tool import is_widget_ref

__all__ = ["YOUTUBE_PLAYER_ORIGIN", "surface_routes"]

YOUTUBE_PLAYER_ORIGIN: Final = "https://www.youtube-nocookie.com"
"""Where a YouTube card's player comes from (framed only after Play)."""


def surface_routes(documents: DocumentStore | None, settings: UiSettings) -> list[BaseRoute]:
    """The widget and MCP App routes of the canvas host (none without a document store)."""
    if documents is None:
        return []
    tier = settings.embed_sandbox
    return [
        Route(CANVAS_PREFIX + WIDGETS_PATH, widget_route(documents, tier, is_widget_ref)),
        Route(CANVAS_PREFIX + MCP_APPS_PATH, mcp_app_route(documents, tier)),
    ]
