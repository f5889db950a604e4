"""Sub-agent runs in a real Chromium: the row in the parent's turn opens the child session, at
desktop and phone widths (screenshots in `build/ui-screenshots/subagents-*.png`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator

import pytest
from playwright.sync_api import Browser, Page

from clawcell import Limits
from clawcell.agent import (
    Agent,
    ModelRequest,
    ScriptedModel,
    SubagentProfile,
    exec_call,
    subagent_tools,
)
from clawcell.store import MemoryStore
from tests.ui.browser.conftest import screenshot, send, serve_agent

FAN_OUT = """
const topics = ["tides", "comets", "lichens"];
const hs = await Promise.all(topics.map((t) =>
  sessions_spawn({profile: "researcher", task: `One line on ${t}, please.`, label: t})));
return (await agents_wait({runIds: hs.map((h) => h.runId)})).runs.map((r) => r.reply);
"""


@contextlib.asynccontextmanager
async def _factory() -> AsyncGenerator[Agent]:
    def answer(request: ModelRequest) -> str:
        return "Noted: " + request.messages[0]["content"][0]["text"]

    researcher = SubagentProfile(
        name="researcher", model=ScriptedModel([answer] * 3, name="small-model")
    )
    parent = ScriptedModel([exec_call(FAN_OUT), "All three answers are in."])
    async with Agent(model=parent, store=MemoryStore(), limits=Limits(timeout_ms=60_000)) as agent:
        subagent_tools(agent, [researcher])
        yield agent


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_sub_agent_row_opens_its_child_session(browser: Browser, width: int, height: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    page: Page = context.new_page()
    try:
        with serve_agent(_factory) as running:
            page.goto(running.login_url)
            send(page, "Research three topics at once.")
            page.goto(f"{running.base}/?session=main")
            page.click("details.work > summary")
            rows = page.locator("details.subagent-run")
            assert rows.count() == 3
            assert all(not rows.nth(i).evaluate("d => d.open") for i in range(3))
            rows.nth(1).locator("summary").click(position={"x": 8, "y": 8})
            assert "Noted: One line on comets, please." in rows.nth(1).inner_text()
            screenshot(page, f"subagents-parent-{width}")
            # the row's link fits the width and opens the child session, read-only
            box = rows.nth(1).locator("a.subagent-open").bounding_box()
            assert box is not None and box["x"] + box["width"] <= width
            rows.nth(1).locator("a.subagent-open").click()
            page.wait_for_selector("p.child-session")
            assert page.locator("#composer").is_hidden()
            assert "One line on comets, please." in page.locator("#transcript").inner_text()
            screenshot(page, f"subagents-child-{width}")
            page.click("p.child-session a")
            page.wait_for_selector("details.subagent-run", state="attached")
    finally:
        context.close()
