"""Rendering in a real Chromium at 1280 px (light) and 390 px (dark): the streaming draft is
Markdown as it arrives (an unfinished fence readable as code), the finished reply strikes,
ticks, links bare URLs safely, keeps wide tables in their own scrolling box and draws a
canvas where its shortcode stood; a `show_widget` report is a static card. Screenshots go to
build/ui-screenshots/markdown-*.png and report-*.png."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from clawcell.ui import widget_tool
from tests.ui._fakes import Event, FakeAgent, Gate, reply_event
from tests.ui.browser._axe import serious_violations
from tests.ui.browser.conftest import screenshot, send, serve, serve_agent

pytestmark = pytest.mark.slow  # each test starts a server and a browser

WIDE = (
    "| " + " | ".join(f"column {n}" for n in range(7)) + " |\n"
    "|" + "---|" * 7 + "\n" + "| " + " | ".join(f"value {n}" for n in range(7)) + " |\n"
)
STREAMED = [
    "## Streaming **as Markdown**\n\nA list:\n\n- one\n- two with `code`\n\n",
    "Now the code:\n\n```python\ndef greet(name):\n    return f'hi {name}'\n",
    "# the fence is still open here\n",
]
REST = "```\n\nDone: ~~old~~ new, see https://example.com/docs.\n"
FINAL = (
    "".join(STREAMED) + REST + "\n- [x] parsed\n- [ ] shipped\n\n"
    "Not a link: javascript:alert(1)\n\n" + WIDE + "\nThe board:\n\n"
    '[embed ref="cv_board" title="Board" height="160" /]\n\nAfter the board.\n'
)
BOARD = (
    b"<!doctype html><meta charset=utf-8><body style='font:15px system-ui;margin:12px'>"
    b"<h3 style='margin:0 0 8px'>Board</h3><p>3 open, 5 done, 1 blocked.</p>"
)
CONTEXTS = [(1280, 900, "light"), (390, 844, "dark")]
IDS = ["desktop-light", "phone-dark"]


def _factory(gate: Gate) -> Any:
    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="turn_started")
        for text in STREAMED:
            yield Event(type="text_delta", fields={"text": text})
        await gate.wait()
        yield Event(type="text_delta", fields={"text": FINAL[len("".join(STREAMED)) :]})
        yield reply_event(FINAL)
        yield Event(type="turn_finished")

    @contextlib.asynccontextmanager
    async def factory() -> AsyncGenerator[FakeAgent]:
        agent = FakeAgent([turn])
        agent.store = MemoryStore()  # type: ignore[attr-defined]  # what `serve_agent` reads
        yield agent

    return factory


def _page(browser: Browser, width: int, height: int, scheme: str) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height},
                                  color_scheme="dark" if scheme == "dark" else "light")  # fmt: skip
    return context.new_page()


@pytest.mark.parametrize(("width", "height", "scheme"), CONTEXTS, ids=IDS)
def test_a_reply_streams_as_markdown_and_renders_every_feature(
    browser: Browser, width: int, height: int, scheme: str
) -> None:
    page, gate = _page(browser, width, height, scheme), Gate()
    name = f"{'desktop' if width == 1280 else 'phone'}-{scheme}"
    try:
        with serve_agent(_factory(gate)) as running:
            running.call(running.store.put_document("cv_board", {"index.html": BOARD}))
            page.goto(running.login_url)
            page.wait_for_selector("body[data-ready=true]")
            page.fill("#composer textarea", "Show me.")
            page.click("#composer button.send")
            draft = page.locator(".draft")
            draft.locator("pre code").get_by_text("the fence is still open").wait_for()
            assert draft.locator("h2 strong").inner_text() == "as Markdown"  # not `**`
            assert draft.locator("li").all_inner_texts() == ["one", "two with code"]
            code = draft.locator(".draft-code pre code").inner_text()
            assert code.startswith("def greet(name):\n    return f'hi {name}'")
            assert "```" not in draft.inner_text()
            screenshot(page, f"markdown-streaming-{name}")
            gate.release()
            page.wait_for_selector("body[data-turn=done]")
            reply = page.locator(".message-assistant").last
            _assert_rendered(page, reply.locator(".message-body"))
            assert serious_violations(page) == []
            reply.scroll_into_view_if_needed()
            screenshot(page, f"markdown-{name}")
    finally:
        page.context.close()


def _assert_rendered(page: Page, body: Any) -> None:
    assert body.locator("s").inner_text() == "old"
    boxes = body.locator("li.task input[type=checkbox][disabled]")
    assert boxes.count() == 2 and boxes.first.is_checked() and not boxes.last.is_checked()
    link = body.locator("a", has_text="https://example.com/docs")
    assert link.get_attribute("href") == "https://example.com/docs"  # the full stop is out
    assert link.get_attribute("target") == "_blank"
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert body.locator("a[href^='javascript']").count() == 0
    assert "javascript:alert(1)" in body.inner_text()
    box = body.locator(".table-scroll")
    assert box.get_attribute("tabindex") == "0" and box.get_attribute("role") == "region"
    wide = box.evaluate("b => b.scrollWidth > b.clientWidth")
    assert wide == (page.viewport_size is not None and page.viewport_size["width"] < 1000)
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")  # no page scroll
    order = body.evaluate(
        """b => [...b.querySelectorAll('p, .surface, .canvas, figure, iframe')]
               .map(e => e.textContent.includes('The board') ? 'before'
                    : e.textContent.includes('After the board') ? 'after'
                    : e.matches('figure, iframe, .surface, .canvas') ? 'canvas' : '')
               .filter(Boolean)"""
    )
    first_canvas = order.index("canvas")
    assert order.index("before") < first_canvas < order.index("after"), order


REPORT = {
    "blocks": [
        {"type": "metrics", "items": [{"label": "Completed", "value": "24", "detail": "this week"},
                                      {"label": "Open", "value": "7"}]},
        {"type": "table", "title": "By team", "columns": ["Team", "Completed"],
         "rows": [["Platform", "14"], ["Product", "10"]]},
        {"type": "chart", "title": "Per day", "points": [
            {"label": d, "value": v} for d, v in zip(["Mon", "Tue", "Wed", "Thu", "Fri"],
                                                     [3, 6, 4, 8, 3], strict=True)]},
        {"type": "links", "items": [{"label": "Delivery board", "url": "https://example.com/b"}]},
    ]
}  # fmt: skip


@pytest.mark.parametrize(("width", "height", "scheme"), CONTEXTS, ids=IDS)
def test_a_report_is_a_static_card_no_script_runs_in(
    browser: Browser, width: int, height: int, scheme: str
) -> None:
    code = (
        f"return await show_widget({{ title: 'Weekly delivery', report: {json.dumps(REPORT)} }});"
    )
    page = _page(browser, width, height, scheme)
    try:
        with serve([exec_call(code), "Here is the week."],
                   tools=lambda store: [widget_tool(store)]) as running:  # fmt: skip
            page.goto(running.login_url)
            send(page, "Report please.")
            frame_element = page.locator("iframe.report-frame")
            frame_element.wait_for()
            assert frame_element.get_attribute("sandbox") == (
                "allow-popups allow-popups-to-escape-sandbox"
            )
            frame = frame_element.content_frame
            frame.locator(".metric", has_text="24").wait_for()
            assert frame.locator("td", has_text="Platform").count() == 1
            assert frame.locator("svg rect").count() == 5
            assert frame.locator("script").count() == 0
            frame_element.scroll_into_view_if_needed()
            name = f"{'desktop' if width == 1280 else 'phone'}-{scheme}"
            screenshot(page, f"report-{name}")
    finally:
        page.context.close()
