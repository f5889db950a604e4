"""Chat basics in a real Chromium at 1280 px and 390 px: Stop, Copy, no sideways page scroll,
a 1 MB streamed reply (no timing asserts: bench/bench_ui_browser.py measures the times)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from clawcell import Tool
from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from clawcell.ui import canvas_tool
from tests.ui.browser.conftest import Running, screenshot, send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

WIDTHS = [pytest.param(1280, id="desktop"), pytest.param(390, id="narrow")]
REPLY = (
    "## A reply with the basics\n\nA table:\n\n| name | value | note |\n|---|---|---|\n"
    "| alpha | 1 | " + "wide " * 30 + "|\n\n> a quoted line\n\n- one\n- two\n\n"
    '```python\ndef greet(name):\n    return f"hello {name}"\n```\n\n'
    "A long word: " + "x" * 300
)


def _page(browser: Browser, width: int) -> Page:
    context = browser.new_context(viewport={"width": width, "height": 860})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    return context.new_page()


def _no_sideways_scroll(page: Page) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths


@pytest.mark.parametrize("width", WIDTHS)
def test_the_basics_render_copy_works_and_no_page_scrolls_sideways(
    browser: Browser, width: int
) -> None:
    page = _page(browser, width)
    with serve([REPLY]) as running:
        page.goto(running.login_url)
        send(page, "show me the basics")
        reply = page.locator(".message-assistant").last
        assert reply.locator(".markdown table").count() == 1
        assert reply.locator("blockquote").inner_text() == "a quoted line"
        assert reply.locator("pre code span.k").first.inner_text() == "def"  # highlighted
        _no_sideways_scroll(page)
        reply.get_by_role("button", name="Copy code").click()
        assert page.evaluate("navigator.clipboard.readText()") == (
            'def greet(name):\n    return f"hello {name}"\n'
        )
        reply.get_by_role("button", name="Copy message").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == REPLY  # the Markdown, as written
        name = "desktop" if width == 1280 else "narrow"
        screenshot(page, f"basics-{name}")
        if width == 390:
            page.get_by_role("button", name="Sessions").click()
            page.locator("body.drawer-open").wait_for()
            screenshot(page, "drawer-narrow")
        page.goto(running.base + "/playground")
        _no_sideways_scroll(page)
        screenshot(page, f"playground-{name}")
    page.context.close()


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


@pytest.mark.parametrize("width", WIDTHS)
def test_stop_ends_a_running_turn_and_the_next_turn_works(browser: Browser, width: int) -> None:
    page = _page(browser, width)
    cancelled: list[str] = []
    turns = [exec_call('text("holding"); return await hold();', title="held"), "back again"]
    with serve(turns, tools=_hold_tools(cancelled)) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#composer textarea", "hold it")
        page.click("#composer button.send")
        page.locator(".cell .out-text", has_text="holding").wait_for()
        page.get_by_role("button", name="Stop").click()
        page.wait_for_selector("body[data-turn=done]")
        assert page.locator(".turn-stopped").count() == 1
        assert page.locator(".cell .status").last.inner_text() == "stopped"
        name = "desktop" if width == 1280 else "narrow"
        screenshot(page, f"stopped-{name}")
        assert cancelled == ["hold"]  # the tool the cell waited on was cancelled
        transcript = _transcript(running)
        assert transcript[-1]["stopReason"] == "aborted"
        send(page, "try again")
        assert "back again" in page.locator(".message-assistant").last.inner_text()
        assert not page.get_by_role("button", name="Stop").is_visible()
    page.context.close()


def _transcript(running: Running) -> list[dict[str, Any]]:
    return running.call(running.store.read_transcript("main"))


def test_a_1_mb_streamed_reply_completes(page: Page) -> None:
    # The size issue 23 names (about 45 s of one worker): the rendering that was quadratic
    # before it never finished 1 MB and took 739 s on 100 KB, far past the timeout below.
    line = "streamed words in a long reply, line after line of them.\n"
    reply = line * (1_000_000 // len(line))
    with serve([reply]) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#composer textarea", "a lot please")
        page.click("#composer button.send")
        page.wait_for_selector("body[data-turn=done]", timeout=600_000)
        message = page.locator(".message-assistant").last
        assert "message-long" in (message.get_attribute("class") or "")
        assert page.locator(".draft").count() == 0  # the final Markdown replaced the draft
        text = message.locator(".message-body").text_content() or ""
        assert text.count("line after line") == len(reply) // len(line)


def test_the_hidden_attribute_hides_every_element_whatever_its_display_rule(
    browser: Browser,
) -> None:
    """`.composer { display: flex }` once beat `hidden` until a later stylesheet loaded:
    every element of a chat page, given `hidden`, must compute `display: none`."""
    page = _page(browser, 1280)
    with serve([REPLY]) as running:
        page.goto(running.login_url)
        send(page, "show me the basics")
        shown = page.evaluate(
            """() => [...document.querySelectorAll('body *')].flatMap((el) => {
                 const had = el.hidden;
                 el.hidden = true;
                 const display = getComputedStyle(el).display;
                 el.hidden = had;
                 return display === 'none' ? [] : [el.tagName + '.' + el.className];
               })"""
        )
        assert page.locator("body *").count() > 50  # a rendered reply, not an empty page
        assert shown == []
