"""The `web_fetch` cache: bodies kept in memory for a TTL, then revalidated by validators."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..._lazy import value_class
from ...errors import ConfigurationError

__all__ = ["CachedPage", "FetchCache"]


@value_class
class CachedPage:
    """A fetched body and what is needed to serve or revalidate it.

    Attributes:
        final_url: The URL after redirects (revalidation goes there).
        status: HTTP status of the final response.
        content_type: The `Content-Type` header (`""` when absent).
        body: The body bytes (at most the fetch's byte cap).
        body_truncated: The body was cut at the byte cap.
        fetched_at: ISO 8601 UTC time the body was (re)fetched or revalidated.
        etag: The `ETag` header, for `If-None-Match`.
        last_modified: The `Last-Modified` header, for `If-Modified-Since`.
        stored_at: Clock reading (seconds) when the entry was last confirmed fresh.
    """

    final_url: str
    status: int
    content_type: str
    body: bytes
    body_truncated: bool
    fetched_at: str
    etag: str | None = None
    last_modified: str | None = None
    stored_at: float = 0.0


@dataclass(kw_only=True)
class FetchCache:
    """An in-memory LRU of fetched pages with a time to live.

    A fresh entry is served as `hit`. A stale entry with an `ETag` or `Last-Modified` is
    revalidated with a conditional request (`304` → `revalidated`); otherwise it is fetched
    again (`miss`). Only `200` responses are kept.

    Attributes:
        ttl_seconds: How long an entry is served without asking the server.
        max_entries: Most pages kept; the least recently used goes first.
        max_total_bytes: Most body bytes kept across all pages (evicting the least recently
            used first).
        clock: Monotonic seconds (injectable for tests).
    """

    ttl_seconds: float = 900.0
    max_entries: int = 128
    max_total_bytes: int = 64 * 1024 * 1024
    clock: Callable[[], float] = time.monotonic
    _pages: OrderedDict[str, CachedPage] = field(
        default_factory=OrderedDict[str, CachedPage], repr=False
    )

    def __post_init__(self) -> None:
        if self.ttl_seconds < 0 or self.max_entries < 1 or self.max_total_bytes < 1:
            raise ConfigurationError(
                "FetchCache needs `ttl_seconds` >= 0, `max_entries` >= 1 and "
                f"`max_total_bytes` >= 1, got {self.ttl_seconds!r}, {self.max_entries!r} and "
                f"{self.max_total_bytes!r}."
            )

    def get(self, url: str) -> tuple[CachedPage, bool] | None:
        """The entry for `url` and whether it is still fresh, or `None`."""
        page = self._pages.get(url)
        if page is None:
            return None
        self._pages.move_to_end(url)
        return page, self.clock() - page.stored_at < self.ttl_seconds

    def put(self, url: str, page: CachedPage) -> CachedPage:
        """Store `page` for `url`, stamped now; returns the stored entry."""
        stored = replace(page, stored_at=self.clock())
        self._pages[url] = stored
        self._pages.move_to_end(url)
        while len(self._pages) > self.max_entries or (
            len(self._pages) > 1 and self._total() > self.max_total_bytes
        ):
            self._pages.popitem(last=False)
        return stored

    def _total(self) -> int:
        return sum(len(page.body) for page in self._pages.values())

    def clear(self) -> None:
        """Forget every entry."""
        self._pages.clear()
