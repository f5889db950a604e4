"""Every way a cell's first segment or a later turn can end, on the loop thread's path (begun
there as call futures) and the guest thread's (whole segments handed off): each leaves the
lane-load count, the pool and its guests as they were, and the next cells run normally.

The exits: a restore of the image that fails, a parse that fails (a syntax error, memory
running out), a timeout, a wasm trap, a host exception (a signal's `KeyboardInterrupt` taken
by a host function), a thrown error, a caller that cancels (while guest code computes on a
guest thread, or while the cell waits for a tool), and a `wait` whose parked snapshot cannot
be restored. Every guest the case acquires is kept
alive by the test, so a lane-load entry only goes away when the pool frees it, never because
the collector happened to take the guest (a count freed only by the collector stays held for
good when something else keeps the guest: the shelf's template)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clawcell import ClawcellError, CodeMode, Limits, SnapshotError, StoreUnavailableError, Tool
from clawcell._runs._durable import DurableRuns  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime import GuestPool, _crossing, _guest, _pool, _worker, run_on_guest_thread  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._guest import Guest  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._linear_memory import LinearMemory  # pyright: ignore[reportPrivateUsage]
from clawcell.store import SessionStore, SessionView, SQLiteStore

_MIB = 1024 * 1024
_DEEP = "let o = [];\nfor (let i = 0; i < 1e5; i++) o = [o];\nreturn JSON.stringify(o).length;"
_SPIN = "let n = 0;\nfor (let i = 0; i < 1e8; i++) n += i % 3;\nreturn n;"
_ARM = "await echo({ arm: true });\n"  # the tool arms the host exception of the turn after it
_WATCH = "await echo({ watch: true });\n"  # the cancel waits for the turn after it
# About 0.9 MB of declarations: parsing it needs more than a 2 MiB heap holds.
_HUGE = "".join(f"let v{i} = [{i}, 'a{i}'];\n" for i in range(30_000)) + "return 1;"


class _Triggers:
    """What a case arms: a failing image restore, a host exception, and the events a cancel
    waits for. Installed before the case's guests are built (they keep their callbacks)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fail_restore = False
        self.refuse_snapshot = False
        self.raise_in_host = False
        self.watch_threads = False
        self.on_guest_thread = threading.Event()
        """Set, once `watch_threads` is, when guest code is seen running on a guest thread
        (by its interrupt check)."""
        self.tool_called = threading.Event()
        self.guests: list[Guest] = []
        """Every guest the case acquired: kept alive, so only the pool frees their lanes."""
        self.handed: dict[int, int] = {}
        """Per guest (by `id`), acquisitions less releases: 0 once every one was released."""
        reset, acquire, made = LinearMemory.reset, GuestPool.acquire, _guest.interrupt_check
        load_pages, release = LinearMemory.load_pages, GuestPool.release

        def failing_reset(memory: LinearMemory) -> None:
            if self.fail_restore:
                self.fail_restore = False
                raise MemoryError("no pages")
            reset(memory)

        def refusing_load(memory: LinearMemory, *args: Any) -> None:
            if self.refuse_snapshot:
                raise SnapshotError("the snapshot's pages do not fit")
            load_pages(memory, *args)

        def kept(pool: GuestPool) -> Guest:
            guest = acquire(pool)
            self.guests.append(guest)
            self.handed[id(guest)] = self.handed.get(id(guest), 0) + 1
            return guest

        def counted_release(pool: GuestPool, guest: Guest) -> None:
            self.handed[id(guest)] = self.handed.get(id(guest), 0) - 1
            release(pool, guest)

        def interrupt_check(guest: Any) -> Callable[[], bool]:
            check = made(guest)

            def interrupted() -> bool:
                on_a_guest_thread = threading.current_thread().name.startswith("clawcell-guest-")
                if self.watch_threads and on_a_guest_thread:
                    self.on_guest_thread.set()
                if self.raise_in_host:
                    self.raise_in_host = False
                    raise KeyboardInterrupt  # as a signal handler run here would
                return check()

            return interrupted

        monkeypatch.setattr(LinearMemory, "reset", failing_reset)
        monkeypatch.setattr(LinearMemory, "load_pages", refusing_load)
        monkeypatch.setattr(GuestPool, "acquire", kept)
        monkeypatch.setattr(GuestPool, "release", counted_release)
        monkeypatch.setattr(_guest, "interrupt_check", interrupt_check)
        self._arm_settle(monkeypatch)

    def _arm_settle(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The settle step's triggers: a store commit held, a durable park that fails."""
        self.hold_commit = False
        """The next settle step's store commit waits for `let_commit` (`settling` set)."""
        self.settling = asyncio.Event()
        self.let_commit = asyncio.Event()
        self.fail_park = False
        self.gate_open = asyncio.Event()
        self.db = Path()
        """The SQLite file of a case on the SQLite store."""
        commit, park = SessionView.commit, DurableRuns.park

        async def held_commit(view: SessionView) -> str | None:
            if self.hold_commit:
                self.hold_commit = False
                self.settling.set()
                await self.let_commit.wait()
            return await commit(view)

        async def failing_park(durable: DurableRuns, *args: Any) -> None:
            if self.fail_park:
                raise StoreUnavailableError("the database went away")
            await park(durable, *args)

        monkeypatch.setattr(SessionView, "commit", held_commit)
        monkeypatch.setattr(DurableRuns, "park", failing_park)


Body = Callable[[CodeMode, _Triggers], Coroutine[Any, Any, Any]]


@dataclass(frozen=True)
class _Exit:
    id: str
    body: Body
    expected: Any
    """The envelope's (status, code), the exception type the leg raised, or what the body
    returns once it saw the leg end as it should (`cancelled`, `refused`)."""
    timeout_ms: int = 60_000
    memory_mib: float = 64


async def _envelope(mode: CodeMode, code: str) -> tuple[str, str | None]:
    envelope = await mode.exec(code)
    return envelope["status"], envelope.get("code")


def _cell(code: str) -> Body:
    return lambda mode, _: _envelope(mode, code)


def _restore_fails(mode: CodeMode, triggers: _Triggers) -> Coroutine[Any, Any, Any]:
    triggers.fail_restore = True  # the next cell's guest is reused: its image is restored
    return _envelope(mode, "return 1;")


def _host_raises(code: str) -> Body:
    def body(mode: CodeMode, triggers: _Triggers) -> Coroutine[Any, Any, Any]:
        triggers.raise_in_host = not code.startswith("await")  # a turn's: armed by the tool
        return _envelope(mode, code)

    return body


def _cancelled(code: str, *, when: Callable[[_Triggers], threading.Event]) -> Body:
    async def body(mode: CodeMode, triggers: _Triggers) -> str:
        when(triggers).clear()
        triggers.watch_threads = not code.startswith("await")  # a turn's: set by the tool
        task = asyncio.ensure_future(mode.exec(code))
        while not when(triggers).is_set():
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return "cancelled"

    return body


def _on_guest_thread(triggers: _Triggers) -> threading.Event:
    return triggers.on_guest_thread


def _awaiting_tool(triggers: _Triggers) -> threading.Event:
    return triggers.tool_called


async def _parked_restore_fails(mode: CodeMode, triggers: _Triggers) -> str:
    """A parked run kept as a snapshot (as when too many runs are parked live) whose
    snapshot cannot be loaded into the guest its `wait` takes."""
    parked = await mode.exec("await yield_control();\nreturn 1;")
    triggers.refuse_snapshot = True
    with pytest.raises(SnapshotError) as refused:
        await mode.wait(parked["runId"])
    triggers.refuse_snapshot = False
    _says_the_run_ended(refused.value.message, parked["runId"])
    return "refused"


def _says_the_run_ended(message: str, run_id: str) -> None:
    """A `wait` that cannot restore its run raises (docs/continuations.md): the message says
    what failed, that the run is over, and what to do instead."""
    assert message.startswith("the snapshot's pages do not fit"), message
    assert f"code mode run {run_id} cannot be continued and was ended" in message, message
    assert message.endswith("run its cell again with exec."), message


_FAILED = ("failed", "internal_error")
_EXITS = [
    _Exit("first-restore_failure", _restore_fails, ("failed", "runtime_unavailable")),
    _Exit("first-syntax_error", _cell("return (;"), ("failed", "invalid_input")),
    _Exit("first-parse_out_of_memory", _cell(_HUGE), _FAILED, memory_mib=2),
    _Exit("first-timeout", _cell("for (;;) {}"), ("failed", "timeout"), timeout_ms=250),
    _Exit("first-trap", _cell(_DEEP), _FAILED),
    _Exit("first-thrown", _cell("throw new Error('no');"), _FAILED),
    _Exit("first-host_exception", _host_raises(_SPIN), KeyboardInterrupt),
    _Exit("first-cancel", _cancelled("for (;;) {}", when=_on_guest_thread), "cancelled"),
    _Exit("turn-timeout", _cell("await echo({});\nfor (;;) {}"), ("failed", "timeout"), 250),
    _Exit("turn-trap", _cell("await echo({});\n" + _DEEP), _FAILED),
    _Exit("turn-thrown", _cell("await echo({});\nthrow new Error('no');"), _FAILED),
    _Exit("turn-host_exception", _host_raises(_ARM + _SPIN), KeyboardInterrupt),
    _Exit("turn-cancel", _cancelled(_WATCH + "for (;;) {}", when=_on_guest_thread), "cancelled"),
    _Exit(
        "turn-cancel_awaiting_tool", _cancelled("await hang();", when=_awaiting_tool), "cancelled"
    ),
    _Exit("wait-restore_failure", _parked_restore_fails, "refused"),
]


def _tools(triggers: _Triggers) -> list[Tool]:
    async def echo(args: dict[str, Any]) -> Any:
        if args.get("arm"):
            triggers.raise_in_host = True
        if args.get("watch"):
            triggers.watch_threads = True
        return args

    async def hang(_: dict[str, Any]) -> Any:
        triggers.tool_called.set()
        await asyncio.Event().wait()

    async def gate(_: dict[str, Any]) -> Any:
        triggers.tool_called.set()
        await triggers.gate_open.wait()
        return "open"

    schema = {"type": "object"}
    return [
        Tool(name="echo", execute=echo, parameters=schema),
        Tool(name="hang", execute=hang),
        Tool(name="gate", execute=gate),
    ]


def _counted(guests: list[Guest]) -> list[Guest]:
    """Which of `guests` a lane still counts (other tests' guests may come and go meanwhile:
    the collector frees theirs)."""
    held = list(_pool._LOAD.get()._held)  # pyright: ignore[reportPrivateUsage]
    return [guest for guest in guests if any(ref() is guest for ref in held)]


def _shelved(limit: int) -> Iterator[Guest]:
    """The shelf's template and idle guests of the case's configuration (its own limit)."""
    shelves = _pool._SHELVES.get()._shelves  # pyright: ignore[reportPrivateUsage]
    for (memory_limit, _), shelf in shelves.items():
        if memory_limit == limit:
            if shelf.template is not None:
                yield shelf.template
            yield from shelf.idle


_PATHS = ["loop_thread", "guest_thread"]


@pytest.mark.parametrize("path", _PATHS)
@pytest.mark.parametrize("exit_", _EXITS, ids=[e.id for e in _EXITS])
def test_after_every_exit_the_counts_are_back_and_the_next_cell_runs(
    monkeypatch: pytest.MonkeyPatch, exit_: _Exit, path: str
) -> None:
    fibers = path == "loop_thread"
    monkeypatch.setattr(_crossing, "FIBERS_USABLE", fibers)
    monkeypatch.setattr(_guest, "FIBERS_USABLE", fibers)
    if exit_.id.startswith("wait-"):  # parked as a snapshot, as when too many are live
        monkeypatch.setattr("clawcell._runs._lifecycle.live_parked_in_process", lambda: 1 << 30)
    triggers = _Triggers(monkeypatch)
    # A configuration of its own (guests built now, with this case's callbacks): its first
    # guest becomes its shelf's template, which the shelf keeps for the process's life.
    index = _EXITS.index(exit_) * len(_PATHS) + _PATHS.index(path)
    limit = int(exit_.memory_mib * _MIB) + 4096 * (index + 1)
    limits = Limits(timeout_ms=exit_.timeout_ms, memory_limit_bytes=limit)
    loop = asyncio.new_event_loop()
    try:
        mode = CodeMode(_tools(triggers), limits=limits)
        assert loop.run_until_complete(mode.exec("return 0;"))["value"] == 0
        try:
            outcome: Any = loop.run_until_complete(exit_.body(mode, triggers))
        except KeyboardInterrupt as exc:
            outcome = type(exc)
        assert outcome == exit_.expected
        after = loop.run_until_complete(_next_cells(mode))
        loop.run_until_complete(mode.aclose())
        loop.run_until_complete(_lanes_drained())
    finally:
        loop.close()
    assert after == [5, 6]
    _check_handed_back(triggers, limit)


def _check_handed_back(triggers: _Triggers, limit: int) -> None:
    assert _counted(triggers.guests) == [], "a lane still counts a guest whose cell is over"
    assert len(triggers.guests) >= 2
    unbalanced = {key: n for key, n in triggers.handed.items() if n != 0}
    assert unbalanced == {}, "a guest was not released exactly once per acquisition"
    for guest in _shelved(limit):
        assert not guest.retired and guest.instance.store.future is None


async def _next_cells(mode: CodeMode) -> list[Any]:
    quick = await mode.exec("return 5;")
    called = await mode.exec("const r = await echo({ n: 6 });\nreturn r.n;")
    return [quick.get("value"), called.get("value")]


async def _lanes_drained() -> None:
    """Every guest thread has finished what it was given (a stopped segment included): a
    job queued behind it on each lane has run, and no job is left counted in flight."""
    for lane in range(_worker.guest_lanes()):
        await asyncio.wait_for(run_on_guest_thread(int, lane=lane), 60)
    assert not _worker._lanes.get().in_flight  # pyright: ignore[reportPrivateUsage]


# -- the end of a run that no exit of its leg reaches: close, and the settle step ----------

_YIELD = "await yield_control();\n"


async def _close_parked_live(mode: CodeMode, _: _Triggers) -> str:
    """`aclose` while a run is parked with its guest live (not snapshotted)."""
    parked = await mode.exec(_YIELD + "return 1;")
    assert parked["status"] == "waiting"
    await mode.aclose()
    return "closed"


async def _close_while_settling(mode: CodeMode, triggers: _Triggers) -> Any:
    """`aclose` while a `wait` leg commits its store writes: the leg still owns its guest
    (close must not release it), and hands it back itself when it ends."""
    parked = await mode.exec(_YIELD + "await store('k', 1);\nreturn 7;")
    triggers.hold_commit = True
    leg = asyncio.ensure_future(mode.wait(parked["runId"]))
    await triggers.settling.wait()
    await mode.aclose()
    triggers.let_commit.set()
    return (await leg).get("value")


async def _close_then_parks_again(mode: CodeMode, triggers: _Triggers) -> Any:
    """`aclose` while a `wait` leg awaits a tool; another runtime's cell runs meanwhile (it
    would be handed the leg's guest, were it released under the leg); the leg then parks its
    run again, which nobody can continue in this process: the leg hands the guest back."""
    code = "let x = 41;\n" + _YIELD + "await gate({});\ntext(String(x + 1));\n" + _YIELD
    parked = await mode.exec(code + "return 1;")
    leg = asyncio.ensure_future(mode.wait(parked["runId"]))
    while not triggers.tool_called.is_set():
        await asyncio.sleep(0.001)
    await mode.aclose()
    async with CodeMode(_tools(triggers), limits=mode.limits) as other:
        assert (await other.exec("let y = 2;\nreturn y;"))["value"] == 2
    triggers.gate_open.set()
    envelope = await leg
    return envelope["status"], [item.get("text") for item in envelope["output"]]


def _cancel_in_commit(code: str) -> Body:
    async def body(mode: CodeMode, triggers: _Triggers) -> str:
        triggers.hold_commit = True
        if code.startswith(_YIELD):
            parked = await mode.exec(code)
            leg = asyncio.ensure_future(mode.wait(parked["runId"]))
        else:
            leg = asyncio.ensure_future(mode.exec(code))
        await triggers.settling.wait()
        leg.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leg
        return "cancelled"

    return body


async def _revive_fails(mode: CodeMode, triggers: _Triggers) -> str:
    """A run committed to the store by a closed runtime, whose snapshot another runtime
    cannot load: its `wait` raises, and the guest it took for the snapshot goes back."""
    parked = await mode.exec(_YIELD + "return 1;")
    await mode.aclose()
    store = SQLiteStore(triggers.db)
    async with CodeMode(
        _tools(triggers), limits=mode.limits, store=store, session_id="leaks"
    ) as other:
        triggers.refuse_snapshot = True
        with pytest.raises(SnapshotError) as refused:
            await other.wait(parked["runId"])
        triggers.refuse_snapshot = False
    _says_the_run_ended(refused.value.message, parked["runId"])
    return "refused"


async def _status_does_not_fit(mode: CodeMode, triggers: _Triggers) -> str:
    """Not even the status fits the model's context: the settle step ends the cell (hands
    its guest back) and raises, and its exception handler ends it again: still one release."""
    async with CodeMode(_tools(triggers), limits=mode.limits, model_context_tokens=1) as tight:
        with pytest.raises(ClawcellError, match="cannot fit Code Mode status"):
            await tight.exec("return 1;")
    return "refused"


async def _park_fails(mode: CodeMode, triggers: _Triggers) -> str:
    """A durable park whose commit fails: the leg raises, its cell ends."""
    triggers.fail_park = True
    with pytest.raises(StoreUnavailableError):
        await mode.exec(_YIELD + "return 1;")
    triggers.fail_park = False
    return "refused"


@dataclass(frozen=True)
class _End:
    id: str
    body: Body
    expected: Any
    stores: tuple[str, ...] = ("memory", "sqlite")


_WRITES = "await store('k', 1);\nreturn 1;"
_ENDS = [
    _End("close-parked_live", _close_parked_live, "closed"),
    _End("close-wait_settling", _close_while_settling, 7),
    _End("close-wait_parks_again", _close_then_parks_again, ("waiting", ["42"])),
    _End("settle-first_cancelled_in_commit", _cancel_in_commit(_WRITES), "cancelled"),
    _End("settle-wait_cancelled_in_commit", _cancel_in_commit(_YIELD + _WRITES), "cancelled"),
    _End("settle-durable_park_fails", _park_fails, "refused", stores=("sqlite",)),
    _End("settle-status_does_not_fit", _status_does_not_fit, "refused", stores=("memory",)),
    _End("wait-revive_fails", _revive_fails, "refused", stores=("sqlite",)),
]
_END_CASES = [(end, store) for end in _ENDS for store in end.stores]


def _store(kind: str, db: Path) -> SessionStore | None:
    return SQLiteStore(db) if kind == "sqlite" else None


@pytest.mark.parametrize("path", _PATHS)
@pytest.mark.parametrize(
    ("end", "store"), _END_CASES, ids=[f"{end.id}-{store}" for end, store in _END_CASES]
)
def test_after_close_or_a_failed_settle_every_guest_is_handed_back_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, end: _End, store: str, path: str
) -> None:
    fibers = path == "loop_thread"
    monkeypatch.setattr(_crossing, "FIBERS_USABLE", fibers)
    monkeypatch.setattr(_guest, "FIBERS_USABLE", fibers)
    triggers = _Triggers(monkeypatch)
    triggers.db = tmp_path / "runs.db"
    index = _END_CASES.index((end, store)) * len(_PATHS) + _PATHS.index(path)
    limit = 96 * _MIB + 4096 * (index + 1)  # a configuration of its own, as above
    limits = Limits(memory_limit_bytes=limit)
    loop = asyncio.new_event_loop()
    try:
        options: dict[str, Any] = {"limits": limits, "session_id": "leaks"}
        if (durable := _store(store, triggers.db)) is not None:
            options["store"] = durable
        mode = CodeMode(_tools(triggers), **options)
        assert loop.run_until_complete(mode.exec("return 0;"))["value"] == 0
        outcome = loop.run_until_complete(end.body(mode, triggers))
        assert outcome == end.expected
        loop.run_until_complete(mode.aclose())
        loop.run_until_complete(asyncio.sleep(0))  # released guests are put away
        assert _counted(triggers.guests) == [], "a lane counts the guest of a closed runtime"
        after_mode = CodeMode(_tools(triggers), limits=limits)
        after = loop.run_until_complete(_next_cells(after_mode))
        loop.run_until_complete(after_mode.aclose())
        loop.run_until_complete(_lanes_drained())
    finally:
        loop.close()
    assert after == [5, 6]
    _check_handed_back(triggers, limit)
