"""The HTTP guard at the ASGI level: what reaches the MCP app and what is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from clawcell.mcp_server._http import HttpGuard


def _drive(scope: dict[str, Any]) -> tuple[list[str], list[Mapping[str, Any]]]:
    reached: list[str] = []
    sent: list[Mapping[str, Any]] = []

    async def app(scope: Mapping[str, Any], receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        sent.append(message)

    guard = HttpGuard(app, token="t0ken", hosts=["127.0.0.1:9"])
    asyncio.run(guard(scope, receive, send))
    return reached, sent


def test_a_websocket_is_closed_without_reaching_the_app() -> None:
    reached, sent = _drive({"type": "websocket", "headers": [(b"host", b"127.0.0.1:9")]})
    assert (reached, sent) == ([], [{"type": "websocket.close", "code": 1008}])


def test_lifespan_events_reach_the_app() -> None:
    reached, sent = _drive({"type": "lifespan"})
    assert (reached, sent) == (["lifespan"], [])


def test_two_host_headers_are_refused() -> None:
    headers = [
        (b"host", b"127.0.0.1:9"),
        (b"host", b"evil.example:9"),
        (b"authorization", b"Bearer t0ken"),
    ]
    reached, sent = _drive({"type": "http", "headers": headers})
    assert reached == []
    assert sent[0]["status"] == 421


def test_the_right_host_and_token_reach_the_app() -> None:
    headers = [(b"Host", b"127.0.0.1:9"), (b"Authorization", b"Bearer t0ken")]
    reached, sent = _drive({"type": "http", "headers": headers})
    assert (reached, sent) == (["http"], [])
