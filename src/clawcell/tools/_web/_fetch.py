"""Fetching one URL safely: scheme and address checks on every hop, caps on bytes and time."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

import httpcore
import httpx

from ..._lazy import value_class
from ...errors import ToolError
from .._guard import AddressGuard
from ._cache import CachedPage, FetchCache
from ._decoding import BoundedDecoder
from ._fetch_settings import FetchSettings
from ._transport import PinnedTransport

__all__ = ["Fetcher", "Page", "checked_url"]

_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_NETWORK_ERRORS: Final = (
    httpx.HTTPError,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
)


@value_class
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
        except (TimeoutError, httpcore.TimeoutException) as exc:
            raise ToolError(
                f"Fetching {str(start)!r} took longer than {self.settings.timeout_seconds} s; "
                "try again later or another URL.",
                code="timeout",
            ) from exc
        except _NETWORK_ERRORS as exc:
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
        async with PinnedTransport(self.guard, self._ssl_context()) as transport:
            page: CachedPage | None = None
            if stale is not None and (stale.etag or stale.last_modified):
                page = await self._revalidate(transport, stale)
                if page is stale:
                    return Page(url=key, page=self._store(key, stale), cache="revalidated")
            page = page or await self._follow(transport, url)
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

    @asynccontextmanager
    async def _get(
        self, transport: PinnedTransport, url: httpx.URL, headers: dict[str, str]
    ) -> AsyncGenerator[httpx.Response]:
        """One GET straight through the transport: httpx's client would parse `Location`
        itself (raising its own errors for `javascript:` and friends) and decode bodies
        without a bound; here redirects and decoding are ours."""
        timeout = httpx.Timeout(self.settings.timeout_seconds).as_dict()
        request = httpx.Request("GET", url, headers=headers, extensions={"timeout": timeout})
        response = await transport.handle_async_request(request)
        response.request = request
        try:
            yield response
        finally:
            await response.aclose()

    async def _revalidate(self, transport: PinnedTransport, stale: CachedPage) -> CachedPage | None:
        """`stale` itself when the server answers 304, a new page on 200, else `None`."""
        headers = self._headers()
        if stale.etag:
            headers["If-None-Match"] = stale.etag
        if stale.last_modified:
            headers["If-Modified-Since"] = stale.last_modified
        url = checked_url(stale.final_url)
        async with self._get(transport, url, headers) as response:
            if response.status_code == 200:
                return await self._read(response, url)
            return stale if response.status_code == 304 else None

    def _headers(self) -> dict[str, str]:
        return {
            "User-Agent": self.settings.user_agent,
            "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            "Accept-Encoding": "identity",
        }

    async def _follow(self, transport: PinnedTransport, url: httpx.URL) -> CachedPage:
        for _hop in range(self.settings.max_redirects + 1):
            async with self._get(transport, url, self._headers()) as response:
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
        cap = self.settings.max_bytes
        encodings = response.headers.get_list("content-encoding", split_commas=True)
        decoder = BoundedDecoder(encodings, cap=cap + 1)
        chunks: list[bytes] = []
        size = 0
        async for raw in response.aiter_raw():
            if decoder.layered:  # bounded, but zstd steps cost CPU: keep the loop free
                pieces = await asyncio.to_thread(decoder.drain, raw, cap + 1 - size)
            else:
                pieces = decoder.drain(raw, cap + 1 - size)
            chunks += pieces
            size += sum(map(len, pieces))
            if size > cap or decoder.exhausted:
                break
        return CachedPage(
            final_url=str(url),
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body=b"".join(chunks)[:cap],
            body_truncated=size > cap or decoder.exhausted,
            fetched_at=_now(),
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
        )
