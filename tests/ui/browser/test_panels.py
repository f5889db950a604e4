"""The playground's approval cards and run history, and the Jobs panel, in a real Chromium at
1280 px and 390 px (screenshots in build/ui-screenshots/, the chosen ones in docs/)."""

from __future__ import annotations

from typing import Any, cast

import pytest
from playwright.sync_api import Browser, FloatRect, Locator, Page

from clawcell import Tool
from clawcell.automations import PayloadRunner, Scheduler
from clawcell.store import MemoryStore, job_store_for
from clawcell.tools import automations
from clawcell.ui import canvas_tool
from tests.ui.browser.conftest import Running, screenshot, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

WIDTHS = [pytest.param(1280, id="desktop"), pytest.param(390, id="narrow")]
GATED = (
    'text("asking to pay");\n'
    "try { return await pay({ amount: 500, to: \"<img src=x onerror='window.pwned=1'>\" }); }\n"
    "catch (error) { return `refused: ${error.message}`; }"
)


def _page(browser: Browser, width: int) -> Page:
    return browser.new_context(viewport={"width": width, "height": 860}).new_page()


def _no_sideways_scroll(page: Page) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths


def _pay_tools(paid: list[int]) -> Any:
    async def pay(arguments: dict[str, Any]) -> str:
        paid.append(int(arguments["amount"]))
        return f"paid {arguments['amount']}"

    def tools(store: MemoryStore) -> list[Tool]:
        return [canvas_tool(store), Tool(name="pay", execute=pay, approval="always")]

    return tools


def _buttons_share_a_row(card: Locator) -> None:
    """Approve and Deny sit side by side inside the card, whatever its width."""
    boxes = [card.get_by_role("button", name=n).bounding_box() for n in ("Approve", "Deny")]
    frame = card.bounding_box()
    assert frame is not None and all(box is not None for box in boxes), boxes
    approve, deny = (cast(FloatRect, box) for box in boxes)
    assert abs(approve["y"] - deny["y"]) < 1 and approve["x"] + approve["width"] <= deny["x"]
    assert deny["x"] + deny["width"] <= frame["x"] + frame["width"]


def _exec(page: Page, code: str) -> None:
    page.fill("#code", code)
    page.click("#cell-form button[value=exec]")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_playground_run_waits_on_a_card_and_continues_when_approved(
    browser: Browser, width: int
) -> None:
    page = _page(browser, width)
    paid: list[int] = []
    name = "desktop" if width == 1280 else "narrow"
    with serve([], tools=_pay_tools(paid)) as running:
        page.goto(running.login_url)
        page.goto(running.base + "/playground")
        page.wait_for_selector("body[data-ready=true]")
        _exec(page, 'return "warm up";')
        page.locator("#runs .cell .status-completed").wait_for()
        _exec(page, GATED)
        card = page.locator("form.approval")
        card.wait_for()
        newest = page.locator("#runs .cell").first
        assert newest.locator(".status").inner_text() == "waiting for approval"
        assert newest.locator(".approval-tool").inner_text() == "pay"
        assert newest.locator(".envelope").get_attribute("open") is None  # folded
        assert page.evaluate("window.pwned") is None
        _no_sideways_scroll(page)
        _buttons_share_a_row(card)
        screenshot(page, f"playground-approval-{name}")
        card.locator("input[name=note]").fill("fine")
        card.get_by_role("button", name="Approve").click()
        page.locator("#runs .cell").nth(2).wait_for()
        page.wait_for_selector("body[data-run=done]")
        continued = page.locator("#runs .cell").first
        continued.locator(".status-completed").wait_for()
        assert continued.locator(".cell-value pre").inner_text() == '"paid 500"'
        assert page.locator(".approval-approve").inner_text().startswith("approved by control-ui")
        assert paid == [500]
        _no_sideways_scroll(page)
        screenshot(page, f"playground-history-{name}")
    page.context.close()


