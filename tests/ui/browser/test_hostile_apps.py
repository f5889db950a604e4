"""Hostile widgets and MCP Apps in Chromium: no WebRTC in their realm (nor a frame that brings
it back), one prompt per click, nothing without a click, and a click during a reply queued."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncGenerator, Generator, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from playwright.sync_api import Page

from clawcell import Limits, Tool
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import widget_tool
from tests.mcp.test_apps import apps
from tests.ui.browser.conftest import Running, screenshot, send, serve, serve_agent
from tests.ui.browser.test_widgets import _user_texts  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.slow  # each test starts a server and a browser

HERE = Path(__file__).parent

RTC_NAMES = ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceCandidate",
             "RTCSessionDescription", "RTCRtpSender"]  # fmt: skip
CHILD = (
    "<script>try { const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:PORT'}]});"
    " pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); }"
    " catch (e) {}</script>"
)
HOSTILE_WIDGET = (HERE / "hostile_widget.html").read_text("utf-8")


@pytest.fixture
def stun() -> Iterator[tuple[socket.socket, int]]:
    """A UDP socket on a loopback port standing in for a STUN server an app tries to reach."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    yield udp, udp.getsockname()[1]
    udp.close()


def _widget_code(port: int) -> str:
    child = CHILD.replace("PORT", str(port))
    attr = child.replace("&", "&amp;").replace('"', "&quot;")
    return (
        HOSTILE_WIDGET.replace("CHILD_ATTR", attr)
        .replace("CHILD_JS", json.dumps(child.replace('"', "&quot;")).replace("</", "<\\/"))
        .replace("NAMES", json.dumps(RTC_NAMES))
    )


def _show(port: int) -> Any:
    arguments = {"title": "Hostile", "widget_code": _widget_code(port)}
    return exec_call(f"return await show_widget({json.dumps(arguments)});")


@contextlib.contextmanager
def _serve_widget(port: int, *turns: Any, extra: list[Tool] | None = None) -> Generator[Running]:
    def tools(store: MemoryStore) -> list[Tool]:
        return [widget_tool(store), *(extra or [])]

    with serve([_show(port), "Shown.", *turns], tools=tools, embed_sandbox="scripts") as running:
        yield running


def test_a_hostile_widget_has_no_webrtc_and_one_click_is_one_prompt(
    page: Page, stun: tuple[socket.socket, int]
) -> None:
    udp, port = stun
    with _serve_widget(port, "Answered.") as running:
        page.goto(running.login_url)
        send(page, "show me")
        frame = page.frame_locator("iframe.widget-frame")
        frame.locator("#frames:has-text('frames=')").wait_for()
        assert frame.locator("#rtc").inner_text() == ",".join(["undefined"] * len(RTC_NAMES))
        # Every way to make a srcdoc frame (a fresh realm with WebRTC) is refused or undone.
        assert frame.locator("#frames").inner_text() == (
            "html:refused,srcdoc:refused,attr:refused,write:refused frames=0"
        )
        assert frame.locator("iframe").count() == 0
        assert _user_texts(running) == ["show me"]  # no prompt without a click
        frame.locator("#go").click()
        page.wait_for_selector(".message-user:has-text('one')")
        page.wait_for_selector("body[data-turn=done]")
        # Ten sendPrompt calls in one click's five events: one message.
        assert _user_texts(running) == ["show me", "one"]
        screenshot(page, "hostile-widget")
    with pytest.raises(BlockingIOError):
        udp.recvfrom(2048)  # no STUN request from any realm of the widget


def _gate() -> tuple[Tool, asyncio.Event]:
    gate = asyncio.Event()

    async def wait(_: dict[str, Any]) -> str:
        await gate.wait()
        return "opened"

    return Tool(name="gate", execute=wait), gate


@pytest.mark.parametrize(("width", "scheme"), [(1280, "light"), (390, "dark")])
def test_a_widget_click_during_a_reply_is_queued_visibly_and_sent_after_it(
    page: Page, stun: tuple[socket.socket, int], width: int, scheme: Literal["light", "dark"]
) -> None:
    _, port = stun
    tool, gate = _gate()
    page.set_viewport_size({"width": width, "height": 900})
    page.emulate_media(color_scheme=scheme)
    turns = [exec_call("return await gate({});"), "Gate opened.", "Answered."]
    with _serve_widget(port, *turns, extra=[tool]) as running:
        page.goto(running.login_url)
        send(page, "show me")
        page.fill("#composer textarea", "wait for the gate")
        page.click("#composer button.send")
        page.wait_for_selector("body[data-turn=running]")
        page.frame_locator("iframe.widget-frame").locator("#go").click()
        note = page.locator(".app-queued")
        note.wait_for()
        assert "one" in note.inner_text() and "sent when the reply ends" in note.inner_text()
        screenshot(page, f"widget-queued-{width}-{scheme}")
        assert _user_texts(running) == ["show me", "wait for the gate"]
        running.loop.call_soon_threadsafe(gate.set)
        page.wait_for_selector(".message-user:has-text('one')")
        page.wait_for_selector("body[data-turn=done]")
        assert page.locator(".app-queued").count() == 0
        assert _user_texts(running) == ["show me", "wait for the gate", "one"]


