"""A tool call's own asyncio task, whose first step runs when the task is made.

Every request a cell dispatches to a host task runs as its own `asyncio` task: inside a tool,
`asyncio.current_task()` is the call's task, its context variables are the call's own (the
approval gate, the session), and a tool that cancels its task cancels only its call. A task
made by `loop.create_task` takes its first step in a later loop turn, so a cell had to give the
loop a turn after each dispatch (`asyncio.sleep(0)`) before it could see that a tool which
never suspends was done: most tools, and a fifth of a sequential call's host time (the task's
scheduling `Handle`, the loop turn with its `select`; docs/benchmarks.md, "Tool calls,
per-call work, second pass").

`start_call` makes the task and runs its first step at once, inside the dispatching cell's
step, with the call's task as the current task for that step (the cell's own task is set
aside meanwhile, as Python 3.12's eager tasks do). A tool that returns without suspending is
done when `start_call` returns; one that suspends goes on as any task does.

* Python 3.12 and later: `asyncio.Task(..., eager_start=True)`.
* Python 3.11, which has no eager tasks: `EagerTask`, a subclass of asyncio's own Python
  implementation of `Task` (`asyncio.tasks._PyTask`, the reference the C task mirrors) whose
  constructor runs the task's first step instead of scheduling it; every later step, the
  cancellation protocol (`cancel`, `cancelling`, `uncancel`) and the callbacks are
  `_PyTask`'s own. It differs from the C task in speed only (a step that suspends again runs
  the Python `__step`: about a microsecond more, where the tool waits anyway), and like an
  eager task it is listed by `asyncio.all_tasks()` only once its first step has suspended.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import sys
from asyncio import format_helpers, futures, tasks
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar

__all__ = ["start_call", "starter"]

_T = TypeVar("_T")
_names = itertools.count(1).__next__
_PENDING: Final = "PENDING"  # `_PyFuture`'s state names
_FINISHED: Final = "FINISHED"


# asyncio's private names, each `None` on a Python without it (see `SHIM_USABLE`).
_TASKS: dict[str, Any] = {
    **dict.fromkeys(("_enter_task", "_leave_task", "_register_task", "_current_tasks")),
    "_PyTask": object,
    **vars(tasks),
}
_FUTURES: dict[str, Any] = {"_PyFuture": None, "_get_loop": None, **vars(futures)}
# asyncio's own helpers, private by name only: the C functions both task classes use.
_enter_task: Callable[[asyncio.AbstractEventLoop, Any], None] = _TASKS["_enter_task"]
_leave_task: Callable[[asyncio.AbstractEventLoop, Any], None] = _TASKS["_leave_task"]
_register_task: Callable[[Any], None] = _TASKS["_register_task"]
# `current_task`'s table (3.11's `current_task` is a Python function around it).
_current_tasks: dict[asyncio.AbstractEventLoop, Any] = _TASKS["_current_tasks"]
# The Python `Task` of asyncio (typed as `Any`: typeshed does not declare it).
_PyTask: Any = _TASKS["_PyTask"]
_PyFuture: Any = _FUTURES["_PyFuture"]
_future_loop: Callable[[Any], asyncio.AbstractEventLoop] = _FUTURES["_get_loop"]
_BASE_GET_DEBUG: Final = asyncio.BaseEventLoop.get_debug
_STEP_NAMES: Final = ("_Task__step", "_Task__wakeup", "_Future__log_traceback", "_cancel_message")
SHIM_USABLE: Final = (
    sys.version_info < (3, 12)
    and all(
        callable(f) for f in (_enter_task, _leave_task, _register_task, _future_loop, _PyFuture)
    )
    and type(_TASKS["_current_tasks"]) is dict
    and _TASKS["_PyTask"] is not object
    and all(hasattr(_TASKS["_PyTask"], name) for name in _STEP_NAMES)
)
"""Whether this Python 3.11 has the asyncio internals `EagerTask` is built on. A release
without them gets ordinary tasks (`loop.create_task`): a call's first step then runs in the
loop turn the cell gives after dispatching (`_cell._settlements`), as before eager starts."""


class EagerTask(_PyTask):
    """A task that takes its first step in its constructor (see the module's docstring).

    Made on the loop's thread while the loop runs (a cell's step). Its name is `Task`'s
    default, `Task-call-<n>`, given when first asked for (`get_name`, `repr`), so `n` counts
    the call tasks whose name was read."""

    # `_PyTask.__init__`'s other fields, as class defaults (each is set on the task when
    # it changes): three stores less per call.
    _num_cancels_requested = 0
    _must_cancel = False
    _fut_waiter: Any = None
    _name: str | None = None

    def __init__(
        self, coro: Coroutine[Any, Any, Any], *, loop: asyncio.AbstractEventLoop | None = None
    ) -> None:
        # `_PyTask.__init__` and `_PyFuture.__init__` (the fields their class does not
        # default), without scheduling the first step: it runs below.
        if loop is None:
            loop = asyncio.get_running_loop()
        self._loop = loop
        self._callbacks: list[Any] = []
        # `loop.get_debug()`, read as asyncio's own loops keep it (a Python call otherwise).
        if type(loop).get_debug is _BASE_GET_DEBUG:
            debug: bool = getattr(loop, "_debug")  # noqa: B009 (a private field of asyncio's)
        else:
            debug = loop.get_debug()
        if debug:
            self._source_traceback = format_helpers.extract_stack(sys._getframe(1))  # pyright: ignore[reportPrivateUsage]
        self._coro = coro
        self._context = context = contextvars.copy_context()
        current = _current_tasks.get(loop)
        if current is not None:
            _leave_task(loop, current)
        _enter_task(loop, self)
        try:
            result = context.run(coro.send, None)
        except StopIteration as stop:  # `Task.__step`'s outcomes, first the usual one
            if self._must_cancel:
                self._must_cancel = False
                _PyFuture.cancel(self, msg=self._cancel_message)
            else:  # no callback can have been added yet: nothing to schedule
                self._result, self._state = stop.value, _FINISHED
        except asyncio.CancelledError as exc:
            self._cancelled_exc = exc
            _PyFuture.cancel(self)
        except (KeyboardInterrupt, SystemExit) as exc:
            self.__class__ = WatchedEagerTask
            _PyFuture.set_exception(self, exc)
            raise
        except BaseException as exc:
            self.__class__ = WatchedEagerTask
            _PyFuture.set_exception(self, exc)
        else:
            self.__class__ = WatchedEagerTask
            self._suspended(result)
        finally:
            _leave_task(loop, self)
            if current is not None:
                _enter_task(loop, current)

    def get_name(self) -> str:
        name = self._name
        if name is None:
            name = self._name = f"Task-call-{_names()}"
        return name

    def _suspended(self, result: Any) -> None:
        """What `Task.__step` does when the coroutine yields `result`: wait for the future
        it awaits, or step again soon (a bare `yield`); a malformed yield is thrown back into
        the coroutine at its next step (one message for every kind `__step` tells apart)."""
        _register_task(self)
        loop, context = self._loop, self._context
        blocking = getattr(result, "_asyncio_future_blocking", None)
        if blocking and result is not self and _future_loop(result) is loop:
            result._asyncio_future_blocking = False
            result.add_done_callback(self._Task__wakeup, context=context)
            self._fut_waiter = result
            if self._must_cancel and result.cancel(msg=self._cancel_message):
                self._must_cancel = False
        elif result is None:
            loop.call_soon(self._Task__step, context=context)
        else:
            error = RuntimeError(f"Task {self!r} got bad yield: {result!r}")
            loop.call_soon(self._Task__step, error, context=context)

    # A task done in its first step with a result or cancelled (most calls) has nothing to
    # log when it is destroyed: its finalizer is a C function that does nothing (`tuple()`),
    # not a Python frame on every call. One whose first step suspends or raises becomes a
    # `WatchedEagerTask` first, whose finalizer logs as asyncio's do.
    __del__ = staticmethod(tuple)


class WatchedEagerTask(EagerTask):
    """An `EagerTask` whose first step suspended (it may be destroyed pending) or stored an
    exception (nobody may read it): destroyed, it logs what asyncio's tasks log."""

    def __del__(self) -> None:
        # Done and read: nothing to log, without the two Python finalizers (`_PyTask`'s and
        # `_PyFuture`'s) that would find that out.
        if self._state != _PENDING and not self._Future__log_traceback:
            return
        _PyTask.__del__(self)


def starter(usable: bool) -> Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]]:
    """`start_call` on this Python, `usable` telling whether 3.11's asyncio has the internals
    `EagerTask` is built on (`SHIM_USABLE`; without them, ordinary tasks)."""
    if sys.version_info >= (3, 12):

        def start_eager(coro: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
            return asyncio.Task(coro, loop=asyncio.get_running_loop(), eager_start=True)

        return start_eager
    if usable:
        return EagerTask  # it takes the running loop itself: no frame around it (every call)

    def start_lazy(coro: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
        return asyncio.get_running_loop().create_task(coro)

    return start_lazy


start_call: Final = starter(SHIM_USABLE)
"""Run a coroutine as its own task on the running loop, its first step taken now: the task
is done on return if the coroutine never suspended (Python 3.12's `eager_start`, or
`EagerTask` on 3.11, duck-typed as `asyncio.Task`: it has the whole of its API; on a 3.11
without the internals, an ordinary task). Call it from the loop's thread."""
