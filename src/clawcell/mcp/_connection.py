"""One lazily opened connection to one MCP server, reset and reopened after failures.

The SDK client is entered and exited by a dedicated owner task (anyio cancel scopes must be
left by the task that entered them); requests from any cell task go through it. A request
that outlives the server's `timeout`, or whose server dies mid-call, resets the connection and
fails with an `McpError` the guest can catch; the next request reconnects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, NoReturn, cast

from ..errors import ClosedError, McpError
from ._config import ServerConfig
from ._sdk import Cleanup, is_connection_closed, is_protocol_error, open_client
from ._status import LOGGER
from ._types import McpListing, McpResult, Operation, result_from_mcp, tool_from_mcp

__all__ = ["Connection"]

Send = Callable[[Any], Awaitable[Any]]
SHUTDOWN_SECONDS: Final = 15.0
"""How long `aclose()` waits for connections to shut down (the SDK's own bound is ~7 s)."""


def _leaf(exc: BaseException) -> BaseException:
    """The first real cause inside (nested) exception groups, e.g. of an anyio TaskGroup."""
    while isinstance(exc, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", exc)
        exc = group.exceptions[0]
    return exc


def _detail(exc: BaseException) -> str:
    leaf = _leaf(exc)
    text = str(leaf).strip().splitlines()
    return text[0] if text else type(leaf).__name__


def _failure(message: str) -> McpError:
    """An `McpError` for a cell, logged on the `clawcell.mcp` logger."""
    LOGGER.warning("%s", message)
    return McpError(message)


class Connection:
    """The connection to the server called `name`."""

    def __init__(self, name: str, config: ServerConfig) -> None:
        self.name = name
        self.config = config
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._opening: asyncio.Lock | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------

    async def _ensure(self) -> Any:
        if self._closed:
            raise ClosedError(f"the connection to MCP server `{self.name}` is closed")
        self._opening = self._opening or asyncio.Lock()
        async with self._opening:
            if self._client is None or self._owner is None or self._owner.done():
                self._detach()
                await self._open()
            return self._client

    async def _open(self) -> None:
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        try:
            # A configuration the transport refuses (a header that is not ASCII) fails this
            # server's calls, as an unreachable server does, never every cell.
            client, cleanup = open_client(self.config)
            self._stop = asyncio.Event()
            self._owner = asyncio.create_task(self._own(client, cleanup, ready, self._stop))
            limit = self.config.connect_timeout
            self._client = await asyncio.wait_for(asyncio.shield(ready), limit)
        except asyncio.CancelledError:
            self._detach()
            raise
        except Exception as exc:
            self._detach()
            raise _failure(
                f"MCP server `{self.name}` could not be started or reached: {_detail(exc)}. "
                "Check its configuration; the next call retries."
            ) from _leaf(exc)

    @staticmethod
    async def _own(
        client: Any, cleanup: Cleanup, ready: asyncio.Future[Any], stop: asyncio.Event
    ) -> None:
        try:
            async with client as entered:
                ready.set_result(entered)
                await stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
        finally:
            await cleanup()

    def _detach(self) -> None:
        """Let go of the current connection; its owner shuts it down in the background.

        The owner is never cancelled here: the SDK's transport shutdown is shielded and
        bounded (it closes stdin, waits, then kills the server's process tree), and a native
        `cancel()` would defeat that shield and leave the server process running.
        """
        owner, self._owner, self._client = self._owner, None, None
        if owner is None:
            return
        if self._stop is not None:
            self._stop.set()
        self._closing.add(owner)
        owner.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Close the connection (and stop a stdio server); idempotent."""
        if self._closed:
            return
        self._closed = True
        self._detach()
        if self._closing:
            _, stuck = await asyncio.wait(set(self._closing), timeout=SHUTDOWN_SECONDS)
            for owner in stuck:
                owner.cancel()

    # -- requests -------------------------------------------------------------------------

    async def _send(self, operation: str, send: Send) -> Any:
        client = self._client
        if client is None or self._owner is None or self._owner.done():
            client = await self._ensure()
        owner = self._owner
        call = asyncio.ensure_future(send(client))
        waiting: set[asyncio.Future[Any]] = {call} if owner is None else {call, owner}
        done, _ = await asyncio.wait(
            waiting, timeout=self.config.timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if call in done:
            exc = call.exception()
            if exc is None:
                return call.result()
            self._fail(operation, cast("Exception", exc))
        call.cancel()
        self._detach()
        if owner is not None and owner in done:
            raise _failure(
                f"MCP server `{self.name}` closed the connection during `{operation}`; "
                "the next call reconnects."
            )
        raise _failure(
            f"MCP server `{self.name}` did not answer `{operation}` within "
            f"{self.config.timeout:g}s; the connection was reset and the next call reconnects."
        )

    def _fail(self, operation: str, exc: Exception) -> NoReturn:
        if is_protocol_error(exc):
            raise _failure(
                f"MCP server `{self.name}` rejected `{operation}`: {_detail(exc)}"
            ) from exc
        # A malformed answer or a broken transport: start afresh next time.
        self._client = None
        if is_connection_closed(exc):
            raise _failure(
                f"MCP server `{self.name}` closed the connection during `{operation}`; "
                "the next call reconnects."
            ) from exc
        raise _failure(
            f"MCP server `{self.name}` failed during `{operation}`: {_detail(exc)}. "
            "The next call reconnects."
        ) from exc

    async def request(self, operation: Operation, arguments: dict[str, Any]) -> McpResult:
        """Send one guest request and return its result."""
        send = _SENDERS[operation]
        raw = await self._send(operation, lambda client: send(client, arguments))
        try:
            return result_from_mcp(operation, raw)
        except Exception as exc:
            raise _failure(
                f"MCP server `{self.name}` sent a malformed `{operation}` result: {_detail(exc)}"
            ) from exc

    async def listing(self) -> McpListing:
        """Every tool (all pages) and whether resources and prompts are offered."""
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            page = await self._send("tools/list", _page(cursor))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        client = await self._ensure()
        capabilities = client.server_capabilities
        visible = [t for t in map(tool_from_mcp, tools) if self.config.visible(t.name)]
        return McpListing(
            server_name=self.name,
            tools=tuple(visible),
            resources=capabilities.resources is not None,
            prompts=capabilities.prompts is not None,
        )


def _page(cursor: str | None) -> Send:
    return lambda client: client.list_tools(cursor=cursor)


def _call_tool(client: Any, arguments: dict[str, Any]) -> Awaitable[Any]:
    return client.call_tool(arguments["name"], arguments.get("arguments") or {})


def _list_resources(client: Any, arguments: dict[str, Any]) -> Awaitable[Any]:
    return client.list_resources(cursor=arguments.get("cursor"))


def _read_resource(client: Any, arguments: dict[str, Any]) -> Awaitable[Any]:
    return client.read_resource(arguments["uri"])


def _list_prompts(client: Any, arguments: dict[str, Any]) -> Awaitable[Any]:
    return client.list_prompts(cursor=arguments.get("cursor"))


def _get_prompt(client: Any, arguments: dict[str, Any]) -> Awaitable[Any]:
    return client.get_prompt(arguments["name"], arguments.get("arguments"))


_SENDERS: dict[str, Callable[[Any, dict[str, Any]], Awaitable[Any]]] = {
    "tools/call": _call_tool,
    "resources/list": _list_resources,
    "resources/read": _read_resource,
    "prompts/list": _list_prompts,
    "prompts/get": _get_prompt,
}
