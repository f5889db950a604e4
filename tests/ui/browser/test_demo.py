"""`clawcell serve --demo` in a real Chromium: every render path on one page, then a live turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from clawcell.ui._demo._agent import demo_agent
from tests.ui.browser.conftest import expand, screenshot, send, serve_agent

pytestmark = pytest.mark.slow  # each test starts a server and a browser


def test_the_demo_shows_every_render_path_and_answers_live(page: Page, tmp_path: Path) -> None:
    with serve_agent(lambda: demo_agent(tmp_path), media_roots=(tmp_path,)) as running:
        page.set_viewport_size({"width": 1200, "height": 2400})
        page.goto(running.login_url)
        transcript = page.locator("#transcript")
        assert transcript.locator("h2", has_text="Rich output").count() == 1
        # `evaluate` has no timeout: awaiting `img.decode()` there could hang the suite.
        loaded = page.wait_for_function(
            "() => { const img = document.querySelector('#transcript .attachment-image img');"
            " return img && img.complete && img.naturalWidth; }",
            timeout=60_000,
        )
        assert loaded.json_value() == 240
        assert transcript.locator(".voice-note audio").count() == 1
        assert transcript.locator(".reply-target").count() == 2
        frames = transcript.locator("iframe")
        assert [frames.nth(i).get_attribute("sandbox") for i in range(3)] == [
            "allow-scripts", "allow-scripts", ""
        ]  # fmt: skip
        strict = page.frame_locator("iframe[title='Same canvas, strict ceiling']")
        assert "blocked" in strict.locator("#state").inner_text()
        page.frame_locator("iframe[title='Interactive canvas']").locator(
            "#state", has_text="ran"
        ).wait_for()
        assert transcript.locator(".canvas .blocked").count() == 1
        assert transcript.locator(".out-truncated").count() == 1
        assert transcript.locator(".status-waiting").count() == 2  # a `yield`, an approval
        approval = transcript.locator("form.approval")
        assert approval.locator(".approval-tool").inner_text() == "deploy"
        assert approval.locator(".approval-reason").inner_text() == (
            "this tool always asks for approval"
        )
        assert transcript.locator(".status-failed").inner_text() == "threw an error"
        widget = page.frame_locator("iframe.widget-frame")
        widget.locator("#clock", has_text="rendered at").wait_for()
        assert transcript.locator(".youtube-card .youtube-play").count() == 1
        counter = page.frame_locator("iframe.mcp-app-frame")
        counter.locator("#state", has_text="host: clawcell").wait_for()
        assert counter.locator("#count").inner_text() == "1"
        page.evaluate("document.getElementById('transcript').scrollTop = 0")
        screenshot(page, "demo")
        send(page, "Hello demo")
        expand(page)
        card = page.locator(".cell").last
        assert card.locator(".out-text").all_inner_texts() == [
            "step 1 of 3", "step 2 of 3", "step 3 of 3"
        ]  # fmt: skip
        assert "You said:" in page.locator(".message-assistant").last.inner_text()
        # The message moved the session on: the old card expired, it can no longer deploy.
        expired = approval.locator(".approval-expired")
        expired.wait_for()
        assert "a newer message moved the session on; the call did not run" in (
            expired.inner_text()
        )
        assert approval.locator("button.approve").count() == 0
