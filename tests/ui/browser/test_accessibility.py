"""WCAG 2.2 AA in Chromium at 1280 px (light) and 390 px (dark): no serious axe violation on
the chat (a rich reply, a running turn with Stop and a queue, an approval card), a skip link to
the message box, focus kept after Stop and Approve, the drawer closing on Escape and outside,
and a warning while an approval waits that sending a message expires it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from clawcell import Tool
from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from clawcell.ui import canvas_tool
from tests.ui.browser._axe import serious_violations
from tests.ui.browser.conftest import screenshot, send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

LOOKS = [
    pytest.param(1280, "light", id="desktop-light"),
    pytest.param(390, "dark", id="phone-dark"),
]
RICH = (
    "## Findings\n\n| name | value | note |\n|:--|--:|:-:|\n| alpha | 1 | " + "wide " * 30 + "|\n\n"
    "> quoted\n\n- [docs](https://example.com/docs)\n- ~~old~~ new\n\n"
    "```python\ndef greet(name):\n    return f'hello {name}' + '" + "x" * 120 + "'\n```\n"
)
PAY = 'text("asking"); return await pay({ amount: 500 });'


def _tools(store: MemoryStore) -> list[Tool]:
    async def pay(arguments: dict[str, Any]) -> str:
        return f"paid {arguments['amount']}"

    async def hold(_: dict[str, Any]) -> str:
        import asyncio

        await asyncio.Event().wait()
        return "never"

    approval = Tool(name="pay", execute=pay, approval=lambda p: f"over 100 ({p['amount']})")
    return [canvas_tool(store), approval, Tool(name="hold", execute=hold)]


def _page(browser: Browser, width: int, scheme: str) -> Page:
    context = browser.new_context(viewport={"width": width, "height": 860},
                                  color_scheme="dark" if scheme == "dark" else "light")  # fmt: skip
    return context.new_page()


@pytest.mark.parametrize(("width", "scheme"), LOOKS)
def test_the_chat_has_no_serious_axe_violation_in_any_state(
    browser: Browser, width: int, scheme: str
) -> None:
    page = _page(browser, width, scheme)
    turns = [RICH, exec_call(PAY, title="pay"), "paid.", exec_call("return await hold();")]
    name = f"{'desktop' if width == 1280 else 'phone'}-{scheme}"
    with serve(turns, tools=_tools) as running:
        page.goto(running.login_url)
        send(page, "the findings")
        assert serious_violations(page) == []
        send(page, "pay it")
        page.locator("form.approval").wait_for()
        warning = page.locator("#pending-warning")
        assert warning.is_visible()  # sending now would expire the card: the page says so
        assert warning.inner_text().startswith("An approval is waiting above: sending a message")
        assert serious_violations(page) == []  # the card: Approve / Deny contrast and size
        screenshot(page, f"a11y-approval-{name}")
        page.locator("form.approval button.approve").click()
        assert page.evaluate("document.activeElement.id") == "message"  # not lost on <body>
        page.locator(".message-assistant", has_text="paid.").wait_for()
        assert warning.is_hidden()
        page.wait_for_selector("body[data-turn=done]")
        page.fill("#composer textarea", "hold")
        page.press("#composer textarea", "Enter")
        page.get_by_role("button", name="Stop").wait_for()
        page.fill("#composer textarea", "next one")
        page.press("#composer textarea", "Enter")
        page.locator("#queue .queued").wait_for()
        assert serious_violations(page) == []  # Stop, Queue and the queue's buttons
        screenshot(page, f"a11y-running-{name}")
        page.get_by_role("button", name="Stop").click()
        assert page.evaluate("document.activeElement.id") == "message"
    page.context.close()


def test_the_first_tab_offers_a_skip_link_to_the_message_box(page: Page) -> None:
    with serve([]) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to the message box"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "message"


def test_the_drawer_closes_on_escape_and_on_a_tap_outside(browser: Browser) -> None:
    page = _page(browser, 390, "dark")
    with serve([]) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        toggle = page.get_by_role("button", name="Sessions")
        toggle.click()
        page.locator("body.drawer-open").wait_for()
        page.keyboard.press("Escape")
        page.locator("body:not(.drawer-open)").wait_for()
        assert toggle.get_attribute("aria-expanded") == "false"
        assert page.evaluate("document.activeElement.id") == "drawer-toggle"
        toggle.click()
        page.locator("body.drawer-open").wait_for()
        page.mouse.click(380, 500)  # the transcript, beside the drawer
        page.locator("body:not(.drawer-open)").wait_for()
    page.context.close()


@pytest.mark.parametrize(("width", "scheme"), LOOKS)
def test_a_refused_message_shows_an_error_banner_with_details_and_copy(
    browser: Browser, width: int, scheme: str
) -> None:
    page = _page(browser, width, scheme)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    with serve([]) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#composer textarea", "x" * 100_001)  # over the cap: the server refuses
        page.press("#composer textarea", "Enter")
        banner = page.get_by_role("alert")
        banner.wait_for()
        assert banner.locator("p").inner_text() == "⚠ The message was not sent."
        banner.locator("summary").click()
        assert (
            banner.locator("pre")
            .inner_text()
            .startswith('400: the body must be JSON `{"text": …}` with 1–100000 characters')
        )
        assert serious_violations(page) == []
        screenshot(page, f"error-banner-{'desktop' if width == 1280 else 'phone'}-{scheme}")
        banner.get_by_role("button", name="Copy error details").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.startswith("The message was not sent.\n400: the body must be JSON")
        banner.get_by_role("button", name="Dismiss").click()
        assert page.get_by_role("alert").count() == 0
        assert page.evaluate("document.activeElement.id") == "message"
        assert page.locator("body[data-turn=done]").count() == 1  # no turn runs
    page.context.close()


def test_the_session_list_is_bounded_and_the_search_box_finds_the_rest(browser: Browser) -> None:
    page = _page(browser, 390, "dark")
    with serve([]) as running:
        for n in range(60):
            entry = [{"role": "user", "content": [{"type": "text", "text": f"plan {n:02d}"}]}]
            running.call(running.store.append_transcript(f"project-{n:02d}", entry))
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        assert page.locator("#session-list li").count() == 50
        more = page.get_by_role("button", name="Show more sessions")
        page.get_by_role("button", name="Sessions").click()
        more.click()
        expect(page.locator("#session-list li")).to_have_count(60)  # the next page, appended
        assert more.is_hidden()
        page.get_by_role("searchbox", name="Search session titles").fill("PLAN 0")
        expect(page.locator("#session-list li")).to_have_count(10)  # the server's answer
        names = page.locator("#session-list li .session-title").all_inner_texts()
        assert sorted(names) == [f"plan 0{n}" for n in range(10)]
        assert serious_violations(page) == []
        screenshot(page, "sessions-search-phone-dark")
    page.context.close()
