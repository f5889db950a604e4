"""Chromium on a fleet (`tests/ui/_fleet.py`) whose proxy serves the page (its HTML and static
files) from worker 0, a session's API (its turns, their live stream, decisions) from worker 1,
as the sticky-by-session rule of docs/scale-out.md does, and Stop from worker 2: the page and
the turn are never on one worker, yet Stop stops the turn, an approval continues it and a
canvas renders from the configured canvas origin."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from tests.ui._fleet import TOKEN, Fleet, start_fleet
from tests.ui._fleet_net import loopback_socket, url_of
from tests.ui.browser.conftest import screenshot

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("fleet-browser")]


def _split(method: str, path: str) -> int:
    del method
    if path.endswith("/stop"):
        return 2
    return 1 if path.startswith("/api/sessions/") else 0


@pytest.fixture(scope="module")
def split(
    postgres_dsn: str, tmp_path_factory: pytest.TempPathFactory
) -> Generator[tuple[Fleet, str]]:
    """The fleet (no MCP workers) and the URL of its splitting proxy."""
    with start_fleet(postgres_dsn, tmp_path_factory.mktemp("fleet"), mcp_workers=0) as fleet:
        sock = loopback_socket()
        fleet.loopback.proxy(sock, [w.url for w in fleet.ui_workers], _split)
        yield fleet, url_of(sock)


def _open(page: Page, base: str, session: str) -> None:
    page.goto(f"{base}/?token={TOKEN}")
    page.goto(f"{base}/?session={session}")
    page.wait_for_selector("body[data-ready=true]")


def _type(page: Page, text: str) -> None:
    page.fill("#composer textarea", text)
    page.click("#composer button.send")


def _history(fleet: Fleet, session: str) -> list[dict[str, Any]]:
    with fleet.client(fleet.ui_workers[0].url) as client:
        answer: httpx.Response = client.get(f"/api/sessions/{session}/history")
    return answer.json()


def test_stop_on_a_third_worker_stops_the_turn_the_page_follows(
    page: Page, split: tuple[Fleet, str]
) -> None:
    fleet, base = split
    _open(page, base, "b-stop")
    _type(page, "hold it")
    page.locator(".cell .out-text", has_text="holding").wait_for()
    page.get_by_role("button", name="Stop").click()
    page.wait_for_selector("body[data-turn=done]")
    assert page.locator(".turn-stopped").count() == 1
    assert page.locator(".cell .status").last.inner_text() == "stopped"
    screenshot(page, "fleet-stopped")
    assert _history(fleet, "b-stop")[-1]["stopReason"] == "aborted"


def test_an_approval_decided_on_a_third_worker_continues_the_turn(
    page: Page, split: tuple[Fleet, str]
) -> None:
    fleet, base = split
    _open(page, base, "b-approve")
    _type(page, "deploy zeta")
    card = page.locator("form.approval")
    card.wait_for()
    card.locator("button.approve").click()
    page.locator(".approval-decided").wait_for()
    page.wait_for_selector("body[data-turn=done]")
    assert "saw: deploy zeta" in page.locator(".message-assistant").last.inner_text()
    assert [line.split(" by ")[0] for line in fleet.deployed()] == ["zeta"]


def test_a_canvas_made_on_another_worker_renders_from_the_configured_origin(
    page: Page, split: tuple[Fleet, str]
) -> None:
    fleet, base = split
    _open(page, base, "b-canvas")
    _type(page, "canvas please")
    page.wait_for_selector("body[data-turn=done]")
    frame = page.locator("iframe[title=Fleet]")
    frame.wait_for()
    assert str(frame.get_attribute("src")).startswith(fleet.canvas_origin + "/")
    hello = page.frame_locator("iframe[title=Fleet]").locator("#hello")
    assert hello.inner_text() == "hello from the fleet"
    screenshot(page, "fleet-canvas")
