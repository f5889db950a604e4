"""Widgets and YouTube cards in Chromium: scripts by tier, `sendPrompt`, isolation, Play."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Generator
from typing import Any, cast

import pytest
from playwright.sync_api import Page, Route

from clawcell import Tool
from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from clawcell.ui import widget_tool
from tests.ui.browser.conftest import Running, screenshot, send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

WIDGET = """<div class="card"><p id="state">scripts did not run</p>
<button id="blue" class="primary" onclick="sendPrompt('I pick blue')">Blue</button>
<p id="cookie">?</p><p id="api">?</p></div>
<script>
document.getElementById("state").textContent = "script ran";
sendPrompt("sent without a click");
const out = (id, v) => { document.getElementById(id).textContent = v; };
try { out("cookie", "cookie:" + document.cookie); } catch (e) { out("cookie", "blocked"); }
fetch("APP/api/sessions", { credentials: "include" })
  .then((r) => r.text()).then((t) => out("api", "read:" + t.slice(0, 40)))
  .catch(() => out("api", "blocked"));
</script>"""


def _tools(store: MemoryStore) -> list[Tool]:
    return [widget_tool(store)]


class _App:
    """The app's base URL, known once the server runs; the widget's attack targets it."""

    base = ""


def _turns() -> list[Any]:
    def show(request: Any) -> Any:
        code = WIDGET.replace("APP", _App.base)
        return exec_call(
            f"return await show_widget({json.dumps({'title': 'Colours', 'widget_code': code})});"
        )

    return [show, "Pick one.", "You picked it."]


def _user_texts(running: Running) -> list[str]:
    entries = running.call(running.store.read_transcript("main"))
    texts: list[str] = []
    for entry in entries:
        if entry.get("role") == "user":
            content: Any = entry["content"]
            blocks = cast(
                list[dict[str, Any]], content if isinstance(content, list) else [{"text": content}]
            )
            texts.append("".join(str(b.get("text", "")) for b in blocks))
    return texts


@contextlib.contextmanager
def _serve(tier: str) -> Generator[Running]:
    with serve(_turns(), tools=_tools, embed_sandbox=tier) as running:
        _App.base = running.base
        yield running


@pytest.mark.parametrize("tier", ["scripts", "trusted"])
def test_a_widget_script_runs_and_send_prompt_needs_a_click(page: Page, tier: str) -> None:
    with _serve(tier) as running:
        page.goto(running.login_url)
        send(page, "show me")
        frame = page.frame_locator("iframe.widget-frame")
        assert frame.locator("#state").inner_text() == "script ran"
        assert _user_texts(running) == ["show me"]  # the load-time sendPrompt did nothing
        frame.locator("#blue").click()
        page.wait_for_selector(".message-user:has-text('I pick blue')")
        page.wait_for_selector("body[data-turn=done]")
        assert _user_texts(running) == ["show me", "I pick blue"]
        height = page.eval_on_selector(
            "iframe.widget-frame", "f => f.getBoundingClientRect().height"
        )
        assert 48 <= height < 360  # fitted to its content, not the default frame height
        screenshot(page, f"widget-{tier}")


def test_a_widget_renders_without_scripts_in_strict(page: Page) -> None:
    with _serve("strict") as running:
        page.goto(running.login_url)
        send(page, "show me")
        frame = page.frame_locator("iframe.widget-frame")
        assert frame.locator("#state").inner_text() == "scripts did not run"
        assert frame.locator("#blue").is_visible()


def test_a_widget_never_reads_the_apps_cookie_or_calls_its_api(page: Page) -> None:
    with _serve("trusted") as running:
        page.goto(running.login_url)
        assert any(c.get("name") for c in page.context.cookies(running.base))  # logged in
        send(page, "show me")
        frame = page.frame_locator("iframe.widget-frame")
        frame.locator("#state").wait_for()
        assert frame.locator("#cookie").inner_text() in ("blocked", "cookie:")
        page.wait_for_function(
            "() => document.querySelector('iframe.widget-frame') !== null", timeout=5000
        )
        # connect-src 'none': the fetch is refused before any request leaves the frame.
        frame.locator("#api:has-text('blocked')").wait_for(timeout=10_000)


YOUTUBE = '[embed url="https://youtu.be/dQw4w9WgXcQ?t=42&list=PLx" title="A video" /]'
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)


def _youtube_requests(page: Page) -> list[str]:
    seen: list[str] = []

    def handle(route: Route) -> None:
        url = route.request.url
        seen.append(url)
        if url.startswith("https://i.ytimg.com/"):
            route.fulfill(status=200, content_type="image/png", body=_PNG)
        else:
            route.fulfill(status=200, content_type="text/html", body="<p>player</p>")

    page.route(re.compile(r"https://([a-z.]*\.)?(youtube|ytimg|youtube-nocookie)\.com/.*"), handle)
    page.route(re.compile(r"https://youtu\.be/.*"), handle)
    return seen


def test_no_youtube_request_happens_before_play(page: Page) -> None:
    seen = _youtube_requests(page)
    with serve([f"Watch this:\n{YOUTUBE}"]) as running:
        page.goto(running.login_url)
        send(page, "a video please")
        page.wait_for_selector(".youtube-card img")
        page.wait_for_timeout(300)  # let any eager load show itself
        assert all(u.startswith("https://i.ytimg.com/vi/dQw4w9WgXcQ/") for u in seen), seen
        assert page.locator(".youtube-card iframe").count() == 0
        screenshot(page, "youtube-card")
        page.click(".youtube-play")
        page.wait_for_selector(".youtube-card iframe.youtube-player")
        player = [u for u in seen if "youtube-nocookie.com" in u]
        assert player == ["https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?autoplay=1&start=42"]
        assert not any("youtube.com/" in u and "nocookie" not in u for u in seen)


def test_strict_shows_the_watch_link_only(page: Page) -> None:
    seen = _youtube_requests(page)
    with serve([f"Watch this:\n{YOUTUBE}"], embed_sandbox="strict") as running:
        page.goto(running.login_url)
        send(page, "a video please")
        link = page.locator(".youtube-card a.youtube-watch")
        assert link.get_attribute("href") == "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s"
        assert page.locator(".youtube-card img, .youtube-card iframe").count() == 0
        assert seen == []