def test_a_superseded_playground_card_cannot_run_its_tool(page: Page) -> None:
    paid: list[int] = []
    with serve([], tools=_pay_tools(paid)) as running:
        page.goto(running.login_url)
        page.goto(running.base + "/playground")
        page.wait_for_selector("body[data-ready=true]")
        _exec(page, GATED)
        stale = page.locator("form.approval")
        stale.wait_for()
        approve = stale.get_by_role("button", name="Approve")
        # A second page (a stale tab) still shows the live card after the session moves on.
        other = page.context.new_page()
        other.goto(running.base + "/playground")
        other.wait_for_selector("body[data-ready=true]")
        _exec(page, 'return "moved on";')
        page.locator("#runs .cell .status-expired").wait_for()  # folded, status in the row
        expired = page.locator(".approval-expired").text_content() or ""
        assert "a newer run in this session moved it on" in expired
        assert approve.count() == 0  # this page's card was replaced
        other.get_by_role("button", name="Approve").click()
        error = other.locator(".approval-error")
        error.wait_for(state="visible")
        assert error.inner_text().startswith("⚠ 409: ")
        assert "expired (superseded)" in error.inner_text()
        assert paid == []


def _jobs_tools(store: MemoryStore) -> list[Tool]:
    return [canvas_tool(store), *automations(store)]


def _add_jobs(running: Running) -> list[str]:
    tool = running.agent.mode("playground").catalog.binding("automations").tool
    specs = [
        {"name": "nightly report",
         "schedule": {"kind": "cron", "expr": "0 3 * * *", "tz": "Europe/Paris"},
         "payload": {"kind": "cell", "code": 'text("writing"); return { pages: 3 };'}},
        {"name": "inbox check", "schedule": {"kind": "every", "everyMs": 900_000},
         "payload": {"kind": "agentTurn", "prompt": "Summarise new mail"}},
        {"name": "new year", "schedule": {"kind": "at", "at": "2027-01-01T00:00:00+00:00"},
         "payload": {"kind": "cell", "code": 'text("happy new year")'}, "enabled": False},
    ]  # fmt: skip

    async def add() -> list[str]:
        return [(await tool.execute({"action": "add", "job": spec}))["id"] for spec in specs]

    return running.call(add())


@pytest.mark.parametrize("width", WIDTHS)
def test_the_jobs_panel_pauses_resumes_and_runs_now(browser: Browser, width: int) -> None:
    page = _page(browser, width)
    name = "desktop" if width == 1280 else "narrow"
    with serve([], tools=_jobs_tools) as running:
        ids = _add_jobs(running)
        page.goto(running.login_url)
        page.get_by_role("link", name="Jobs").click()
        page.wait_for_selector("body[data-ready=true]")
        assert page.locator("article.job").count() == 3
        first = page.locator(f"#job-{ids[0]}")
        assert first.locator("dd").first.inner_text() == "cron 0 3 * * * (Europe/Paris)"
        assert page.locator(f"#job-{ids[2]} .job-state").inner_text() == "paused"
        _no_sideways_scroll(page)
        first.get_by_role("button", name="Pause").click()
        page.locator(f"#job-{ids[0]}.job-paused").wait_for()
        assert page.locator("#jobs-message").inner_text().startswith("Paused nightly report")
        page.locator(f"#job-{ids[0]}").get_by_role("button", name="Resume").click()
        page.locator(f"#job-{ids[0]}:not(.job-paused)").wait_for()
        page.locator(f"#job-{ids[1]}").get_by_role("button", name="Run now").click()
        page.locator(f"#job-{ids[1]} .job-facts .run-queued").wait_for()
        page.locator(f"#job-{ids[1]} .job-runs summary").click()
        enabled = running.call(_enabled(running, ids))
        assert enabled == [True, True, False]
        page.locator(f"#job-{ids[0]}").get_by_role("button", name="Run now").click()
        page.locator(f"#job-{ids[0]} .job-facts .run-queued").wait_for()
        running.call(_work(running))  # a worker runs the queued cell; the page polls
        page.locator(f"#job-{ids[0]} .job-facts .run-ok").wait_for()
        page.locator(f"#job-{ids[1]} .job-facts .run-error").wait_for()  # no agent for turns
        assert page.locator('[data-stat="failing"] strong').inner_text() == "1"  # recounted
        page.locator(f"#job-{ids[0]} .job-runs summary").click()
        assert page.locator(f"#job-{ids[0]} .run-summary").inner_text() == '{"pages": 3}'
        _no_sideways_scroll(page)
        screenshot(page, f"jobs-{name}")
    page.context.close()


async def _work(running: Running) -> None:
    store = running.store
    scheduler = Scheduler(job_store_for(store), PayloadRunner(tools=[], session_store=store))
    await scheduler.tick()
    await scheduler.drain()


async def _enabled(running: Running, ids: list[str]) -> list[bool]:
    tool = running.agent.mode("playground").catalog.binding("automations").tool
    return [(await tool.execute({"action": "get", "jobId": i}))["enabled"] for i in ids]
