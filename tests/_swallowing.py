"""A store whose calls swallow a cancellation, and the check that a loop still ends.

Python 3.11's `asyncio.wait_for` (the PostgreSQL pool's connection wait) can return a result
that lands together with a cancellation and drop the cancellation; the task then runs on. A
background loop that relied on the `CancelledError` to end looped on, and an event loop
closing around it (`asyncio.run`'s end, a test client's portal) cancels it once and waits for
it forever. `CancelSwallowingStore` does that on purpose: the first call of a named method waits
until its task is cancelled, swallows the cancellation and then does its work (a wait with a
`timeout` ends at once: the cancellation came as it ended); later calls pass straight through,
as a healthy pool's would.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from clawcell.store import MemoryStore

HANG_CEILING_S = 60.0
"""How long a closing event loop may take before the test calls it hung (it takes
milliseconds when nothing hangs: a ceiling, not a timing assertion)."""


class Swallower:
    """Makes `methods` of `target` swallow the first cancellation of a task calling them
    (once `armed`: set-up may call them first).

    Attributes:
        entered: Set once a call is waiting to be cancelled.
    """

    def __init__(self, target: object, *methods: str, armed: bool = True) -> None:
        self.entered = asyncio.Event()
        self.armed = armed
        self._swallowed = False
        for name in methods:
            setattr(target, name, self._swallowing(getattr(target, name)))

    def _swallowing(self, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def swallowing(*args: Any, **kwargs: Any) -> Any:
            if self.armed and not self._swallowed:
                self.entered.set()
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.Event().wait()
                self._swallowed = True
                if "timeout" in kwargs:  # the wait ended as the cancellation came: at once
                    kwargs["timeout"] = 0
            return await call(*args, **kwargs)

        return swallowing


class CancelSwallowingStore(MemoryStore):
    """A `MemoryStore` whose `methods` swallow a cancellation (`Swallower`)."""

    def __init__(self, *methods: str, armed: bool = True) -> None:
        super().__init__()
        self._swallower = Swallower(self, *methods, armed=armed)
        self.entered = self._swallower.entered

    @property
    def armed(self) -> bool:
        return self._swallower.armed

    @armed.setter
    def armed(self, armed: bool) -> None:
        self._swallower.armed = armed


def ends_when_its_loop_closes(main: Callable[[], Coroutine[Any, Any, None]]) -> bool:
    """Run `main` in an event loop of its own that closes once it returns (cancelling the
    tasks it left running and waiting for them); whether that ended within the ceiling."""
    runner = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    runner.start()
    runner.join(timeout=HANG_CEILING_S)
    return not runner.is_alive()
