"""One session's browser: an isolated context behind its guard proxy, its tabs and files."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from pathlib import Path
from typing import Any, Final

from ...errors import ToolError
from ._browser_files import BrowserFolder
from ._browser_guard import BrowserGuard, first_refusal, route_request
from ._browser_proxy import GuardProxy
from ._browser_settings import BrowserSettings

__all__ = ["BrowserSession", "safe_filename"]

_LOG = logging.getLogger("clawcell.tools")
_UNSAFE: Final = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")


def safe_filename(suggested: str) -> str:
    """A plain file name from a page-chosen one: no directories, controls or leading dots."""
    name = _UNSAFE.sub("_", suggested.replace("\\", "/").rsplit("/", 1)[-1]).strip().lstrip(".")
    return name[:120] or "download"


class BrowserSession:
    """The context, proxy, tabs, refusals and downloads of one session."""

    def __init__(
        self,
        *,
        settings: BrowserSettings,
        guard: BrowserGuard,
        media: BrowserFolder,
        downloads: BrowserFolder | None,
    ) -> None:
        self.settings = settings
        self.guard = guard
        self.media = media
        self.downloads = downloads
        self.lock = asyncio.Lock()
        self.last_used = time.monotonic()
        self.context: Any = None
        self.pages: dict[str, Any] = {}
        self.active: str | None = None
        self.refusals: list[tuple[str, str]] = []
        self.finished: list[dict[str, str]] = []
        self._saving: set[asyncio.Task[None]] = set()
        self._proxy = GuardProxy(guard, self._refused)
        self._counter = 0
        self._files = 0

    async def start(self, browser: Any) -> None:
        """Open the context (behind a fresh proxy) in `browser`."""
        proxy = await self._proxy.start()
        self.context = await browser.new_context(
            proxy={"server": proxy, "bypass": "<-loopback>"},
            accept_downloads=self.settings.downloads,
            service_workers="block",
        )
        self.context.set_default_timeout(self.settings.action_timeout_seconds * 1000)
        await self.context.route("**/*", self._route)
        self.context.on("page", self._adopt)

    async def _route(self, route: Any) -> None:
        await route_request(route, self.guard, self._refused)

    async def aclose(self) -> None:
        """Close the context and the proxy; idempotent."""
        context, self.context = self.context, None
        self.pages.clear()
        if context is not None:
            with contextlib.suppress(Exception):
                await context.close()
        await self._proxy.aclose()

    def _refused(self, url: str, reason: str) -> None:
        self.refusals.append((url, reason))
        del self.refusals[:-64]

    def _adopt(self, page: Any) -> None:
        if page in self.pages.values():
            return
        if len(self.pages) >= self.settings.max_tabs:
            asyncio.get_running_loop().create_task(page.close())
            return
        self._counter += 1
        target = f"t{self._counter}"
        self.pages[target] = page
        self.active = target

        def forget(_closed: Any) -> None:
            self._forget(target)

        page.on("close", forget)
        page.on("download", self._download)

    def _forget(self, target: str) -> None:
        self.pages.pop(target, None)
        if self.active == target:
            self.active = next(reversed(self.pages), None)

    async def new_tab(self) -> tuple[str, Any]:
        """A new tab (made active); a `ToolError` when `max_tabs` are open."""
        if len(self.pages) >= self.settings.max_tabs:
            raise ToolError(
                f"This session already has {len(self.pages)} tabs open (the limit is "
                f"{self.settings.max_tabs}). Close one with {{action: 'close', targetId}}.",
                code="too_many_tabs",
            )
        page = await self.context.new_page()
        self._adopt(page)
        return self.active or "", page

    async def close_tab(self, target: str) -> None:
        """Close the tab `target` (if open) and make the newest other tab active."""
        page = self.pages.get(target)
        self._forget(target)
        if page is not None:
            with contextlib.suppress(Exception):
                await page.close()

    def tab(self, target: str | None) -> tuple[str, Any]:
        """The tab `target` (the active one when `None`); a `ToolError` when there is none."""
        chosen = target if target is not None else self.active
        if chosen is None or chosen not in self.pages:
            known = ", ".join(self.pages) or "none"
            raise ToolError(
                f"No tab {chosen!r} in this session (open tabs: {known}). Use "
                "{action: 'open', url} first, or {action: 'tabs'} to list them.",
                code="no_such_tab",
            )
        return chosen, self.pages[chosen]

    def save_media(self, suffix: str, data: bytes) -> Path:
        """Write `data` to a fresh file in the session's media folder (beneath its root)."""
        self._files += 1
        return self.media.create(f"{int(time.time())}-{self._files}{suffix}", data)

    def refusal_of(self, url: str, since: int) -> str | None:
        """The reason a request for `url` was refused after the first `since` refusals."""
        return first_refusal(self.refusals[since:], url)

    def _download(self, download: Any) -> None:
        task = asyncio.get_running_loop().create_task(self._save(download))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save(self, download: Any) -> None:
        folder = self.downloads
        if folder is None or not self.settings.downloads:
            with contextlib.suppress(Exception):
                await download.cancel()
            return
        name = safe_filename(str(download.suggested_filename))
        stem, suffix, n = Path(name).stem, Path(name).suffix, 1
        while folder.exists(name):
            n += 1
            name = f"{stem}-{n}{suffix}"
        try:
            # Playwright's own finished copy (outside the folder); copied in beneath the root.
            source = Path(await download.path())
            size = source.stat().st_size
            if size > self.settings.max_download_bytes:  # Playwright's copy is removed with it
                _LOG.warning("browser: a download of %d bytes from %s is over "
                             "`max_download_bytes` (%d) and was not saved",
                             size, download.url, self.settings.max_download_bytes)  # fmt: skip
                return
            path = await asyncio.to_thread(folder.copy, name, source)
        except Exception:  # a failed, cancelled or redirected download is not reported
            return
        self.finished.append(
            {"url": str(download.url), "suggestedFilename": str(download.suggested_filename),
             "path": str(path)}
        )  # fmt: skip

    async def take_downloads(self, wait_seconds: float) -> list[dict[str, str]]:
        """Downloads finished since the last call, waiting briefly for ones in flight."""
        if self._saving:
            await asyncio.wait(set(self._saving), timeout=wait_seconds)
        done, self.finished = self.finished, []
        return done
