"""The hang watchdog (`tests/_watchdog.py`) shows the tasks of loops in other threads."""

from __future__ import annotations

import asyncio
import threading

from tests._watchdog import stacks


def test_the_stacks_name_a_task_waiting_in_another_threads_loop_and_its_cancellations() -> None:
    waiting, done = threading.Event(), threading.Event()

    async def parked_on_purpose() -> None:
        waiting.set()
        await asyncio.get_running_loop().run_in_executor(None, done.wait)

    thread = threading.Thread(target=asyncio.run, args=(parked_on_purpose(),))
    thread.start()
    try:
        assert waiting.wait(60)
        text = stacks("a test")
    finally:
        done.set()
        thread.join()
    assert text.startswith("\n===== watchdog: a test\n")
    assert "coro=<test_the_stacks_name_a_task_waiting_in_another_threads_loop" in text
    assert "in parked_on_purpose" in text and "(cancelling=0)" in text
    assert "--- thread 'MainThread'" in text