HOSTILE_APP = (HERE / "hostile_app.html").read_text("utf-8")


@pytest.mark.parametrize(("width", "scheme"), [(1280, "dark"), (390, "light")])
def test_a_hostile_mcp_app_acts_only_when_the_user_acts(
    page: Page, width: int, scheme: Literal["light", "dark"]
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.emulate_media(color_scheme=scheme)
    turns = [exec_call("return await MCP.apps.showCounter({ start: 5 });"), "Here.", "Hi."]

    @contextlib.asynccontextmanager
    async def factory() -> AsyncGenerator[Agent]:
        store = MemoryStore()
        server = apps(env={"CLAWCELL_TEST_APP_VIEW": HOSTILE_APP})
        async with Agent(model=ScriptedModel(turns), store=store, limits=Limits(timeout_ms=30_000),
                         mcp_servers={"apps": server}) as agent:  # fmt: skip
            yield agent

    popups: list[Any] = []

    def opened(popup: Any) -> None:
        popups.append(popup)

    page.context.on("page", opened)
    with serve_agent(factory) as running:
        page.goto(running.login_url)
        send(page, "show the counter")
        app = page.frame_locator("iframe.mcp-app-frame")
        app.locator("#load:has-text('calls:')").wait_for()
        assert app.locator("#rtc").inner_text() == "undefined,undefined"
        # Five calls on load: the first waits for the user on one card, the rest fail (and
        # are recorded as refused).
        assert app.locator("#load").inner_text() == "calls:error,error,error,error"
        assert app.locator("#msg").inner_text() == "error"
        assert app.locator("#link").inner_text() == "error" and popups == []
        card = page.locator("form.mcp-hold")
        assert card.count() == 1 and "without a click from you" in card.inner_text()
        screenshot(page, f"mcp-app-hold-{width}-{scheme}")
        card.locator("button[data-decision=approve]").click()
        activity = page.locator("details.mcp-activity")
        # The four calls refused while the card waited are rows too (never run).
        activity.locator("summary:has-text('5 tool calls')").wait_for()
        page.locator("details.mcp-activity summary").click()
        rows = activity.locator("li").all_inner_texts()
        assert sorted(rows) == sorted(
            ['increment({"by":1}) — refused, without your click'] * 4
            + ['increment({"by":1}) — completed, allowed by you']
        )
        screenshot(page, f"mcp-app-activity-{width}-{scheme}")
        app.locator("#go").click()
        app.locator("#msg:has-text(',')").wait_for()
        assert app.locator("#msg").inner_text() == "ok,error"  # one message per click
        page.wait_for_selector(".message-user:has-text('clicked')")
        page.wait_for_selector("body[data-turn=done]")
        assert _user_texts(running) == ["show the counter", "clicked"]


FRAMES = {
    "markup": '<iframe src="URL"></iframe><object data="URL"></object><p id="done">done</p>',
    "script": '<p id="done">?</p><script>try { const f = document.createElement("iframe"); '
    'f.src = "URL"; document.body.append(f); } catch (e) { done.textContent = "refused"; }'
    "</script>",
}


@pytest.mark.parametrize("how", sorted(FRAMES))
def test_a_widget_frame_opens_no_connection(page: Page, how: str) -> None:
    # Chromium connects to a frame's host before `frame-src 'none'` refuses the navigation:
    # a widget's frames are never made (renamed in its markup, refused to its scripts).
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/probe"
    arguments = {"title": "Frames", "widget_code": FRAMES[how].replace("URL", url)}
    turns = [exec_call(f"return await show_widget({json.dumps(arguments)});"), "Shown."]
    try:
        with serve(turns, tools=lambda store: [widget_tool(store)]) as running:
            page.goto(running.login_url)
            send(page, "show me")
            frame = page.frame_locator("iframe.widget-frame")
            frame.locator("#done:not(:has-text('?'))").wait_for()
            assert frame.locator("iframe, object").count() == 0
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
