"""The session drawer in Chromium at 1280 and 390 px, light and dark: rename, pin, archive and
delete from the keyboard (delete asks first, and a running turn's session is refused with its
message), message search whose hit opens the session at the message, and no serious axe
violation in any of the drawer's states.

The matrix: each behaviour runs at both widths (at 390 px the drawer is an overlay, with its
own open, close and focus code), once. The theme is CSS alone here (`prefers-color-scheme` in
app.css, no colour transitions; the one script that reads it, surfaces.js, follows its changes
and the drawer has no surface), so in every state the checks cover, `_looks` runs axe and takes
the screenshot in light and then in dark on the same page: both themes at both widths, as the
four-way matrix checked them, without running each behaviour four times."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from clawcell import Tool
from clawcell.agent import exec_call
from clawcell.store import MemoryStore
from tests.ui.browser._axe import serious_violations
from tests.ui.browser.conftest import Running, screenshot, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

WIDTHS = [pytest.param(1280, id="desktop"), pytest.param(390, id="phone")]


def _page(browser: Browser, width: int) -> Page:
    context = browser.new_context(viewport={"width": width, "height": 860}, color_scheme="light")
    return context.new_page()


def _looks(page: Page, width: int, shot: str = "") -> None:
    """No serious axe violation in light and in dark (and the screenshot `shot` of each), the
    page left light."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (
            scheme == "dark"
        )
        assert serious_violations(page) == [], scheme
        if shot:
            screenshot(page, f"{shot}-{'desktop' if width == 1280 else 'phone'}-{scheme}")
    page.emulate_media(color_scheme="light")


def _seed(running: Running) -> None:
    for session_id, question, answer in [
        ("s-old", "Budget for the spring offsite", "Here is a draft budget."),
        ("s-mid", "Fix the flaky quokka test", "The quokka fixture leaks a socket."),
        ("s-new", "Groceries for Sunday", "Eggs, bread, apples."),
    ]:
        entries = [
            {"role": "user", "content": [{"type": "text", "text": question}], "timestamp": 1},
            {"role": "assistant", "content": [{"type": "text", "text": answer}], "timestamp": 2},
        ]
        running.call(running.store.append_transcript(session_id, entries))


def _open(page: Page, running: Running, width: int, url: str = "") -> None:
    page.goto(url or running.login_url)
    page.wait_for_selector("body[data-ready=true]")
    if width < 720:
        page.get_by_role("button", name="Sessions").click()
        page.locator("body.drawer-open").wait_for()


def _titles(page: Page) -> list[str]:
    return page.locator("#session-list .session-title").all_inner_texts()


def _archive(page: Page) -> None:
    page.get_by_role("button", name="Actions for Groceries for Sunday").click()
    page.get_by_role("button", name="Archive", exact=True).click()
    expect(page.locator("#session-notice")).to_have_text("Archived “Groceries for Sunday”.")
    expect(page.get_by_role("button", name="Actions for Groceries for Sunday")).to_have_count(0)
    archived = page.get_by_role("button", name="Archived")
    archived.click()
    expect(archived).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#session-list .session-title")).to_have_text(["Groceries for Sunday"])
    archived.click()


