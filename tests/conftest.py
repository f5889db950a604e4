"""Shared helpers for tests that run cells through the public `CodeMode` API.

Imported as `tests.conftest` by the cell, hostile and CLI tests (no fixtures here)."""

from __future__ import annotations

import asyncio
import os
import select
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from clawcell import CodeMode, Limits, Tool

T = TypeVar("T")

FAST = Limits(timeout_ms=250)
"""A short budget, only for tests that must reach a deadline (busy loops, parking)."""
ROOMY = Limits(timeout_ms=60_000)
"""The default budget of cell tests (`with_mode`, `exec_one`): a slow or loaded machine never
reaches it; tests that end by a deadline say so with `FAST` (or their own `Limits`)."""


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run one test coroutine on a fresh event loop."""
    return asyncio.run(coroutine)


async def echo(tool_input: dict[str, Any]) -> Any:
    return tool_input


def echo_tool() -> Tool:
    return Tool(name="echo", execute=echo)


def with_mode(
    body: Callable[[CodeMode], Awaitable[T]],
    *,
    tools: Iterable[Tool] | None = None,
    limits: Limits = ROOMY,
    **options: Any,
) -> T:
    """Run `body(mode)` in a fresh `CodeMode` (with an `echo` tool unless told otherwise)."""

    async def main() -> T:
        async with CodeMode(
            [echo_tool()] if tools is None else tools, limits=limits, **options
        ) as mode:
            return await body(mode)

    return run(main())


def exec_one(code: str, **options: Any) -> dict[str, Any]:
    """The envelope of one cell in a fresh `CodeMode`."""

    async def body(mode: CodeMode) -> dict[str, Any]:
        return await mode.exec(code)

    return with_mode(body, **options)


def failure(envelope: Mapping[str, Any]) -> tuple[str, str, str, bool]:
    """`(code, failurePhase, error, bridgeDispatchStarted)` of a failed envelope."""
    assert envelope["status"] == "failed", envelope
    return (
        envelope["code"],
        envelope["failurePhase"],
        envelope["error"],
        envelope["bridgeDispatchStarted"],
    )


def in_forked_child(child: Callable[[], bytes], timeout: float = 60.0) -> bytes | None:
    """Run `child()` in a forked process and return the bytes it produced.

    `None` means the child hung past `timeout` (it is killed), so a regression fails the
    test instead of hanging the suite. The child exits with `os._exit`, never running the
    parent's atexit hooks.
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, child())
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], timeout)
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with os.fdopen(read, "rb") as pipe:
        return pipe.read() if ready else None
