"""The caps and places of the `browser` tool."""

from __future__ import annotations

import math
from pathlib import Path

from ..._lazy import value_class
from ...errors import ConfigurationError

__all__ = ["BrowserSettings"]

_POSITIVE = (
    "max_tabs",
    "max_chars",
    "idle_seconds",
    "action_timeout_seconds",
    "js_heap_mb",
    "max_download_bytes",
)


@value_class
class BrowserSettings:
    """How the `browser` tool runs Chromium.

    Attributes:
        executable_path: Chromium's executable; `None` looks for `chromium`,
            `chromium-browser`, `google-chrome` and `google-chrome-stable` on `PATH`, and
            first for `chromium-headless-shell` when `headless`.
        headless: Run without a window (the default; a window needs a display).
        max_tabs: Most open tabs per session; pages a site opens beyond it are closed.
        max_chars: Default and ceiling of `maxChars` for `snapshot` and `text` (at most
            20,000: the untrusted-content wrapper's own cap).
        idle_seconds: A session's browser context closes after this long without a call;
            Chromium itself stops when no session has one.
        action_timeout_seconds: Budget of one navigation, wait or element action.
        js_heap_mb: V8 heap cap of each renderer (`--max-old-space-size`).
        media_dir: Where screenshots and PDFs are written (a fresh temporary directory when
            `None`), one subdirectory per session.
        downloads: Accept downloads (off by default: a download is cancelled).
        downloads_dir: Where accepted downloads are saved (a fresh temporary directory when
            `None`), one subdirectory per session.
        max_download_bytes: Largest download saved (64 MiB); a larger one is not copied
            into `downloads_dir`, and a warning names its size.
        allow_private_network: Let pages reach private, loopback and link-local addresses.
            Off by default; only for a browser meant to drive an intranet.
    """

    executable_path: str | None = None
    headless: bool = True
    max_tabs: int = 8
    max_chars: int = 20_000
    idle_seconds: float = 300.0
    action_timeout_seconds: float = 15.0
    js_heap_mb: int = 512
    media_dir: Path | None = None
    downloads: bool = False
    downloads_dir: Path | None = None
    max_download_bytes: int = 64 * 1024 * 1024
    allow_private_network: bool = False

    def __post_init__(self) -> None:
        for name in _POSITIVE:
            value: object = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigurationError(
                    f"Browser setting `{name}` must be a number, got {value!r}."
                )
            if not math.isfinite(value) or value <= 0:
                raise ConfigurationError(
                    f"Browser setting `{name}` must be positive, got {value!r}."
                )
        if self.max_chars > 20_000:
            raise ConfigurationError(
                f"Browser setting `max_chars` must be at most 20000, got {self.max_chars!r}."
            )
        for name in ("headless", "downloads", "allow_private_network"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigurationError(
                    f"Browser setting `{name}` must be true or false, got {getattr(self, name)!r}."
                )
