"""The fleet's shared loopback parts (`tests/ui/_fleet.py`): an OpenAI-compatible scripted
model server every worker calls, and a round-robin reverse proxy that passes each request to
the next worker and streams the answer back unbuffered (Server-Sent Events pass through as
they are written). Both run on one event loop in a daemon thread (`Loopback`)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import socket
import threading
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future
from typing import Any, Final, TypeVar

import httpx
import uvicorn

from tests.agent import _fake_chat as fake
from tests.agent._wire import Answer, Request, WireServer

T = TypeVar("T")
WORKER_HEADER: Final = "x-fleet-worker"
"""The response header the proxy adds: the index of the worker that answered."""
_HOP_BY_HOP: Final = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"}
)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        parts: list[dict[str, Any]] = content  # pyright: ignore[reportUnknownVariableType]
        return "".join(str(p.get("text", "")) for p in parts)
    return str(content or "")


def model_answer(request: Request) -> Answer:
    """The scripted model: a user message `hold…` runs a cell that holds, `deploy <x>` one
    that needs approval, `canvas` one that makes a canvas (and a reply embedding it once the
    tool result names it); anything else is answered with the user messages it was sent
    (`saw: a | b | c`)."""
    messages: list[dict[str, Any]] = request.body["messages"]
    users = [_text(m) for m in messages if m.get("role") == "user"]
    code = _cell(users[-1]) if messages[-1].get("role") == "user" else None
    if code is None:
        embed = re.search(r'\[embed ref=\\?"(cv_\w+)', _text(messages[-1]))
        reply = "saw: " + " | ".join(users)
        if embed is not None and messages[-1].get("role") == "tool":
            reply = f'Here is the canvas.\n[embed ref="{embed.group(1)}" title="Fleet" /]'

        return fake.text(reply) if request.body.get("stream") else fake.whole(reply)
    arguments = json.dumps({"code": code})
    call = fake.call_chunks(f"call_{len(messages)}", [arguments])
    return fake.stream([*call, fake.chunk({}, "tool_calls"), fake.usage()])


def _cell(text: str) -> str | None:
    if text.startswith("hold"):
        return 'text("holding"); return await hold();'
    if text.startswith("deploy"):
        target = json.dumps(text.removeprefix("deploy").strip())
        return f"return await deploy({{ target: {target} }});"
    if text.startswith("canvas"):
        html = "<!doctype html><title>fleet</title><p id=hello>hello from the fleet</p>"
        return f"return await canvas({{ html: {json.dumps(html)} }});"
    return None


Pick = Callable[[str, str], int]
"""`pick(method, path)`: the index of the backend a request goes to."""


class RoundRobin:
    """An ASGI reverse proxy to `backends` (base URLs), one request each in turn (or the one
    `pick` chooses)."""

    def __init__(self, backends: Sequence[str], pick: Pick | None = None) -> None:
        self.backends = list(backends)
        self._pick = pick
        self._next = itertools.cycle(range(len(self.backends)))
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(60, read=None))
        self.served: list[int] = []
        """The backend index of each request, in order."""
        self.requests: list[tuple[str, str, int]] = []
        """`(method, path, backend index)` of each request, in order."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await self._client.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        index = (
            next(self._next) if self._pick is None else self._pick(scope["method"], scope["path"])
        )
        self.served.append(index)
        self.requests.append((scope["method"], scope["path"], index))
        target = self.backends[index] + scope["raw_path"].decode()
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode()
        headers = [(k, v) for k, v in scope["headers"] if k.decode().lower() not in _HOP_BY_HOP]
        request = self._client.build_request(scope["method"], target, headers=headers, content=body)
        response = await self._client.send(request, stream=True)
        try:
            out = [(k.encode(), v.encode()) for k, v in response.headers.multi_items()
                   if k.lower() not in _HOP_BY_HOP]  # fmt: skip
            out.append((WORKER_HEADER.encode(), str(index).encode()))
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": out})  # fmt: skip
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()


def loopback_socket() -> socket.socket:
    """A listening TCP socket on a free loopback port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


class Loopback:
    """An event loop in a daemon thread serving the model server and the proxies."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._servers: list[tuple[uvicorn.Server, Future[None], socket.socket]] = []
        self.model = WireServer([], check=model_answer)
        try:
            self.call(self.model.__aenter__())
        except BaseException:  # else the loop and its thread outlive the failed fixture
            self._stop_loop()
            raise

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def proxy(
        self, sock: socket.socket, backends: Sequence[str], pick: Pick | None = None
    ) -> RoundRobin:
        """Serve a `RoundRobin` over `backends` on the listening `sock`."""
        proxy = RoundRobin(backends, pick)
        config = uvicorn.Config(proxy, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        serving = asyncio.run_coroutine_threadsafe(server.serve(sockets=[sock]), self.loop)
        self._servers.append((server, serving, sock))
        return proxy

    def close(self) -> None:
        """Stop the proxies and the model server; every socket and the loop are closed even
        when one of them failed (a leaked socket fails a later test: README, "Development")."""
        try:
            for server, _, _ in self._servers:
                server.should_exit = True
            for _, serving, _ in self._servers:
                serving.result(timeout=60)
            self.call(self.model.__aexit__(None, None, None))
        finally:
            for _, _, sock in self._servers:
                sock.close()
            self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=30)
        self.loop.close()