def _delete(page: Page, width: int) -> None:
    page.get_by_role("button", name="Actions for Fix the flaky quokka test").click()
    page.get_by_role("button", name="Delete", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    assert dialog.locator("#delete-text").inner_text() == (
        "Delete “Fix the flaky quokka test”? Its messages are removed for good."
    )
    expect(page.get_by_role("button", name="Cancel")).to_be_focused()
    _looks(page, width, "sessions-delete")
    page.keyboard.press("Escape")  # cancels: nothing deleted
    expect(dialog).to_be_hidden()
    assert "Fix the flaky quokka test" in _titles(page)
    page.get_by_role("button", name="Actions for Fix the flaky quokka test").click()
    page.get_by_role("button", name="Delete", exact=True).click()
    page.get_by_role("button", name="Delete", exact=True).last.click()
    expect(page.locator("#session-notice")).to_have_text("Deleted “Fix the flaky quokka test”.")


@pytest.mark.parametrize("width", WIDTHS)
def test_rename_pin_archive_and_delete_from_the_keyboard(browser: Browser, width: int) -> None:
    page = _page(browser, width)
    with serve([]) as running:
        _seed(running)
        _open(page, running, width)
        assert _titles(page) == [
            "Groceries for Sunday", "Fix the flaky quokka test", "Budget for the spring offsite",
        ]  # fmt: skip
        _looks(page, width)
        menu = page.get_by_role("button", name="Actions for Budget for the spring offsite")
        menu.focus()
        page.keyboard.press("Enter")
        assert menu.get_attribute("aria-expanded") == "true"
        assert page.evaluate("document.activeElement.textContent") == "Rename"
        _looks(page, width, "sessions-actions")
        page.keyboard.press("Escape")  # closes the actions, not the drawer
        assert menu.get_attribute("aria-expanded") == "false"
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
            "Actions for Budget for the spring offsite"
        )
        if width < 720:
            assert page.locator("body.drawer-open").count() == 1

        page.keyboard.press("Enter")
        page.keyboard.press("Enter")  # Rename
        page.keyboard.press("Control+a")
        page.keyboard.type("Offsite budget")
        page.keyboard.press("Enter")
        expect(page.locator("#session-notice")).to_have_text("Renamed to “Offsite budget”.")
        expect(page.locator("#session-list .session-title").last).to_have_text("Offsite budget")
        renamed = page.get_by_role("button", name="Actions for Offsite budget")
        expect(renamed).to_be_focused()

        page.keyboard.press("Enter")
        page.get_by_role("button", name="Pin", exact=True).click()
        expect(page.locator("#session-notice")).to_have_text("Pinned “Offsite budget”.")
        expect(page.locator("#session-list .session-title").first).to_have_text("Offsite budget")

        _archive(page)
        _delete(page, width)
        expect(page.locator("#session-list .session-title")).to_have_text(["Offsite budget"])
        assert running.call(running.store.read_transcript("s-mid")) == []
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_message_search_hit_opens_its_session_at_the_message(
    browser: Browser, width: int
) -> None:
    page = _page(browser, width)
    with serve([]) as running:
        _seed(running)
        _open(page, running, width, f"{running.login_url}&session=s-new")
        page.get_by_role("searchbox", name="Search messages").fill("quokka leaks")
        page.get_by_role("button", name="Search", exact=True).click()
        status = page.locator("#message-status")
        expect(status).to_have_text("1 message matches.")
        hit = page.locator("#message-hits a")
        assert hit.locator(".hit-where").inner_text() == "Fix the flaky quokka test · assistant"
        assert hit.locator("mark").all_inner_texts() == ["quokka", "leaks"]
        _looks(page, width, "sessions-message-search")
        page.get_by_role("combobox", name="Where to search").select_option("here")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(status).to_have_text("No message matches.")
        page.get_by_role("combobox", name="Where to search").select_option("all")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(status).to_have_text("1 message matches.")
        hit.click()
        page.wait_for_selector("body[data-ready=true]")
        found = page.locator(".message.found")
        expect(found).to_be_focused()
        assert found.inner_text().count("The quokka fixture leaks a socket.") == 1
        assert "Fix the flaky quokka test" in page.title()
    page.context.close()


def test_a_session_whose_turn_runs_is_not_deleted_and_the_drawer_says_why(
    browser: Browser,
) -> None:
    async def hold(_: dict[str, Any]) -> str:
        import asyncio

        await asyncio.Event().wait()
        return "never"

    def tools(_: MemoryStore) -> list[Tool]:
        return [Tool(name="hold", execute=hold)]

    page = _page(browser, 1280)
    with serve([exec_call('text("holding"); return await hold();')], tools=tools) as running:
        page.goto(f"{running.login_url}&session=busy")
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#composer textarea", "hold on")
        page.press("#composer textarea", "Enter")
        page.get_by_role("button", name="Stop").wait_for()
        # The turn stores the user's message as it starts; the Stop button can show first.
        for _ in range(300):
            if running.call(running.store.read_transcript("busy")):
                break
            page.wait_for_timeout(100)
        page.reload()  # the turn runs on: the page lists the session, titled, and follows it
        page.get_by_role("button", name="Stop").wait_for()
        page.get_by_role("button", name="Actions for hold on").click()
        page.get_by_role("button", name="Delete", exact=True).click()
        page.get_by_role("button", name="Delete", exact=True).last.click()
        expect(page.locator("#session-notice")).to_have_text(
            "session 'busy' has a turn running (or messages queued): stop it or wait for it to "
            "end, then delete the session."
        )
        expect(page.get_by_role("dialog")).to_be_hidden()
        assert running.call(running.store.read_transcript("busy")) != []
        page.get_by_role("button", name="Stop").click()
        page.wait_for_selector("body[data-turn=done]")
    page.context.close()
