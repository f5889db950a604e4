"""A loopback HTTP server that answers model API requests from a script.

Each request gets the next scripted `Answer`: a JSON body, an SSE stream written event by
event (flushed separately, so the SDK really reads a stream), or an error status with
headers such as `retry-after`. Requests are recorded with their JSON bodies. A `check` (the
strict fakes' request validation) may refuse a request with an error answer first; a refused
request does not use up the script.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

_REASONS = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error",
            529: "Overloaded"}  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One scripted HTTP answer."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict[str, str])
    body: Any = None
    sse: Sequence[str] = ()


@dataclass(frozen=True, kw_only=True)
class Request:
    """One received request."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def named_events(events: Iterable[dict[str, Any]]) -> list[str]:
    """SSE blocks with an `event:` line (Anthropic Messages, OpenAI Responses)."""
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]


def data_events(events: Iterable[dict[str, Any]]) -> list[str]:
    """SSE `data:` blocks ending with `[DONE]` (OpenAI Chat Completions)."""
    return [*(f"data: {json.dumps(e)}\n\n" for e in events), "data: [DONE]\n\n"]


def error_answer(status: int, message: str, **headers: str) -> Answer:
    """An API error in the JSON shape both vendors use."""
    body = {"type": "error", "error": {"type": "api_error", "message": message}}
    return Answer(status=status, headers=headers, body=body)


class WireServer:
    """Serves `answers` in order on `127.0.0.1` (an ephemeral port)."""

    def __init__(
        self, answers: Iterable[Answer], check: Callable[[Request], Answer | None] | None = None
    ) -> None:
        self._answers = list(answers)
        self._check = check
        self.refused: list[Answer] = []
        """The answers `check` gave instead of the script."""
        self.requests: list[Request] = []
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> WireServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            self.requests.append(request)
            answer = self._check(request) if self._check is not None else None
            if answer is not None:
                self.refused.append(answer)
            elif self._answers:
                answer = self._answers.pop(0)
            else:
                answer = error_answer(500, "unscripted")
            await _write_answer(writer, answer)
        finally:
            writer.close()


async def _read_request(reader: asyncio.StreamReader) -> Request:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *lines = head.strip().split("\r\n")
    method, path, _ = request_line.split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    return Request(method=method, path=path, headers=headers, body=json.loads(raw) if raw else None)


async def _write_answer(writer: asyncio.StreamWriter, answer: Answer) -> None:
    streaming = bool(answer.sse)
    payload = b"" if streaming else json.dumps(answer.body).encode()
    headers = {
        "content-type": "text/event-stream" if streaming else "application/json",
        "connection": "close",
        **({} if streaming else {"content-length": str(len(payload))}),
        **answer.headers,
    }
    reason = _REASONS.get(answer.status, "Status")
    head = f"HTTP/1.1 {answer.status} {reason}\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items()
    )
    writer.write(head.encode() + b"\r\n" + payload)
    await writer.drain()
    for block in answer.sse:
        writer.write(block.encode())
        await writer.drain()
