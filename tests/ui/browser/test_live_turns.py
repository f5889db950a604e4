"""Turns that belong to the server, in Chromium at 1280 px (light) and 390 px (dark): a reload,
a second tab, a followed link and a network drop all leave the turn running and the page
follows it again; Enter during a turn queues the message visibly; Stop stops the running turn,
never the queued message, and leaves focus on the message box."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from clawcell import Tool
from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from clawcell.ui import canvas_tool
from tests.ui.browser.conftest import screenshot, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

LOOKS = [
    pytest.param(1280, "light", id="desktop-light"),
    pytest.param(390, "dark", id="phone-dark"),
]
HOLD = exec_call('text("so far, so good"); return await hold();', title="held")


def _hold_tools(cancelled: list[str]) -> Any:
    async def hold(_: dict[str, Any]) -> str:
        import asyncio

        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append("hold")
            raise
        return "never"

    def tools(store: MemoryStore) -> list[Tool]:
        return [canvas_tool(store), Tool(name="hold", execute=hold)]

    return tools


def _page(browser: Browser, width: int, scheme: str) -> Page:
    context = browser.new_context(
        viewport={"width": width, "height": 860},
        color_scheme="dark" if scheme == "dark" else "light",
    )
    return context.new_page()


def _start_held_turn(page: Page) -> None:
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#composer textarea", "hold it")
    page.press("#composer textarea", "Enter")
    page.locator(".cell .out-text", has_text="so far, so good").wait_for()


@pytest.mark.parametrize(("width", "scheme"), LOOKS)
def test_a_reload_and_a_second_tab_follow_the_running_turn_and_stop_spares_the_queue(
    browser: Browser, width: int, scheme: str
) -> None:
    page = _page(browser, width, scheme)
    cancelled: list[str] = []
    with serve([HOLD, "the queued one, answered"], tools=_hold_tools(cancelled)) as running:
        page.goto(running.login_url)
        _start_held_turn(page)
        page.reload()  # the turn goes on; the page draws it again from its backlog
        page.wait_for_selector("body[data-ready=true]")
        page.locator(".cell .out-text", has_text="so far, so good").wait_for()
        assert page.get_by_role("button", name="Stop").is_visible()
        assert page.locator(".message-user", has_text="hold it").count() == 1
        other = page.context.new_page()  # another tab of the same session
        other.goto(running.base + "/")
        other.locator(".cell .out-text", has_text="so far, so good").wait_for()
        assert other.get_by_role("button", name="Stop").is_visible()
        page.fill("#composer textarea", "and then this")
        page.press("#composer textarea", "Enter")  # not a second turn: it queues
        for tab in (page, other):
            tab.locator("#queue .queued-text", has_text="and then this").wait_for()
        assert page.locator(".message-user").count() == 1
        name = f"{'desktop' if width == 1280 else 'phone'}-{scheme}"
        screenshot(page, f"queue-{name}")
        page.get_by_role("button", name="Stop").click()
        assert page.evaluate("document.activeElement.id") == "message"  # focus stays useful
        page.locator(".message-assistant", has_text="the queued one, answered").wait_for()
        page.wait_for_selector("body[data-turn=done]")
        assert page.locator(".cell .status").first.inner_text() == "stopped"
        assert page.locator("#queue").is_hidden()
        other.locator(".message-assistant", has_text="the queued one, answered").wait_for()
        assert [m.inner_text() for m in page.locator(".message-user .message-body").all()] == [
            "hold it",
            "and then this",
        ]
        assert cancelled == ["hold"]
        page.reload()  # after the turns: stopped, with its output, not failed
        page.wait_for_selector("body[data-ready=true]")
        page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        assert page.locator(".cell .status").first.inner_text() == "stopped"
        assert page.locator(".cell .out-text", has_text="so far, so good").count() == 1
        screenshot(page, f"stopped-reloaded-{name}")
    page.context.close()


@pytest.mark.parametrize(("width", "scheme"), LOOKS)
def test_a_followed_link_and_a_network_drop_leave_the_turn_running_and_the_page_reconnects(
    browser: Browser, width: int, scheme: str
) -> None:
    page = _page(browser, width, scheme)
    cancelled: list[str] = []
    with serve([HOLD], tools=_hold_tools(cancelled)) as running:
        page.goto(running.login_url)
        _start_held_turn(page)
        page.get_by_role("link", name="Playground").click()  # leave the page mid-turn
        page.wait_for_url("**/playground")
        page.go_back()
        page.locator(".cell .out-text", has_text="so far, so good").wait_for()
        assert page.get_by_role("button", name="Stop").is_visible()
        page.context.set_offline(True)  # the live stream breaks
        page.locator("#connection", has_text="reconnecting").wait_for()
        screenshot(page, f"reconnecting-{'desktop' if width == 1280 else 'phone'}-{scheme}")
        page.context.set_offline(False)
        page.locator("#connection").wait_for(state="hidden", timeout=30_000)
        assert cancelled == []  # nothing of that stopped the turn
        page.get_by_role("button", name="Stop").click()
        page.locator(".turn-stopped").wait_for()  # delivered over the new connection
        page.wait_for_selector("body[data-turn=done]")
        assert cancelled == ["hold"]
    page.context.close()


def test_links_in_a_reply_open_in_a_new_tab_without_a_handle_on_this_one(page: Page) -> None:
    with serve(["See [the docs](https://example.com/docs) please."]) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#composer textarea", "a link?")
        page.click("#composer button.send")
        link = page.locator(".message-assistant a", has_text="the docs")
        link.wait_for()
        assert link.get_attribute("target") == "_blank"
        assert link.get_attribute("rel") == "noopener noreferrer"
