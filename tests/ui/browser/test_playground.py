"""The playground in a real Chromium: a cell's live output, its envelope, and `wait`."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.ui.browser.conftest import screenshot, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser


def test_the_playground_runs_a_cell_and_continues_a_waiting_one(page: Page) -> None:
    with serve([]) as running:
        page.goto(running.login_url)
        page.click("text=Playground")
        assert page.url == running.base + "/playground"
        page.wait_for_selector("body[data-ready=true]")
        page.click("#cell-form button[value=exec]")
        card = page.locator("#runs .cell").last
        card.locator(".status-completed").wait_for()
        assert card.locator(".out-text").first.inner_text() == "hello from the playground"
        assert card.locator(".cell-value pre").inner_text() == "42"
        assert card.locator(".envelope").get_attribute("open") is None  # folded by default
        card.locator(".envelope summary").click()
        assert '"status": "completed"' in card.locator(".envelope pre").inner_text()
        screenshot(page, "playground")
        page.fill("#code", 'text("parked"); await yield_control(); return "resumed";')
        page.click("#cell-form button[value=exec]")
        page.locator("#runs .cell .status-waiting").wait_for()
        assert page.input_value("#run-id").startswith("cm_")
        page.click("#wait")
        page.locator("#runs .cell").nth(2).wait_for()
        newest = page.locator("#runs .cell").first  # the history lists the newest run first
        newest.locator(".status-completed").wait_for()
        assert newest.locator(".cell-value pre").inner_text() == '"resumed"'
