"""`browser(...)`: the `browser` tool, one isolated Chromium context per agent session.

Chromium is the system's (found on `PATH` or named in `BrowserSettings`), started by
Playwright on the first call and stopped when no session has used it for `idle_seconds`
or when the tool is closed (`Agent.aclose()` closes it). Each session gets its own browser
context - no shared cookies, storage or cache, never the user's own profile - behind its own
guard proxy (`_browser_guard.py`), and its own media and downloads directories.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from ..._lazy import install_hint
from ...catalog import Tool, call_session
from ...errors import ConfigurationError, ToolError
from .._guard import AddressGuard, Resolver, SystemResolver
from ._browser_contract import BROWSER_INPUT, BROWSER_OUTPUT, DESCRIPTION
from ._browser_files import BrowserFolder, prepared_root
from ._browser_guard import BrowserGuard
from ._browser_session import BrowserSession
from ._browser_settings import BrowserSettings

__all__ = ["BrowserPool", "browser", "find_chromium"]

_CANDIDATES: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_HEADLESS_SHELL: Final = "chromium-headless-shell"
"""Chromium's headless-only build (Debian's `chromium-headless-shell`, what Playwright
launches for headless by default): preferred when headless, it costs about half the CPU of
a full `chromium --headless` for the same pages."""
_FLAGS: Final = (
    "--no-sandbox",  # containers run as root; the context isolation is Chromium's own
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-features=DnsOverHttps",
    # WebRTC would send UDP (STUN, media, data channels) to any host and port, past the
    # guard proxy, which carries only HTTP: only proxied (TCP) WebRTC traffic is allowed, and
    # the proxy refuses it, so pages get no ICE candidates at all.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--enforce-webrtc-ip-permission-check",
)


def find_chromium(settings: BrowserSettings) -> str:
    """Chromium's executable; a `ConfigurationError` saying how to get one when absent."""
    if settings.executable_path is not None:
        path = Path(settings.executable_path)
        if path.is_file():
            return str(path)
        raise ConfigurationError(
            f"Browser setting `executable_path` {settings.executable_path!r} is not a file. "
            "Point it at a Chromium or Chrome executable."
        )
    names = (_HEADLESS_SHELL, *_CANDIDATES) if settings.headless else _CANDIDATES
    for name in names:
        found = shutil.which(name)
        if found is not None:
            return found
    raise ConfigurationError(
        "The `browser` tool needs Chromium, and none was found on PATH (looked for "
        + ", ".join(names)
        + "). Install it (for example `apt-get install chromium`) or set "
        "`BrowserSettings(executable_path=...)`."
    )


