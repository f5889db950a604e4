"""An httpx transport whose every TCP connection goes to an address the guard has checked.

httpx resolves names inside its network backend; this module swaps that backend for one that
asks `AddressGuard` for the checked addresses and connects to the IP itself, while the URL
(and so the `Host` header, TLS SNI and certificate check) keeps the name. Proxies from the
environment are never used, since a proxy would make its own lookup.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Iterable
from typing import Any, cast

import httpcore
import httpx

from .._guard import AddressGuard

__all__ = ["PinnedTransport"]


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, guard: AddressGuard) -> None:
        self._guard = guard
        self._inner: httpcore.AsyncNetworkBackend = cast(Any, httpcore).AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        failure: Exception | None = None
        for address in await self._guard.addresses(host, port):
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore.ConnectError(f"no address to connect to for {host!r}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("web_fetch never connects to Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


class PinnedTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over connections pinned to guard-checked addresses."""

    def __init__(self, guard: AddressGuard, ssl_context: ssl.SSLContext) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=4,
            network_backend=_GuardedBackend(guard),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` through the pinned pool (exceptions are httpcore's; callers map them)."""
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        response = await self._pool.handle_async_request(core)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=cast(dict[str, Any], cast(Any, response).extensions),
        )

    async def aclose(self) -> None:
        """Close every pooled connection."""
        await self._pool.aclose()
