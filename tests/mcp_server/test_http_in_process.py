"""`serve_http` in this process: what each request costs the server, read on its own side
(the accepted socket's options, the handlers a call runs). Each test runs on asyncio's loop
and on uvloop's, the one `clawcell mcp serve` picks when it is installed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest
import uvloop

from clawcell import CodeMode
from clawcell.mcp_server import CodeModeServer, serve_http
from tests._sockets import accepted_nodelay, answered_connection
from tests.conftest import echo_tool
from tests.mcp_server._serve import call, http_client_of

T = TypeVar("T")
LoopFactory = Callable[[], asyncio.AbstractEventLoop] | None
LOOPS = [pytest.param(None, id="asyncio"), pytest.param(uvloop.new_event_loop, id="uvloop")]


def _run(main: Coroutine[Any, Any, T], loop: LoopFactory) -> T:
    with asyncio.Runner(loop_factory=loop) as runner:
        return runner.run(main)


@asynccontextmanager
async def _serving(server: CodeModeServer) -> AsyncGenerator[str]:
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(serve_http(server, token="t0ken", on_ready=ready.set_result))
    try:
        yield await ready
    finally:
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_kept_alive_connection_sends_each_response_without_waiting_for_an_ack(
    loop: LoopFactory,
) -> None:
    async def main() -> bool:
        async with CodeMode([]) as mode, _serving(CodeModeServer(mode)) as endpoint:
            url = urlsplit(endpoint)
            host, port = url.hostname or "", url.port or 0
            request = f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
            client = await asyncio.to_thread(answered_connection, host, port, request)
            with client:
                return accepted_nodelay(client)

    assert _run(main(), loop) is True


@pytest.mark.parametrize("loop", LOOPS)
def test_a_tool_call_does_not_list_the_tools_again(
    monkeypatch: pytest.MonkeyPatch, loop: LoopFactory
) -> None:
    # The SDK checks `Mcp-Param-*` headers against the called tool's input schema; without a
    # schema lookup of the server's own it ran the `tools/list` handler on every call.
    listed: list[int] = []
    original = CodeModeServer.tool_definitions

    async def counted(self: CodeModeServer) -> list[dict[str, Any]]:
        listed.append(1)
        return await original(self)

    monkeypatch.setattr(CodeModeServer, "tool_definitions", counted)

    async def main() -> tuple[int, int, list[Any]]:
        async with (
            CodeMode([echo_tool()]) as mode,
            _serving(CodeModeServer(mode)) as endpoint,
            http_client_of(endpoint, "t0ken") as client,
        ):
            first = await call(client, "exec", {"code": "return 1;"})
            after_one = len(listed)
            rest = [await call(client, "exec", {"code": f"return {n};"}) for n in (2, 3, 4)]
            return after_one, len(listed), [e["value"] for e in (first, *rest)]

    after_one, after_four, values = _run(main(), loop)
    assert values == [1, 2, 3, 4]
    assert after_four == after_one
