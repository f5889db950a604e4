"""The HTTP server's accepted connections send each response at once (`TCP_NODELAY`)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from clawcell import CodeMode
from clawcell.mcp_server import CodeModeServer, serve_http
from tests._sockets import accepted_nodelay, answered_connection


def test_a_kept_alive_connection_sends_each_response_without_waiting_for_an_ack() -> None:
    async def main() -> bool:
        async with CodeMode([]) as mode:
            ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            serving = asyncio.create_task(
                serve_http(CodeModeServer(mode), token="t0ken", on_ready=ready.set_result)
            )
            try:
                url = urlsplit(await ready)
                host, port = url.hostname or "", url.port or 0
                request = f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
                client = await asyncio.to_thread(answered_connection, host, port, request)
                with client:
                    return accepted_nodelay(client)
            finally:
                serving.cancel()
                await asyncio.gather(serving, return_exceptions=True)

    assert asyncio.run(main()) is True
