"""The event loop of the commands: which loop the serving commands run on, and reading a
line of standard input without holding up Ctrl-C or the exit.

**The loop.** uvloop (libuv under asyncio's interface) is optional: the `[mcp]` and `[ui]`
extras install it, and nothing in clawcell needs it. `clawcell mcp serve` and `clawcell serve`
run on it when it imports; everything they do runs on asyncio's own loop just the same. Set
`CLAWCELL_EVENT_LOOP=asyncio` to keep asyncio's loop with uvloop installed.

**Reading a line.** `asyncio.run` turns Ctrl-C into a cancellation of the main task, which
only takes effect at the task's next `await`. A `readline()` called on the event loop's thread
never yields, so Ctrl-C at a prompt waited for the next line (and, when the input then ended,
the command exited 0 instead of 130). A read on the default executor yields, but
`asyncio.run` waits for that executor's threads at the end, so the exit waited for a line
instead. Each read here runs on a daemon thread of its own: the awaiting task is cancelled at
once, and nothing waits for the abandoned read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Final, TextIO, TypeVar

from .._lazy import install_hint
from ..errors import ConfigurationError

__all__ = ["LOOP_VARIABLE", "loop_factory", "read_line", "run_serving"]

LOOP_VARIABLE: Final = "CLAWCELL_EVENT_LOOP"
_CHOICES: Final = ("auto", "uvloop", "asyncio")

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory when installed and not refused by `CLAWCELL_EVENT_LOOP`;
    `None` for asyncio's default loop.

    Raises:
        ConfigurationError: `CLAWCELL_EVENT_LOOP` is not `auto`, `uvloop` or `asyncio`, or it
            asks for uvloop where uvloop is not installed.
    """
    choice = os.environ.get(LOOP_VARIABLE, "auto") or "auto"
    if choice not in _CHOICES:
        raise ConfigurationError(
            f"${LOOP_VARIABLE} must be one of {', '.join(_CHOICES)}, got {choice!r}."
        )
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError as exc:
        if choice == "uvloop":
            raise ConfigurationError(
                f"${LOOP_VARIABLE}=uvloop, but uvloop is not installed: {install_hint('mcp')}."
            ) from exc
        return None
    return uvloop.new_event_loop


def run_serving(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, on the loop `loop_factory` picks."""
    try:
        factory = loop_factory()
    except ConfigurationError:
        main.close()  # never awaited: no "coroutine was never awaited" warning
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


async def read_line(source: TextIO) -> str:
    """`source.readline()` off the event loop; `""` at the end of input."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def deliver(line: str | None, error: BaseException | None) -> None:
        if future.done():  # the reader was cancelled (Ctrl-C): the line is not wanted
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line or "")

    def read() -> None:
        line, error = None, None
        try:
            line = source.readline()
        except Exception as exc:  # handed to the awaiting task, which decides
            error = exc
        # The loop may have closed while this thread waited for input: nobody wants the line.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(deliver, line, error)

    threading.Thread(target=read, name="clawcell-stdin", daemon=True).start()
    return await future
