"""The chat in a real Chromium: access, rich replies, canvases, hostile input, live cells."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from clawcell import Tool
from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from clawcell.ui import canvas_tool
from tests.ui._fakes import Gate
from tests.ui.browser.conftest import Running, screenshot, send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

CANVAS = """<!doctype html><p id="state">blocked</p><p id="cookie">unknown</p>
<script src="app.js"></script>"""
CANVAS_JS = """document.getElementById("state").textContent = "ran";
try { document.getElementById("cookie").textContent = "readable:" + document.cookie; }
catch (error) { document.getElementById("cookie").textContent = "unreachable"; }
window.parent.postMessage("canvas ran", "*");"""
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)


def _documents(running: Running, *refs: str) -> None:
    async def put() -> None:
        for ref in refs:
            await running.store.put_document(
                ref, {"index.html": CANVAS.encode(), "app.js": CANVAS_JS.encode()}
            )

    running.call(put())


def test_the_page_refuses_without_the_token_and_loads_with_it(page: Page) -> None:
    with serve(["hi"]) as running:
        refused = page.goto(running.base + "/")
        assert refused is not None and refused.status == 401
        assert "needs its access token" in page.inner_text("body")
        page.goto(running.login_url)
        assert page.url == running.base + "/"
        assert page.title() == "clawcell · main"
        assert page.is_visible("#composer textarea")
        assert page.evaluate("document.cookie") == ""  # HttpOnly: not readable from script
        screenshot(page, "empty-chat")


def _rich_reply(media: Path) -> str:
    return (
        "[[reply_to_current]] Here is **everything**.\n[[audio_as_voice]]\n"
        f"MEDIA:{media / 'chart.png'}\nMEDIA:{media / 'note.wav'}\n"
        '[embed ref="cv_one" title="First" height="240" /]\n'
        '[embed ref="cv_two" title="Second" /]'
    )


@pytest.mark.parametrize(
    ("tier", "sandbox"),
    [("strict", ""), ("scripts", "allow-scripts"), ("trusted", "allow-scripts allow-same-origin")],
)
def test_a_rich_reply_renders_media_a_voice_note_and_two_sandboxed_canvases(
    page: Page, tmp_path: Path, tier: str, sandbox: str
) -> None:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "note.wav").write_bytes(b"RIFF\0\0\0\0WAVE")
    with serve([_rich_reply(tmp_path)], embed_sandbox=tier, media_roots=(tmp_path,)) as running:
        _documents(running, "cv_one", "cv_two")
        page.goto(running.login_url)
        send(page, "show me everything")
        reply = page.locator(".message-assistant").last
        assert reply.locator(".reply-target").inner_text() == "↩ in reply to the current message"
        image = reply.locator(".attachment-image img")
        assert image.get_attribute("src") == f"/media?path={tmp_path}/chart.png"
        assert image.evaluate("img => img.decode().then(() => img.naturalWidth)") == 1
        assert reply.locator(".attachment-audio.voice-note audio").count() == 1
        frames = reply.locator("iframe")
        assert frames.count() == 2
        canvas_origin = f"http://127.0.0.1:{running.settings.canvas_port}"
        assert running.settings.canvas_port not in (0, running.settings.port)
        cap = f"{canvas_origin}/__openclaw__/cap/"
        for index, (ref, height) in enumerate([("cv_one", "240"), ("cv_two", "360")]):
            frame = frames.nth(index)
            assert frame.get_attribute("sandbox") == sandbox
            assert frame.get_attribute("height") == height
            src = frame.get_attribute("src") or ""
            assert src.startswith(cap)
            assert src.endswith(f"/__openclaw__/canvas/documents/{ref}/index.html")
        box = frames.first.bounding_box()
        assert box is not None and box["height"] == 240
        screenshot(page, f"rich-reply-{tier}")


@pytest.mark.parametrize(
    ("tier", "state", "cookie"),
    [
        ("scripts", "ran", "unreachable"),
        ("strict", "blocked", "unknown"),
        ("trusted", "ran", "readable:"),
    ],
)
def test_the_hosted_canvas_runs_its_script_under_scripts_and_not_under_strict(
    page: Page, tier: str, state: str, cookie: str
) -> None:
    with serve(['[embed ref="cv_live" title="Live" /]'], embed_sandbox=tier) as running:
        _documents(running, "cv_live")
        page.goto(running.login_url)
        send(page, "canvas please")
        frame = page.frame_locator("iframe[title=Live]")
        frame.locator("#state").wait_for()
        if state == "ran":
            frame.locator("#state", has_text="ran").wait_for()
        assert frame.locator("#state").inner_text() == state
        assert frame.locator("#cookie").inner_text() == cookie
        screenshot(page, f"canvas-{tier}")


HOSTILE = (
    'A [embed url="javascript:window.pwned=1" /] B '
    '[embed url="data:text/html,<script>parent.pwned=1</script>" /] C '
    '[embed url="https://example.com/x" /] D '
    '<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 1"> '
    "[click](javascript:window.pwned=1) ![i](javascript:window.pwned=1)"
)


def test_hostile_embeds_and_markdown_payloads_never_render_or_run(page: Page) -> None:
    with serve([HOSTILE]) as running:
        page.goto(running.login_url)
        send(page, "try to break out")
        reply = page.locator(".message-assistant").last
        assert page.locator("iframe").count() == 0
        assert reply.locator("script, img[src=x], a[href^=javascript]").count() == 0
        assert "<script>window.pwned = 1</script>" in reply.inner_text()
        assert reply.locator(".canvas .blocked").inner_text() == (
            "embed blocked by the embed policy: https://example.com/x"
        )
        assert page.evaluate("window.pwned") is None
        screenshot(page, "hostile-input")


def test_a_streamed_turn_shows_cell_output_before_the_cell_ends(page: Page) -> None:
    gate = Gate()

    async def hold(_: dict[str, Any]) -> str:
        await gate.wait()
        return "released"

    def tools(store: MemoryStore) -> list[Tool]:
        return [canvas_tool(store), Tool(name="hold", execute=hold)]

    code = 'text("before the gate"); const r = await hold(); text(r); return 42;'
    turns = [exec_call(code, title="gated"), "The cell returned **42**."]
    with serve(turns, tools=tools) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#composer textarea", "run the gated cell")
        page.click("#composer button")
        card = page.locator(".cell").last
        card.locator(".out-text", has_text="before the gate").wait_for()
        assert card.locator(".status").inner_text() == "running"
        assert card.locator(".cell-code").inner_text() == code
        screenshot(page, "live-cell-running")
        gate.release()
        card.locator(".status-completed").wait_for(state="attached")
        page.wait_for_selector("body[data-turn=done]")
        assert card.get_attribute("open") is None  # a completed cell folds to its row
        group = page.locator("details.work").last
        assert group.get_attribute("open") is None  # and so does the turn's work
        summary = group.locator(".work-summary").inner_text()
        assert re.fullmatch(r"Worked for \d+\.\d s · 1 cell", summary)
        group.locator(".work-summary").click()
        card.locator("summary").click()
        assert card.locator(".cell-value pre").inner_text() == "42"
        assert [t.strip() for t in card.locator(".out-text").all_inner_texts()] == [
            "before the gate", "released"
        ]  # fmt: skip
        assert "The cell returned 42." in page.locator(".message-assistant").last.inner_text()
        screenshot(page, "live-cell-completed")


def test_history_shows_past_turns_after_a_reload(page: Page) -> None:
    turns = [exec_call('text("hi"); throw new Error("nope");'), "It failed, as planned."]
    with serve(turns) as running:
        page.goto(running.login_url)
        send(page, "fail please")
        page.reload()
        card = page.locator(".cell").last
        assert card.locator(".status").inner_text() == "threw an error"
        assert card.locator(".protocol-status").inner_text() == (
            "protocol status: failed · internal_error"
        )
        assert "Error: nope" in card.locator(".cell-error").inner_text()
        current = page.locator(".sessions a[aria-current=page]")
        assert current.inner_text() == "fail please"  # titled by its first message
        assert current.get_attribute("href") == "/?session=main"
