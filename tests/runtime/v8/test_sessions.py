"""A V8 worker never runs cells of two sessions (issue 35 item 2), and a worker whose cell
ended in a way that does not rule out tampering is ended (item 3).

`V8Executor.session()` is what each `CodeMode` takes of the executor it is given: sessions
share clean spares only; the worker a session's cell ran in serves that session's next cells
and ends when the session closes.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from clawcell import CodeMode, Limits
from clawcell.runtime import GuestConfig, V8Executor
from clawcell.runtime._v8._executor import _SHELF  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._v8._guest import V8Guest
from tests.conftest import run

CONFIG = GuestConfig(
    memory_limit_bytes=64 * 1024 * 1024, install_config='{"maxPending":16,"bindings":[]}'
)


def _far() -> float:
    return time.monotonic() + 60.0


def _ran(guest: V8Guest, code: str = "return 1") -> None:
    assert guest.parse_cell(code, deadline=_far()) == 1
    result = guest.run_segment(1, None, deadline=_far())
    assert getattr(result, "state", None) == 1, result


def test_two_sessions_never_get_the_same_worker_and_each_keeps_its_own() -> None:
    executor = V8Executor(spares=1)
    first, second = executor.session(), executor.session()
    try:
        a = first.acquire(CONFIG)
        _ran(a)
        first.release(a)
        b = second.acquire(CONFIG)
        assert b is not a
        _ran(b)
        second.release(b)
        again = first.acquire(CONFIG)
        assert again is a  # the session's own worker, its next context ready
        _ran(again)
        first.release(again)
        assert second.acquire(CONFIG) is b
    finally:
        first.close()
        second.close()
        executor.close()


def test_a_second_release_of_one_acquisition_is_ignored() -> None:
    # Two exits of one leg may both hand its guest back; ending the worker the first release
    # kept idle would cost the session its warm worker, or end a cell it was lent to since.
    executor = V8Executor(spares=0)
    try:
        guest = executor.acquire(CONFIG)
        _ran(guest)
        executor.release(guest)
        executor.release(guest)
        assert guest.alive
        again = executor.acquire(CONFIG)
        assert again is guest
        _ran(again)
        executor.release(again)
    finally:
        executor.close()


def test_closing_a_runtime_with_a_cell_parked_live_ends_its_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A V8 cell parks live in its worker: `aclose` must hand the worker back, so the
    # session's close ends it, rather than leave a Deno process lent out for good.
    lent: list[V8Guest] = []
    acquire = V8Executor.acquire

    def kept(executor: V8Executor, config: GuestConfig) -> V8Guest:
        guest = acquire(executor, config)
        lent.append(guest)
        return guest

    monkeypatch.setattr(V8Executor, "acquire", kept)
    executor = V8Executor(spares=0)

    async def main() -> str:
        mode = CodeMode(executor=executor)
        parked = await mode.exec("await yield_control();\nreturn 1;")
        await mode.aclose()
        return parked["status"]

    try:
        assert run(main()) == "waiting"
        assert len(lent) == 1
        assert not lent[0].alive
    finally:
        executor.close()


def test_closing_a_session_ends_its_workers_and_shelves_only_clean_ones() -> None:
    executor = V8Executor(spares=1)
    session = executor.session()
    a = session.acquire(CONFIG)
    _ran(a)
    lent = session.acquire(CONFIG)  # a second cell at once: a second worker
    _ran(lent)
    session.release(a)
    session.close()
    assert not a.alive  # idle at close: ended now
    session.release(lent)
    assert not lent.alive  # lent at close: ended when it came back
    shelved = _SHELF.take((64 + 32, True)) or _SHELF.take((64 + 32, False))
    assert shelved is not None and not shelved.used
    shelved.close()
    executor.close()


def test_a_worker_whose_code_left_the_controller_is_ended() -> None:
    executor = V8Executor(spares=0)
    try:
        guest = executor.acquire(CONFIG)
        # Code that closes the cell's wrapper runs at the context's top level, outside the
        # controller: the worker, not the controller, reports what it threw.
        assert guest.parse_cell("}); throw new Error('out'); (async () => {", _far()) == 1
        failure = guest.run_segment(1, None, deadline=_far())
        assert getattr(failure, "kind", None) == "thrown"
        assert guest.suspect
        executor.release(guest)
        assert not guest.alive
    finally:
        executor.close()


def test_a_cell_that_did_not_parse_leaves_its_worker_clean_for_any_session() -> None:
    executor = V8Executor(spares=0)
    try:
        guest = executor.acquire(CONFIG)
        assert guest.parse_cell("return )", _far()) != 1
        executor.release(guest)
        assert guest.alive and not guest.used
        other = executor.session().acquire(CONFIG)
        assert other is guest  # still clean: nothing of the cell ran
        executor.release(other)  # not lent by this executor: ended
        assert not other.alive
    finally:
        executor.close()


def test_a_worker_s_boot_is_not_counted_in_its_first_cell_s_budget() -> None:
    # No spare: the cell's worker starts booting when the cell asks for it. The cell's own
    # work (a timer's host round trip) fits its budget; the boot (a process start, slower
    # than the budget on a loaded machine) is host overhead and moves the deadline.
    executor = V8Executor(spares=0)
    guest = executor.acquire(CONFIG)
    try:
        assert guest.parse_cell("return 1", _far()) == 1
        assert guest.startup_s > 0  # it waited for the boot, and said so
        guest.run_segment(1, None, _far())
    finally:
        executor.release(guest)
        executor.close()

    async def main() -> dict[str, Any]:
        async with CodeMode(
            [], executor=V8Executor(spares=0), limits=Limits(timeout_ms=150)
        ) as mode:
            return await mode.exec("await new Promise((r) => setTimeout(r, 0));\nreturn 'on time';")

    envelope = run(main())
    assert (envelope["status"], envelope.get("value")) == ("completed", "on time"), envelope
