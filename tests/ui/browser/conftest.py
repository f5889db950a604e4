"""A real UI server on 127.0.0.1 (uvicorn in a thread) and Debian's Chromium via Playwright.

Playwright's own browser download is not used: `scripts/ensure-chromium.sh` installs Debian's
`chromium-headless-shell` (the headless Chromium Playwright itself runs by default; the same
version as Debian's `chromium`) and the tests launch it by path. Screenshots go to
`build/ui-screenshots/`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import shutil
import threading
from collections.abc import AsyncGenerator, Callable, Coroutine, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from clawcell import Limits, Tool
from clawcell.agent import Agent, ScriptedModel, ScriptedTurn
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, canvas_tool, serve_ui

T = TypeVar("T")
SCREENSHOTS = Path(__file__).resolve().parents[3] / "build" / "ui-screenshots"
HEADLESS_SHELL = "chromium-headless-shell"
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests run as root in a container
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass(frozen=True, kw_only=True)
class Running:
    """A UI server running in its own thread and event loop."""

    base: str
    settings: UiSettings
    store: MemoryStore
    loop: asyncio.AbstractEventLoop
    agent: Any = None

    @property
    def login_url(self) -> str:
        return f"{self.base}/?token={self.settings.token}"

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the server's loop (its store and agent live there)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)


AgentFactory = Callable[[], contextlib.AbstractAsyncContextManager[Any]]


@contextlib.contextmanager
def serve_agent(factory: AgentFactory, **settings: Any) -> Generator[Running]:
    """Serve a UI (and its canvas host) over the agent `factory` yields, on free loopback
    ports, in a thread."""
    ui_settings = UiSettings(port=0, **settings)
    started: concurrent.futures.Future[tuple[Running, asyncio.Event]] = concurrent.futures.Future()

    async def main() -> None:
        try:
            async with factory() as agent, serve_ui(agent, ui_settings) as ui:
                stop = asyncio.Event()
                running = Running(base=ui.base_url, settings=ui.settings, store=agent.store,
                                  loop=asyncio.get_running_loop(), agent=agent)  # fmt: skip
                started.set_result((running, stop))
                await stop.wait()
        except BaseException as exc:  # a failed start: the test says why, at once
            if started.done():
                raise
            started.set_exception(exc)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    running, stop = started.result(timeout=120)
    try:
        yield running
    finally:
        running.loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=60)


def serve(
    turns: Sequence[ScriptedTurn],
    *,
    tools: Callable[[MemoryStore], list[Tool]] = lambda store: [canvas_tool(store)],
    **settings: Any,
) -> contextlib.AbstractContextManager[Running]:
    """Serve a UI over an `Agent` replaying `turns` (with the `canvas` tool by default)."""

    @contextlib.asynccontextmanager
    async def factory() -> AsyncGenerator[Agent]:
        store = MemoryStore()
        async with Agent(model=ScriptedModel(turns), tools=tools(store), store=store,
                         limits=Limits(timeout_ms=60_000)) as agent:  # fmt: skip
            yield agent

    return serve_agent(factory, **settings)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    # Per module, not per session: the sync API marks an event loop as running on this thread
    # while it is open, which would break every later test that calls `asyncio.run`; pytest
    # closes a module's fixtures before a test of another module runs (under xdist too), and
    # no test here calls `asyncio.run` on the test's thread.
    with sync_playwright() as instance:
        yield instance


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    # One Chromium per module (a launch costs about a second); every test gets its own
    # context (`page`, or the test's own `new_context`), which shares no cookies or storage.
    # Debian's headless shell (the same Blink, without the windowed browser around the page):
    # tests/ui/browser took 45 % less CPU, Chromium's processes counted, than with `chromium`.
    executable = shutil.which(HEADLESS_SHELL)
    assert executable, f"Debian's {HEADLESS_SHELL} is missing: run scripts/ensure-chromium.sh"
    chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    yield chromium
    chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield context.new_page()
    context.close()


def screenshot(page: Page, name: str) -> Path:
    """Save a screenshot as a test artifact."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def send(page: Page, text: str) -> None:
    """Type a message, send it and wait until its turn has finished streaming."""
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#composer textarea", text)
    page.click("#composer button.send")
    page.wait_for_selector("body[data-turn=done]")


def expand(page: Page) -> None:
    """Open every disclosure (a turn's "worked" group, each cell row), as a reader would."""
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
