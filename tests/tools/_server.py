"""A local HTTP server on a loopback port, with routes the web tests declare per test."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[["Request"], "Response"]


@dataclass(kw_only=True)
class Request:
    """What the server saw."""

    method: str
    path: str
    headers: dict[str, str]


@dataclass(kw_only=True)
class Response:
    """What a route answers; `chunks` are written one after another (then `block` is waited on)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict[str, str])
    body: bytes = b""
    chunks: list[bytes] | None = None
    block: threading.Event | None = None


@dataclass(kw_only=True)
class LocalServer:
    """Routes by path; records every request."""

    port: int = 0
    routes: dict[str, Handler] = field(default_factory=dict[str, Handler])
    requests: list[Request] = field(default_factory=list[Request])
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def route(self, path: str, response: Response | Handler) -> None:
        self.routes[path] = response if callable(response) else (lambda _request: response)

    def hits(self, path: str) -> int:
        return sum(1 for request in self.requests if request.path.split("?")[0] == path)


def _handler(server: LocalServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            request = Request(
                method="GET",
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
            )
            server.requests.append(request)
            handler = server.routes.get(self.path.split("?")[0])
            response = handler(request) if handler else Response(status=404, body=b"no route")
            self._send(response)

        def _send(self, response: Response) -> None:
            self.send_response(response.status)
            chunks = response.chunks if response.chunks is not None else [response.body]
            headers = {"Content-Length": str(sum(map(len, chunks))), **response.headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                if response.block is not None:
                    response.block.wait()
            except (BrokenPipeError, ConnectionResetError):
                return

        def log_message(self, format: str, *args: Any) -> None:
            return

    return _Handler


@contextmanager
def local_server() -> Generator[LocalServer]:
    """A started server on 127.0.0.1 (random port); stopped, and blocked routes released, after."""
    state = LocalServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()
