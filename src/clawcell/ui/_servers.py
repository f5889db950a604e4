"""`serve_ui`: the Control UI and its canvas host, two uvicorn listeners started together.

The app and the canvas host (`_canvas_host.py`) must be distinct origins, so they listen on
two ports of the same address; both are bound before the app is built, so the pages know
the canvas origin (`UiSettings.canvas_port`) from the first request.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import socket
from collections.abc import AsyncGenerator
from typing import Any

from starlette.applications import Starlette

from .._lazy import value_class
from ..catalog import Tool
from ..errors import ConfigurationError
from ._app import create_app
from ._protocol import ChatAgent, DocumentStore
from ._settings import UiSettings

__all__ = ["UiServers", "bind", "bind_listeners", "serve_ui"]


def bind(host: str, port: int) -> socket.socket:
    """A listening, non-blocking TCP socket on `host:port` (`0` picks a free port).

    Raises:
        ConfigurationError: the address cannot be bound (say which, and what to do).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # `IPPROTO_TCP`, not 0: asyncio sets `TCP_NODELAY` only on accepted sockets whose `proto`
    # says TCP; without it each response on a kept-alive connection waits ~40 ms for the
    # client's delayed ACK (Nagle's algorithm).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigurationError(_bind_failure(host, port, exc)) from exc
    sock.listen(128)
    sock.setblocking(False)
    return sock


def bind_listeners(settings: UiSettings) -> tuple[socket.socket, socket.socket]:
    """The app's and the canvas host's listening sockets for `serve_ui(sockets=…)`.

    Both bind `settings.host`, on `settings.port` and `settings.canvas_port` (`0` picks a
    free port). A caller that binds first learns of a taken port before it builds its agent;
    it closes the sockets after serving.

    Raises:
        ConfigurationError: a port cannot be bound (say which, and what to do); nothing is
            left open.
    """
    app = bind(settings.host, settings.port)
    try:
        return app, bind(settings.host, settings.canvas_port)
    except BaseException:
        app.close()
        raise


def _bind_failure(host: str, port: int, exc: OSError) -> str:
    """What a failed bind means: the host is wrong, or the port is taken or not allowed."""
    where = f"cannot bind {host}:{port}: {exc.strerror or exc}"
    if isinstance(exc, socket.gaierror):
        return f"{where}; `host` {host!r} does not resolve: give an IP address such as 127.0.0.1."
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{where}; {host!r} is not an address of this machine: use 127.0.0.1 or 0.0.0.0."
    return f"{where}; pick another port (0 picks a free one)."


@value_class
class UiServers:
    """The running UI: its settings (with the ports bound), app, and the two servers."""

    settings: UiSettings
    app: Starlette
    servers: tuple[Any, Any]
    tasks: tuple[asyncio.Task[None], asyncio.Task[None]]

    @property
    def base_url(self) -> str:
        """The app's URL (without the token)."""
        return _url(self.settings.host, self.settings.port)

    @property
    def canvas_url(self) -> str:
        """The canvas host's URL."""
        return _url(self.settings.host, self.settings.canvas_port)

    async def wait(self) -> None:
        """Return when either server stops (an interrupt stops both)."""
        await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)


def _url(host: str, port: int) -> str:
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


@contextlib.asynccontextmanager
async def serve_ui(
    agent: ChatAgent,
    settings: UiSettings,
    *,
    documents: DocumentStore | None = None,
    sockets: tuple[socket.socket, socket.socket] | None = None,
    automations: Tool | None = None,
) -> AsyncGenerator[UiServers]:
    """Serve the UI over `agent` and its canvas host until the block exits.

    Both listeners bind `settings.host`, on `settings.port` and `settings.canvas_port`
    (`0` picks a free port; the yielded `settings` hold the ports bound), or use `sockets`
    (the app's and the canvas host's, bound by the caller, who closes them). `automations`
    is the tool the Jobs panel acts through (see `create_app`).

    Raises:
        ConfigurationError: a port cannot be bound.
    """
    async with contextlib.AsyncExitStack() as stack:
        if sockets is None:
            sockets = bind_listeners(settings)
            for sock in sockets:
                stack.enter_context(contextlib.closing(sock))
        port, canvas_port = (s.getsockname()[1] for s in sockets)
        settings = dataclasses.replace(settings, port=port, canvas_port=canvas_port)
        app = create_app(agent, settings, documents=documents, automations=automations)
        servers = (_server(app, lifespan=True), _server(app.state.canvas_app))
        tasks = (
            asyncio.create_task(servers[0].serve(sockets=[sockets[0]])),
            asyncio.create_task(servers[1].serve(sockets=[sockets[1]])),
        )
        try:
            while not all(s.started for s in servers) and not any(t.done() for t in tasks):
                await asyncio.sleep(0.01)
            yield UiServers(settings=settings, app=app, servers=servers, tasks=tasks)
        finally:
            for server in servers:
                server.should_exit = True
            await app.state.turns.close()  # live streams never end by themselves
            await asyncio.gather(*tasks, return_exceptions=True)


def _server(app: Any, *, lifespan: bool = False) -> Any:
    import uvicorn

    mode = "on" if lifespan else "off"
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=mode))
