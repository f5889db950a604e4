"""Which canvas previews become widgets, YouTube cards or MCP App frames, and how."""

from __future__ import annotations

from typing import Any

from clawcell.ui import UiSettings
from clawcell.ui._render._surfaces import McpAppView, WidgetView, YouTubeView, surface_view

HOST = "http://127.0.0.1:8788/__openclaw__/cap/c"
WIDGET_URL = "/__openclaw__/canvas/widgets/wg_0123/index.html"


def _view(preview: dict[str, Any], tier: str = "scripts") -> object:
    settings = UiSettings(embed_sandbox=tier)  # type: ignore[arg-type]
    return surface_view(preview, settings, HOST)


def test_a_youtube_embed_is_a_card_with_the_privacy_enhanced_player() -> None:
    card = _view({"url": "https://youtu.be/dQw4w9WgXcQ?t=1m5s&si=tracking", "title": "V"})
    assert card == YouTubeView(
        title="V",
        thumbnail="https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg",
        player="https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?autoplay=1&start=65",
        watch="https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=65s",
        link_only=False,
    )


def test_strict_or_a_strict_ceiling_makes_the_card_a_link_only() -> None:
    url = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
    assert isinstance(card := _view({"url": url}, "strict"), YouTubeView) and card.link_only
    ceiling = _view({"url": url, "sandbox": "strict"})
    assert isinstance(ceiling, YouTubeView) and ceiling.link_only


def test_look_alike_hosts_stay_ordinary_canvases() -> None:
    assert _view({"url": "https://youtube.com.example/watch?v=dQw4w9WgXcQ"}) is None
    assert _view({"url": "/__openclaw__/canvas/documents/cv_1/index.html"}) is None


def test_a_widget_frame_never_gets_allow_same_origin() -> None:
    for tier, sandbox in (
        ("strict", ""),
        ("scripts", "allow-scripts"),
        ("trusted", "allow-scripts"),
    ):
        view = _view({"url": WIDGET_URL, "title": "W"}, tier)
        assert view == WidgetView(src=HOST + WIDGET_URL, sandbox=sandbox, title="W")  # type: ignore[arg-type]


def test_widget_urls_with_dot_segments_or_escapes_are_not_widgets() -> None:
    assert _view({"url": "/__openclaw__/canvas/widgets/../documents/cv_1/index.html"}) is None
    assert _view({"url": "/__openclaw__/canvas/widgets/%2e%2e/x/index.html"}) is None


def test_an_mcp_app_is_framed_only_with_a_safe_view_id() -> None:
    app = {"viewId": "ma_ab12", "serverName": "s", "toolName": "t", "uiResourceUri": "ui://x",
           "toolCallId": "c"}  # fmt: skip
    view = _view({"viewId": "ma_ab12", "mcpApp": app})
    assert isinstance(view, McpAppView)
    assert view.src == HOST + "/__openclaw__/canvas/mcp-apps/ma_ab12/index.html"
    assert view.sandbox == "allow-scripts" and view.title == "t"
    hostile = _view({"viewId": "x", "mcpApp": {**app, "viewId": "../../x"}})
    assert isinstance(hostile, McpAppView) and hostile.src is None
