"""A reply still streaming in a real Chromium: its draft shows placeholders where the finished
reply will render media and canvases, never a raw `MEDIA:` line, embed or reply tag, at 1280
and 390 px (screenshots in build/ui-screenshots/draft-*.png)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest
from playwright.sync_api import Browser

from clawcell.store import MemoryStore
from tests.ui._fakes import Event, FakeAgent, Gate, reply_event
from tests.ui.browser.conftest import screenshot, serve_agent

pytestmark = pytest.mark.slow  # each test starts a server and a browser

DELTAS = [
    "[[reply_to_current]] Here is this week's chart:\nMED",
    "IA:https://cdn.example.com/reports/weekly-chart.png\n",
    "[[audio_as_voice]]\n",
    '[embed ref="cv_status" title="Status board" /]\n',
    "And the numbers behind it are in the summ",
]
FINAL = "".join(DELTAS) + "ary."


def _factory(gate: Gate) -> Any:
    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="turn_started")
        for text in DELTAS:
            yield Event(type="text_delta", fields={"text": text})
        await gate.wait()
        yield Event(type="text_delta", fields={"text": "ary."})
        yield reply_event(FINAL)
        yield Event(type="turn_finished")

    @contextlib.asynccontextmanager
    async def factory() -> AsyncGenerator[FakeAgent]:
        agent = FakeAgent([turn])
        agent.store = MemoryStore()  # type: ignore[attr-defined]  # what `serve_agent` reads
        yield agent

    return factory


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_streaming_draft_shows_placeholders_not_directives(
    browser: Browser, width: int, height: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    gate = Gate()
    try:
        with serve_agent(_factory(gate)) as running:
            page.goto(running.login_url)
            page.wait_for_selector("body[data-ready=true]")
            page.fill("#composer textarea", "Send me the chart.")
            page.click("#composer button.send")
            draft = page.locator(".draft")
            draft.get_by_text("And the numbers behind it are in the summ").wait_for()
            shown = draft.inner_text()
            for raw in ("MEDIA", "[[", "[embed", "cv_status"):
                assert raw not in shown, shown
            placeholders = draft.locator(".draft-directive").all_inner_texts()
            assert placeholders == ["attaching weekly-chart.png…", "embedding Status board…"]
            assert shown.startswith("Here is this week's chart:")
            screenshot(page, f"draft-streaming-{width}")
            gate.release()
            page.wait_for_selector("body[data-turn=done]")
            assert draft.count() == 0  # the rendered reply took the draft's place
            reply = page.locator(".message-assistant").last
            assert "summary." in reply.inner_text() and "MEDIA" not in reply.inner_text()
            screenshot(page, f"draft-rendered-{width}")
    finally:
        context.close()