class BrowserPool:
    """The `browser` tool's `execute`: Chromium, and one `BrowserSession` per session id."""

    def __init__(self, settings: BrowserSettings, guard: BrowserGuard) -> None:
        self.settings = settings
        self._guard = guard
        # Both roots are made and resolved now, before any page or command runs; every write
        # is then opened beneath them with no symbolic link followed (`_browser_files`).
        media = settings.media_dir or Path(tempfile.mkdtemp(prefix="clawcell-browser-"))
        self._media = prepared_root(media)
        self._downloads: Path | None = None
        if settings.downloads:
            self._downloads = prepared_root(settings.downloads_dir or media / "downloads")
        self._sessions: dict[str, BrowserSession] = {}
        self._playwright: Any = None
        self._browser: Any = None
        self._starting = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        from ._browser_actions import run_action

        session = await self.session(call_session.get() or "default")
        async with session.lock:
            session.last_used = time.monotonic()
            try:
                return await run_action(session, params)
            finally:
                session.last_used = time.monotonic()

    @property
    def running(self) -> bool:
        """Whether Chromium is running."""
        return self._browser is not None

    @property
    def session_ids(self) -> list[str]:
        """The sessions with an open browser context."""
        return list(self._sessions)

    async def session(self, session_id: str) -> BrowserSession:
        """The browser session of `session_id`, started (with Chromium) on first use."""
        async with self._starting:
            found = self._sessions.get(session_id)
            if found is not None and found.context is not None:
                return found
            browser = await self._chromium()
            key = hashlib.sha256(session_id.encode()).hexdigest()[:16]
            session = BrowserSession(
                settings=self.settings,
                guard=self._guard,
                media=BrowserFolder(root=self._media, name=key),
                downloads=None
                if self._downloads is None
                else BrowserFolder(root=self._downloads, name=key),
            )
            await session.start(browser)
            self._sessions[session_id] = session
            if self._reaper is None or self._reaper.done():
                self._reaper = asyncio.get_running_loop().create_task(self._reap())
            return session

    async def close_session(self, session_id: str) -> None:
        """Close `session_id`'s context (its tabs); the next call starts a fresh one."""
        session = self._sessions.pop(session_id, None)
        if session is not None:
            await session.aclose()

    async def aclose(self) -> None:
        """Close every context and stop Chromium; the pool starts again on its next call."""
        reaper, self._reaper = self._reaper, None
        if reaper is not None and reaper is not asyncio.current_task():
            reaper.cancel()
            with contextlib.suppress(BaseException):
                await reaper
        async with self._starting:
            sessions, self._sessions = list(self._sessions.values()), {}
            for session in sessions:
                await session.aclose()
            await self._stop()

    async def _chromium(self) -> Any:
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        await self._stop()
        executable = find_chromium(self.settings)
        from playwright.async_api import Error, async_playwright

        self._playwright = await async_playwright().start()
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=executable,
                headless=self.settings.headless,
                args=[*_FLAGS, f"--js-flags=--max-old-space-size={self.settings.js_heap_mb}"],
            )
        except Error as exc:
            await self._stop()
            raise ToolError(
                f"Chromium at {executable!r} did not start: {str(exc).splitlines()[0]}.",
                code="browser_unavailable",
            ) from None
        return self._browser

    async def _stop(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.close()
        if playwright is not None:
            with contextlib.suppress(Exception):
                await playwright.stop()

    async def _reap(self) -> None:
        idle = self.settings.idle_seconds
        while True:
            await asyncio.sleep(min(idle / 4, 30.0))
            now = time.monotonic()
            async with self._starting:
                for session_id, session in list(self._sessions.items()):
                    if not session.lock.locked() and now - session.last_used >= idle:
                        del self._sessions[session_id]
                        await session.aclose()
                if not self._sessions:
                    await self._stop()
                    self._reaper = None
                    return


def browser(
    *,
    settings: BrowserSettings | None = None,
    resolver: Resolver | None = None,
    allow_loopback_for_tests: bool = False,
) -> Tool:
    """The `browser` tool (`pip install 'clawcell[browser]'` and a system Chromium).

    The tool is network content (`Tool(network=True)`) and never replay-safe. Its `execute`
    is a `BrowserPool`; closing the `CodeMode` or `Agent` that holds the tool stops its Chromium
    (`on_close`), and the pool starts again on its next call.

    Args:
        settings: Caps, directories, downloads and the private-network allowance.
        resolver: The DNS seam (`SystemResolver()` by default).
        allow_loopback_for_tests: Let pages reach loopback addresses. Tests only, like
            `web(allow_loopback_for_tests=True)`.

    Raises:
        ConfigurationError: Playwright is not installed.
    """
    try:
        import playwright.async_api  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError as exc:
        raise ConfigurationError(
            "The `browser` tool needs Playwright (it drives the system's Chromium; no browser "
            f"download is needed): {install_hint('browser')}."
        ) from exc
    guard = BrowserGuard(
        addresses_guard=AddressGuard(
            resolver=resolver or SystemResolver(),
            allow_loopback_for_tests=allow_loopback_for_tests,
        ),
        allow_private_network=(settings or BrowserSettings()).allow_private_network,
    )
    pool = BrowserPool(settings or BrowserSettings(), guard)
    return Tool(
        name="browser",
        label="Browser",
        description=DESCRIPTION,
        parameters=BROWSER_INPUT,
        output_schema=BROWSER_OUTPUT,
        execute=pool,
        replay_safe=False,
        network=True,
        on_close=pool.aclose,
    )
