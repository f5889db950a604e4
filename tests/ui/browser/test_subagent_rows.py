"""Sub-agent runs in a real Chromium: the row in the parent's turn opens the child session, at
desktop and phone widths (screenshots in `build/ui-screenshots/subagents-*.png`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

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
from tests.ui._gated import CHILD_REPLY, gated_agent
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
            # Waits for the page's stylesheets too: the `hidden` composer is hidden by
            # subagents.css's rule, which can apply after the paragraph is shown.
            expect(page.locator("#composer")).to_be_hidden()
            assert "One line on comets, please." in page.locator("#transcript").inner_text()
            screenshot(page, f"subagents-child-{width}")
            page.click("p.child-session a")
            page.wait_for_selector("details.subagent-run", state="attached")
    finally:
        context.close()


def _gated_factory(gate: asyncio.Event) -> Any:
    @contextlib.asynccontextmanager
    async def factory() -> AsyncGenerator[Agent]:
        async with gated_agent(gate) as agent:
            yield agent

    return factory


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_streaming_turn_shows_its_sub_agent_row_live(
    browser: Browser, width: int, height: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    page: Page = context.new_page()
    gate = asyncio.Event()
    try:
        with serve_agent(_gated_factory(gate)) as running:
            page.goto(running.login_url)
            page.wait_for_selector("body[data-ready=true]")
            page.fill("#composer textarea", "Run the gated task.")
            page.click("#composer button.send")
            row = page.locator("details.work details.subagent-run")
            row.locator(".status-running").wait_for()  # while the run (and the turn) waits
            assert page.evaluate("document.body.dataset.turn") == "running"
            row.locator("summary").click(position={"x": 8, "y": 8})
            assert "Wait for the gate." in row.inner_text()
            screenshot(page, f"subagents-live-running-{width}")
            running.loop.call_soon_threadsafe(gate.set)
            row.locator(".status-completed").wait_for(state="attached")
            page.wait_for_selector("body[data-turn=done]")
            page.click("details.work > summary")  # the reply folded the turn's work
            assert row.count() == 1 and row.evaluate("d => d.open")  # redrawn, kept open
            assert CHILD_REPLY in row.inner_text()
            summary = page.locator("details.work > summary").inner_text()
            assert summary.endswith("· 1 cell · 1 sub-agent")
            screenshot(page, f"subagents-live-done-{width}")
    finally:
        context.close()


def test_a_child_session_loads_its_older_messages(page: Page) -> None:
    entries = [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": [{"type": "text", "text": f"Child message {i}."}]}
        for i in range(130)
    ]  # fmt: skip
    with serve_agent(_factory) as running:
        running.call(running.store.append_transcript("main/sub/1", entries))
        page.goto(running.login_url)
        page.goto(f"{running.base}/?session=main%2Fsub%2F1")
        page.wait_for_selector("body[data-ready=true]")
        page.evaluate("document.getElementById('transcript').scrollTop = 0")  # the reader goes up
        # In the transcript: the session drawer also shows this text (the session's title).
        page.locator("#transcript").get_by_text("Child message 0.", exact=True).wait_for()
        assert page.locator("#load-older").count() == 0  # the first page came: nothing older
