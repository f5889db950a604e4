"""Reading a line of standard input without holding up Ctrl-C or the exit.

`asyncio.run` turns Ctrl-C into a cancellation of the main task, which only takes effect
at the task's next `await`. A `readline()` called on the event loop's thread never yields,
so Ctrl-C at a prompt waited for the next line (and, when the input then ended, the command
exited 0 instead of 130). A read on the default executor yields, but `asyncio.run` waits for
that executor's threads at the end, so the exit waited for a line instead. Each read here
runs on a daemon thread of its own: the awaiting task is cancelled at once, and nothing
waits for the abandoned read.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TextIO

__all__ = ["read_line"]


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
