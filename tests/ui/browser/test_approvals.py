"""Approval prompts in a real Chromium: a turn pauses on a card, Approve / Deny continue it."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from clawcell import Tool
from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from clawcell.ui import canvas_tool
from clawcell.ui._security import Secrets
from tests.ui.browser.conftest import expand, screenshot, send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

CODE = (
    'text("asking to pay");\n'
    "try { return await pay({ amount: 500, to: \"<img src=x onerror='window.pwned=1'>\" }); }\n"
    "catch (error) { return `refused: ${error.message}`; }"
)


def _tools(store: MemoryStore) -> list[Tool]:
    async def pay(arguments: dict[str, Any]) -> str:
        return f"paid {arguments['amount']}"

    rule = Tool(name="pay", execute=pay, approval=lambda p: f"over 100 EUR ({p['amount']})")
    return [canvas_tool(store), rule]


TURNS = [exec_call(CODE, title="payment"), "The payment cell has finished."]


def _pause_on_the_card(page: Page, login_url: str) -> Any:
    page.goto(login_url)
    send(page, "pay the invoice")
    card = page.locator("form.approval")
    card.wait_for()
    cell = page.locator(".cell").last
    assert cell.locator(".waiting-approval").inner_text().startswith("waiting for approval of pay;")
    assert card.locator(".approval-tool").inner_text() == "pay"
    assert card.locator(".approval-reason").inner_text() == "over 100 EUR (500)"
    assert card.locator(".approval-input").inner_text() == (
        '{\n  "amount": 500,\n  "to": "<img src=x onerror=\'window.pwned=1\'>"\n}'
    )
    assert card.locator("time").inner_text().endswith(" UTC")
    assert page.locator(".message-assistant").count() == 0
    return card


def test_a_turn_pauses_on_an_approval_card_and_approve_streams_the_reply(page: Page) -> None:
    with serve(TURNS, tools=_tools) as running:
        card = _pause_on_the_card(page, running.login_url)
        card.locator("input[name=note]").fill("ok for December")
        screenshot(page, "approval-card")
        card.locator("button.approve").click()
        page.locator(".approval-decided").wait_for()
        page.wait_for_selector("body[data-turn=done]")
        decided = page.locator(".approval-decided").inner_text()
        assert re.fullmatch(
            r"approved by control-ui \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: ok for December", decided
        )  # who decided, and when
        assert card.locator(".approval-tool").inner_text() == "pay"  # the card keeps its context
        expand(page)
        wait_cell = page.locator(".cell").last
        assert wait_cell.locator(".cell-tool").inner_text() == "wait"
        assert wait_cell.locator(".status").inner_text() == "done"
        assert wait_cell.locator(".cell-value pre").inner_text() == '"paid 500"'
        reply = page.locator(".message-assistant").last
        assert reply.inner_text().endswith("The payment cell has finished.")
        assert page.evaluate("window.pwned") is None
        screenshot(page, "approval-approved")


def test_deny_shows_the_denial_in_the_cells_value(page: Page) -> None:
    with serve(TURNS, tools=_tools) as running:
        card = _pause_on_the_card(page, running.login_url)
        card.locator("input[name=note]").fill("not this month")
        card.locator("button.deny").click()
        page.locator(".approval-decided.approval-deny").wait_for()
        page.wait_for_selector("body[data-turn=done]")
        expand(page)
        value = page.locator(".cell").last.locator(".cell-value pre").inner_text()
        assert value == '"refused: Tool \\"pay\\" was not approved: not this month."'
        assert (
            "The payment cell has finished." in page.locator(".message-assistant").last.inner_text()
        )
        screenshot(page, "approval-denied")


def test_a_reloaded_page_still_offers_the_card_and_the_losing_tab_shows_the_outcome(
    page: Page,
) -> None:
    with serve(TURNS, tools=_tools) as running:
        _pause_on_the_card(page, running.login_url)
        page.reload()
        card = page.locator("form.approval")
        assert card.count() == 1
        approval = card.get_attribute("data-approval")
        run = card.get_attribute("data-run")
        assert approval and run
        page.wait_for_selector("body[data-ready=true]")
        # Decide it behind the page's back (a script with the token, as another tab would):
        # the page follows the session, so its card shows the outcome in words, no buttons.
        headers = {"authorization": f"Bearer {running.settings.token}",
                   "x-csrf-token": Secrets(token=running.settings.token).csrf}  # fmt: skip
        url = f"{running.base}/api/sessions/main/runs/{run}/approvals/{approval}"
        decided = httpx.post(url, json={"decision": "approve"}, headers=headers, timeout=60)
        assert decided.status_code == 200 and decided.text.rstrip().endswith('"ops": []}')
        words = page.locator(".approval-decided")
        words.wait_for()
        assert re.fullmatch(
            r"approved by control-ui \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC(: .*)?", words.inner_text()
        )
        assert page.locator("form.approval button[data-decision]").count() == 0
        page.locator(".message-assistant", has_text="The payment cell has finished.").wait_for()
        screenshot(page, "approval-decided-elsewhere")
