"""Attachments in Chromium at 1280 px (light) and 390 px (dark): attach with the keyboard
(the Attach button), by pasting an image and by dropping a file on the composer; a refused
file says why and keeps what was typed; chips remove with the keyboard; the sent files reach
the model and show in the transcript, still there after a reload; no serious axe violation
(screenshots in build/ui-screenshots/attachments-*.png, the chosen ones in docs/)."""

from __future__ import annotations

import struct
import zlib

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.ui.browser._axe import serious_violations
from tests.ui.browser.conftest import screenshot, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

LOOKS = [
    pytest.param(1280, "light", id="desktop-light"),
    pytest.param(390, "dark", id="phone-dark"),
]
NOTES = "# Shipments\n\n- b-202 unpaid\n- b-203 paid\n"


def _png(width: int, height: int) -> bytes:
    """A small bar chart as a real PNG (the thumbnail must decode)."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            bar = (x // 12) % 3
            filled = height - y < (bar + 1) * height // 4 and x % 12 < 9
            rows += bytes((43, 108, 176) if filled else (246, 247, 249))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(rows))) + chunk(b"IEND", b""))  # fmt: skip


CHART = _png(72, 48)


def _page(browser: Browser, width: int, scheme: str) -> Page:
    context = browser.new_context(viewport={"width": width, "height": 860},
                                  color_scheme="dark" if scheme == "dark" else "light")  # fmt: skip
    return context.new_page()


def _give(page: Page, event: str, name: str, kind: str, text: str | list[int]) -> None:
    """Paste into the message box (`paste`) or drop on the composer (`drop`) one file (its
    text, or its bytes as a list of numbers)."""
    page.evaluate(
        """([event, name, kind, text]) => {
          const data = new DataTransfer();
          const body = Array.isArray(text) ? new Uint8Array(text) : text;
          data.items.add(new File([body], name, { type: kind }));
          const target = event === "paste" ? document.getElementById("message")
                                           : document.getElementById("composer");
          const init = { bubbles: true, cancelable: true };
          target.dispatchEvent(event === "paste"
            ? new ClipboardEvent("paste", { ...init, clipboardData: data })
            : new DragEvent("drop", { ...init, dataTransfer: data }));
        }""",
        [event, name, kind, text],
    )


def _attach_three_and_two_refused(page: Page) -> None:
    """Attach with the keyboard, a drop and a paste; a binary and an oversize file refused."""
    with page.expect_file_chooser() as chooser:  # the keyboard opens the file chooser
        page.locator("#attach").press("Enter")
    chooser.value.set_files([{"name": "chart.png", "mimeType": "image/png", "buffer": CHART}])
    expect(page.locator(".chip[data-kind=image]")).to_have_count(1)
    expect(page.locator(".chip").first).to_contain_text("chart.png")

    _give(page, "drop", "notes.md", "text/markdown", NOTES)
    expect(page.locator(".chip[data-kind=file]")).to_have_count(1)
    _give(page, "drop", "report.pdf", "application/pdf", list(b"%PDF-1.7\n\xff\xfe"))
    expect(page.locator("#attach-status")).to_contain_text(
        "report.pdf was not attached: attachment 'report.pdf' is neither an image"
    )
    _give(page, "paste", "big.txt", "text/plain", "x" * (65 * 1024))
    expect(page.locator("#attach-status")).to_contain_text(
        "big.txt was not attached: it is 65 KiB, more than the 64 KiB a file may be."
    )
    _give(page, "paste", "extra.txt", "text/plain", "one more")
    expect(page.locator(".chip[data-id]")).to_have_count(3)


@pytest.mark.parametrize(("width", "scheme"), LOOKS)
def test_files_attach_send_and_stay_in_the_transcript_after_a_reload(
    browser: Browser, width: int, scheme: str
) -> None:
    page = _page(browser, width, scheme)
    look = f"{'desktop' if width == 1280 else 'phone'}-{scheme}"
    replies = ["A bar chart with three bars; your notes say b-202 is unpaid.", "The same chart."]
    with serve(replies, max_attachment_bytes=64 * 1024) as running:
        page.goto(running.login_url)
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#message", "What do these show?")

        _attach_three_and_two_refused(page)
        expect(page.locator("#message")).to_have_value("What do these show?")  # kept
        assert serious_violations(page) == []
        screenshot(page, f"attachments-composer-{look}")

        page.locator(".chip:has-text('extra.txt') .chip-remove").press("Enter")
        expect(page.locator(".chip[data-id]")).to_have_count(2)
        expect(page.locator("#attach")).to_be_focused()

        page.focus("#message")
        page.keyboard.press("Enter")
        page.wait_for_selector("body[data-turn=done]")
        expect(page.locator(".chip")).to_have_count(0)
        expect(page.locator("#message")).to_have_value("")

        request = running.agent.model.requests[0]
        blocks = request.messages[-1]["content"]
        assert [(b["type"], b.get("name")) for b in blocks] == [
            ("text", None), ("image", "chart.png"), ("file", "notes.md")
        ]  # fmt: skip
        assert blocks[2]["text"] == NOTES

        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        user = page.locator(".message-user").last
        thumbnail = user.locator("img[alt='chart.png']")
        expect(thumbnail).to_be_visible()
        assert thumbnail.evaluate("(img) => img.complete && img.naturalWidth") == 72
        expect(user.locator("a.document")).to_have_text("notes.md")
        expect(user.locator(".attachment-document .mime")).to_contain_text("text file")
        assert serious_violations(page) == []
        screenshot(page, f"attachments-reloaded-{look}")

        chooser_input = page.locator("#attach-input")  # files alone are a message too
        chooser_input.set_input_files(
            [{"name": "again.png", "mimeType": "image/png", "buffer": CHART}]
        )
        expect(page.locator(".chip[data-id]")).to_have_count(1)
        page.locator("#message").press("Enter")
        expect(page.locator(".message-assistant").last).to_contain_text("The same chart.")
        expect(page.locator(".message-user").last.locator("img[alt='again.png']")).to_be_visible()
