"""Fetching one URL safely: scheme and address checks on every hop, caps on bytes and time."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from dataclasses import dataclass, field
from typing import Final

import httpcore
import httpx

from ..errors import ToolError
from ._cache import CachedPage, FetchCache
from ._guard import AddressGuard
from ._settings import FetchSettings
from ._transport import PinnedTransport

__all__ = ["Fetcher", "Page", "checked_url"]

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True, kw_only=True)
class Page:
    """A fetched page and where it came from (`cache` is `hit`, `miss` or `revalidated`)."""

    url: str
    page: CachedPage
    cache: str


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def checked_url(text: object, base: httpx.URL | None = None) -> httpx.URL:
    """`text` parsed (relative to `base`) as an `http(s)` URL without credentials."""
    try:
        url = httpx.URL(str(text)) if base is None else base.join(str(text))
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise ToolError(f"URL {text!r} is not valid: {exc}.", code="invalid_url") from exc
    if url.scheme not in ("http", "https"):
        raise ToolError(
            f"URL {str(url)!r} uses the scheme {url.scheme!r}; `web_fetch` only fetches "
            "http and https URLs.",
            code="invalid_url",
        )
    if not url.host:
        raise ToolError(f"URL {str(url)!r} has no host.", code="invalid_url")
    if url.userinfo:
        raise ToolError(
            f"URL {str(url)!r} carries credentials; remove the `user:password@` part.",
            code="invalid_url",
        )
    return url


@dataclass(kw_only=True)
class Fetcher:
    """Fetches pages through the guard and the cache."""

    guard: AddressGuard
    settings: FetchSettings = field(default_factory=FetchSettings)
    cache: FetchCache | None = None
    _tls: ssl.SSLContext | None = field(default=None, init=False, repr=False)

    async def fetch(self, url: object) -> Page:
        """The page at `url`, from the cache or the network; `ToolError`s say what failed."""
        start = checked_url(url)
        try:
            async with asyncio.timeout(self.settings.timeout_seconds):
                return await self._fetch(start)
        except TimeoutError as exc:
            raise ToolError(
                f"Fetching {str(start)!r} took longer than {self.settings.timeout_seconds} s; "
                "try again later or another URL.",
                code="timeout",
            ) from exc
        except (httpx.HTTPError, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise ToolError(
                f"Fetching {str(start)!r} failed: {type(exc).__name__}: {exc or 'no detail'}.",
                code="fetch_failed",
            ) from exc

    async def _fetch(self, url: httpx.URL) -> Page:
        key = str(url)
        cached = None if self.cache is None else self.cache.get(key)
        if cached is not None and cached[1]:
            return Page(url=key, page=cached[0], cache="hit")
        stale = cached[0] if cached is not None else None
        async with httpx.AsyncClient(
            transport=PinnedTransport(self.guard, self._ssl_context()),
            trust_env=False,
            follow_redirects=False,
            timeout=self.settings.timeout_seconds,
        ) as client:
            page: CachedPage | None = None
            if stale is not None and (stale.etag or stale.last_modified):
                page = await self._revalidate(client, stale)
                if page is stale:
                    return Page(url=key, page=self._store(key, stale), cache="revalidated")
            page = page or await self._follow(client, url)
        return Page(
            url=key, page=self._store(key, page) if page.status == 200 else page, cache="miss"
        )

    def _ssl_context(self) -> ssl.SSLContext:
        """One verifying TLS context per fetcher (loading the CA bundle costs milliseconds)."""
        if self._tls is None:
            self._tls = httpx.create_ssl_context(trust_env=False)
        return self._tls

    def _store(self, key: str, page: CachedPage) -> CachedPage:
        return page if self.cache is None else self.cache.put(key, page)

    async def _revalidate(self, client: httpx.AsyncClient, stale: CachedPage) -> CachedPage | None:
        """`stale` itself when the server answers 304, a new page on 200, else `None`."""
        headers = self._headers()
        if stale.etag:
            headers["If-None-Match"] = stale.etag
        if stale.last_modified:
            headers["If-Modified-Since"] = stale.last_modified
        url = checked_url(stale.final_url)
        async with client.stream("GET", url, headers=headers) as response:
            if response.status_code == 200:
                return await self._read(response, url)
            return stale if response.status_code == 304 else None

    def _headers(self) -> dict[str, str]:
        return {
            "User-Agent": self.settings.user_agent,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            "Accept-Encoding": "identity",
        }

    async def _follow(self, client: httpx.AsyncClient, url: httpx.URL) -> CachedPage:
        for _hop in range(self.settings.max_redirects + 1):
            async with client.stream("GET", url, headers=self._headers()) as response:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location:
                    url = checked_url(location, base=url)
                    continue
                return await self._read(response, url)
        raise ToolError(
            f"{str(url)!r} redirected more than {self.settings.max_redirects} times; "
            "fetch the final URL directly.",
            code="too_many_redirects",
        )

    async def _read(self, response: httpx.Response, url: httpx.URL) -> CachedPage:
        chunks: list[bytes] = []
        size = 0
        truncated = False
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > self.settings.max_bytes:
                truncated = True
                break
        body = b"".join(chunks)[: self.settings.max_bytes]
        return CachedPage(
            final_url=str(url),
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body=body,
            body_truncated=truncated,
            fetched_at=_now(),
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
        )
