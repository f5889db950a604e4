"""The web Control UI: chat with rich replies, hosted canvases, live cells and a playground.

Needs the `[ui]` extra (`pip install 'clawcell[ui]'`). Start with `create_app(agent, settings)`
or `clawcell serve`; give the agent `canvas_tool(store)` and `widget_tool(store)`
(`show_widget`). See `docs/ui.md` and `docs/widgets.md`.
"""

from __future__ import annotations

from .._lazy import install_hint as _install_hint

try:
    import jinja2 as _jinja2
    import markdown_it as _markdown_it
    import nh3 as _nh3
    import pygments as _pygments
    import starlette as _starlette
except ImportError as exc:
    raise ImportError(
        f"clawcell.ui needs the [ui] extra ({exc.name} is missing): {_install_hint('ui')}."
    ) from exc

from .. import _lazy
from ._app import create_app
from ._demo._agent import demo_agent
from ._documents import canvas_tool
from ._protocol import (
    AgentEvent,
    CellRunner,
    ChatAgent,
    DocumentStore,
    PendingPrompt,
    SessionSummary,
)
from ._servers import UiServers, bind_listeners, serve_ui
from ._settings import EmbedSandbox, UiSettings, load_settings
from ._widgets._tool import widget_tool

__all__ = [
    "AgentEvent",
    "CellRunner",
    "ChatAgent",
    "DocumentStore",
    "EmbedSandbox",
    "PendingPrompt",
    "SessionSummary",
    "UiServers",
    "UiSettings",
    "bind_listeners",
    "canvas_tool",
    "create_app",
    "demo_agent",
    "load_settings",
    "serve_ui",
    "widget_tool",
]

del _jinja2, _markdown_it, _nh3, _pygments, _starlette

# Moved to `clawcell.cli` with the other commands.
__getattr__ = _lazy.moved_exports(
    __name__, dict.fromkeys(("configure", "run"), "clawcell.cli._serve")
)
