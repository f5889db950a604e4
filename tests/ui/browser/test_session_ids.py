"""A session whose id holds every awkward character works end to end in a real Chromium:
sent, stopped-free, reloaded, listed once, its older messages loaded."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import pytest
from playwright.sync_api import Page

from tests.ui.browser.conftest import send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

HOSTILE = "team/a b?c#d%2F&e='x'\"<i>ü</i>\u202e"


def test_a_session_with_a_hostile_id_sends_reloads_and_loads_older_messages(page: Page) -> None:
    entries = [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": [{"type": "text", "text": f"Old message {i}."}]}
        for i in range(120)
    ]  # fmt: skip
    with serve(["Hello back."]) as running:
        running.call(running.store.append_transcript(HOSTILE, entries))
        page.goto(running.login_url)
        page.goto(f"{running.base}/?session={quote(HOSTILE, safe='')}")
        assert page.locator("#transcript").get_attribute("data-session") == HOSTILE
        send(page, "hi there")
        assert "Hello back." in page.locator(".message-assistant").last.inner_text()
        listed = page.locator(".sessions a", has_text="Old message 0.")  # its title
        assert listed.count() == 1 and listed.get_attribute("aria-current") == "page"
        href = listed.get_attribute("href") or ""
        assert parse_qs(urlsplit(href).query)["session"] == [HOSTILE]
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        assert "Hello back." in page.locator(".message-assistant").last.inner_text()
        page.evaluate("document.getElementById('transcript').scrollTop = 0")  # the reader goes up
        page.locator("#transcript").get_by_text("Old message 0.", exact=True).wait_for()
        assert page.locator("#load-older").count() == 0
