"""`clawcell mcp serve --http`: the code mode MCP server over streamable HTTP.

Threat model. The server runs cells with the user's tools, so reaching it is as good as
running code as the user. It listens on loopback by default. Every request must carry
`Authorization: Bearer <token>` (compared in constant time); browsers cannot add that header
to a cross-site request without a CORS preflight, which is never granted, so a web page
cannot drive it. The `Host` header must name an allowed host with the server's port, which
defeats DNS rebinding (a page whose name resolves to 127.0.0.1 still sends its own name), and
an `Origin` header, when present, must be the origin of an allowed host. The SDK's own
transport checks run as well. Limits: there is no TLS, so a non-loopback address (which
needs `allow_hosts`) belongs behind a TLS-terminating proxy; the token is as secret as the
place it is kept (the environment variable or the file that holds it).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ..errors import ConfigurationError
from ._server import CodeModeServer

__all__ = ["LOOPBACK_HOSTS", "HttpGuard", "serve_http"]

LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "[::1]")
PATH: Final = "/mcp"

Scope = Mapping[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Mapping[str, Any]], Any]
App = Callable[[Scope, Receive, Send], Any]


class HttpGuard:
    """ASGI middleware refusing requests with a foreign `Host`/`Origin` or without the token.

    Args:
        app: The ASGI application to protect.
        token: The bearer token every request must send.
        hosts: Allowed `Host` header values (`name:port`).
    """

    def __init__(self, app: App, *, token: str, hosts: Iterable[str]) -> None:
        if not token:
            raise ConfigurationError("the HTTP server needs a non-empty bearer token.")
        self._app = app
        self._token = f"Bearer {token}".encode()
        self.hosts = frozenset(hosts)
        self.origins = frozenset(f"http://{host}" for host in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the MCP transport has none: refuse, never route
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":  # lifespan
            await self._app(scope, receive, send)
            return
        refusal = self.refusal(scope["headers"])
        if refusal is None:
            await self._app(scope, receive, send)
            return
        status, message = refusal
        await _respond(send, status, message)

    def refusal(self, raw: Iterable[tuple[bytes, bytes]]) -> tuple[int, str] | None:
        """`(status, message)` for a refused request, `None` for an accepted one."""
        headers: dict[bytes, list[bytes]] = {}
        for key, value in raw:
            headers.setdefault(key.lower(), []).append(value)
        hosts = headers.get(b"host", [])
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else None
        if host not in self.hosts:
            return 421, (
                f"Host {host!r} is not served here; use one of {', '.join(sorted(self.hosts))} "
                "(add others with `--allow-host`)."
            )
        origins = headers.get(b"origin", [])
        origin = origins[0].decode("latin-1") if len(origins) == 1 else None
        if origins and origin not in self.origins:
            return 403, f"Origin {origin!r} may not call this server."
        tokens = headers.get(b"authorization", [])
        if len(tokens) != 1 or not secrets.compare_digest(tokens[0], self._token):
            return 401, (
                "Missing or wrong bearer token: send `Authorization: Bearer <token>` with the "
                "token given to `clawcell mcp serve` (`--token` or `CLAWCELL_MCP_TOKEN`)."
            )
        return None


async def _respond(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="clawcell"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # `IPPROTO_TCP`, not 0: asyncio sets `TCP_NODELAY` only on accepted sockets whose `proto`
    # says TCP; without it each response on a kept-alive connection waits ~40 ms for the
    # client's delayed ACK (Nagle's algorithm).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigurationError(f"cannot listen on {host}:{port}: {exc.strerror or exc}.") from exc
    return sock


def _allowed_hosts(host: str, port: int, extra: Iterable[str]) -> list[str]:
    """Loopback names, then the other allowed names, then the bound address (last)."""
    names = [n for n in LOOPBACK_HOSTS if n != _bracketed(host)]
    allowed = [f"{name}:{port}" for name in names]
    allowed += [e if ":" in e.rsplit("]", 1)[-1] else f"{e}:{port}" for e in extra]
    if host not in ("0.0.0.0", "::"):
        allowed.append(f"{_bracketed(host)}:{port}")
    return allowed


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def serve_http(
    server: CodeModeServer,
    *,
    token: str,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_hosts: Iterable[str] = (),
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve `server` over streamable HTTP at `http://<host>:<port>/mcp` until stopped.

    Args:
        server: The code mode MCP server.
        token: The bearer token clients must send.
        host: The address to bind; loopback by default.
        port: The port; `0` picks a free one (reported through `on_ready`).
        allow_hosts: More `Host` values to accept (`name` or `name:port`), for a proxy or a
            non-loopback address.
        on_ready: Called with the endpoint URL once the socket listens.

    Cancelling it stops the server in order: the listener and every connection are closed,
    requests still in flight are cancelled, and the application's lifespan ends.

    Raises:
        ConfigurationError: The address cannot be bound, or the token is empty.
    """
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    sock = _listen(host, port)
    actual = sock.getsockname()[1]
    hosts = _allowed_hosts(host, actual, allow_hosts)
    security = TransportSecuritySettings(
        allowed_hosts=hosts, allowed_origins=[f"http://{h}" for h in hosts]
    )
    app = server.sdk_server.streamable_http_app(
        streamable_http_path=PATH, host=host, transport_security=security
    )
    guarded = HttpGuard(app, token=token, hosts=hosts)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    if on_ready is not None:
        on_ready(f"http://{hosts[0] if host in ('0.0.0.0', '::') else hosts[-1]}{PATH}")
    http = uvicorn.Server(config)
    serving = asyncio.ensure_future(http.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        await _stopped(http, serving)
        raise
    finally:
        sock.close()


async def _stopped(http: Any, serving: asyncio.Future[None]) -> None:
    """Stop `http` now, through its own shutdown: a cancelled `serve` never closed its
    listener (uvloop reports the open server as a `ResourceWarning` when its loop closes),
    nor ended the lifespan. Requests in flight are cancelled, not waited for."""
    http.config.timeout_graceful_shutdown = 0
    http.should_exit = True
    await serving
