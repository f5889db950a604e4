"""The guard proxy: every connection a session's Chromium makes, checked per address.

A small HTTP forward proxy on 127.0.0.1 (one per browser context). For `CONNECT host:port`
(https, wss) and for absolute-URI requests (http), it asks the `BrowserGuard` for the host's
checked addresses and connects to exactly one of them, or answers 403 and records the
refusal. Plain-http requests are sent upstream with `Connection: close`, one request per
client connection, so a kept-alive connection can never carry a second request to a host
that was not checked. Chromium is launched with `<-loopback>` in its bypass list, so even
loopback URLs come here.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

from ...errors import ToolError
from ._browser_guard import BrowserGuard

__all__ = ["GuardProxy"]

_HEAD_TIMEOUT: Final = 30.0
_HOP_BY_HOP: Final = frozenset(
    {b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization", b"te"}
)


class GuardProxy:
    """A forward proxy that refuses what `guard` refuses; `refused(url, reason)` hears of it."""

    def __init__(self, guard: BrowserGuard, refused: Callable[[str, str], None]) -> None:
        self._guard = guard
        self._refused = refused
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        """Listen on a free loopback port; the proxy's `http://127.0.0.1:<port>` URL."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0, limit=65_536)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def aclose(self) -> None:
        """Stop listening and cut every open tunnel."""
        if self._server is not None:
            self._server.close()
            self._server = None
        tasks, self._tasks = list(self._tasks), set()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # `aclose` cut the connection; asyncio's server would log a cancelled handler
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT)
        line, _, headers = head.partition(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ", 2)
        if method.upper() == "CONNECT":
            host, port = _host_port(target, 443)
            shown, path = f"https://{target}", ""
        else:
            parts = urlsplit(target)
            if parts.scheme != "http" or not parts.hostname:
                await _refuse(writer, "only absolute http URLs go through this proxy")
                return
            host, port = parts.hostname, parts.port or 80
            shown = target
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            addresses = await self._guard.addresses(host, port)
        except ToolError as exc:
            self._refused(shown, exc.message)
            await _refuse(writer, exc.message)
            return
        upstream_reader, upstream_writer = await _connect(addresses, port)
        try:
            if path:
                upstream_writer.write(_origin_request(method, path, version, headers))
            else:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await asyncio.gather(
                _pipe(reader, upstream_writer), _pipe(upstream_reader, writer, close=True)
            )
        finally:
            upstream_writer.close()


def _host_port(target: str, default: int) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or "]" in port:
        return target.strip("[]"), default
    return host.strip("[]"), int(port)


def _origin_request(method: str, path: str, version: str, headers: bytes) -> bytes:
    kept = [
        header
        for header in headers.split(b"\r\n")
        if header and header.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP
    ]
    lines = [f"{method} {path} {version}".encode("latin-1"), *kept, b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _connect(
    addresses: list[str], port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    error: OSError | None = None
    for address in addresses:
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port), 15.0)
        except OSError as exc:  # `TimeoutError` is an `OSError`
            error = exc
    raise error or OSError("no address")


async def _pipe(
    source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, close: bool = False
) -> None:
    try:
        while chunk := await source.read(65_536):
            sink.write(chunk)
            await sink.drain()
    except OSError:
        pass
    finally:
        if close:
            sink.close()
        elif sink.can_write_eof():
            with contextlib.suppress(OSError):
                sink.write_eof()


async def _refuse(writer: asyncio.StreamWriter, reason: str) -> None:
    body = f"Refused by clawcell's browser guard: {reason}\n".encode()
    writer.write(
        b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
        + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
