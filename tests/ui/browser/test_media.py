"""Media in a real Chromium: blocked directives, the image viewer, audio and video players."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.ui.browser.conftest import screenshot, send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def _reply(root: Path) -> str:
    return (
        "Here is what I made.\n"
        f"MEDIA: {root}/first.png\n"
        f"MEDIA: {root}/second.png\n"
        "MEDIA: https://127.0.0.1/internal.png\n"
        'MEDIA: http://cdn.example.com/<img src=x onerror="window.pwned=1">.mp4\n'
        f"MEDIA: {root}/note.wav\n"
        f"MEDIA: {root}/clip.mp4\n"
        "That is all."
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_media_render_as_players_a_viewer_and_blocked_lines(
    page: Page, tmp_path: Path, width: int
) -> None:
    for name in ("first.png", "second.png"):
        (tmp_path / name).write_bytes(PNG)
    (tmp_path / "note.wav").write_bytes(b"RIFF\0\0\0\0WAVE")
    (tmp_path / "clip.mp4").write_bytes(b"\0\0\0\x18ftypmp42")
    page.set_viewport_size({"width": width, "height": 800})
    with serve([_reply(tmp_path)], media_roots=(tmp_path,)) as running:
        page.goto(running.login_url)
        send(page, "media please")
        reply = page.locator(".message-assistant").last
        text = reply.inner_text()
        assert "MEDIA:" not in text
        blocked = reply.locator(".attachment.blocked figcaption")
        assert blocked.all_inner_texts() == [
            "blocked: https://127.0.0.1/internal.png (remote media blocked by the media policy)",
            'blocked: http://cdn.example.com/<img src=x onerror="window.pwned=1">.mp4'
            " (plain http media is not loaded)",
        ]
        assert reply.locator(".attachment-audio audio[controls]").count() == 1
        assert reply.locator(".attachment-video video[controls]").count() == 1
        assert page.locator("img[src=x], script:not([src])").count() == 0

        reply.get_by_role("button", name="Open image first.png").click()
        viewer = page.locator("dialog.viewer")
        assert viewer.evaluate("dialog => dialog.open") is True
        assert viewer.locator(".viewer-count").inner_text() == "1 / 2"
        assert viewer.locator(".viewer-frame img").get_attribute("src") == (
            f"{running.base}/media?path={tmp_path}/first.png"
        )
        screenshot(page, f"image-viewer-{width}")
        viewer.get_by_role("button", name="Next image").click()
        assert viewer.locator(".viewer-count").inner_text() == "2 / 2"
        assert viewer.locator(".viewer-caption").inner_text() == "second.png"
        assert viewer.get_by_role("button", name="Next image").is_disabled()
        viewer.get_by_role("button", name="Zoom").click()
        assert viewer.evaluate("dialog => dialog.classList.contains('zoomed')") is True
        page.keyboard.press("ArrowLeft")
        assert viewer.locator(".viewer-count").inner_text() == "1 / 2"
        page.keyboard.press("Escape")
        assert viewer.evaluate("dialog => dialog.open") is False
        assert page.evaluate("window.pwned") is None
        overflow = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        assert overflow is False
        screenshot(page, f"media-{width}")


def test_a_long_streamed_reply_ends_as_the_same_rendering_history_shows(page: Page) -> None:
    paragraph = "The cell read the file and counted every row of the report twice.\n\n"
    block = paragraph * 40 + "```python\n" + "total = sum(rows)\n" * 50 + "```\n\n- a\n- b\n\n"
    with serve([block * 30]) as running:  # about 130 KB: many parts
        page.goto(running.login_url)
        send(page, "long please")
        live = page.locator(".message-assistant").last
        assert page.locator(".draft").count() == 0
        parts = live.locator(".md-part").count()
        assert parts > 5
        live_text = live.locator(".markdown").evaluate("element => element.textContent")
        page.reload()
        page.locator("body[data-ready=true]").wait_for()
        stored = page.locator(".message-assistant").last
        assert stored.locator(".md-part").count() == parts
        assert stored.locator(".markdown").evaluate("element => element.textContent") == live_text
