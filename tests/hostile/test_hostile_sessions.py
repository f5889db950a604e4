"""Session isolation: runtimes of different sessions sharing one store (in memory or SQLite)
never see each other's values, parked runs or globals, whatever the session ids look like,
however their cells interleave and however a cell of one session ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, ConfigurationError, InputError, Limits, MemoryStore
from clawcell.store import SessionStore, SQLiteStore
from tests.conftest import echo_tool, run
from tests.hostile.test_hostile_cells import (
    _probe,  # pyright: ignore[reportPrivateUsage]
)

ROOMY = Limits(timeout_ms=60_000)
FAST_A = Limits(timeout_ms=1_000)  # the failing cells: long enough to write first
BACKENDS = ["memory", "sqlite"]
# Pairs of session ids a careless backend might confuse (case, padding, LIKE wildcards,
# invisible characters, path-like ids, prefixes). Control characters are refused outright.
PAIRS = [
    ("a", "b"),
    ("a", "A"),
    ("a", "a "),
    ("a%", "ab"),
    ("a_", "ab"),
    ("a", "a\u200b"),
    ("a/b", "a"),
    ("../a", "a"),
    ("日本", "日本語"),
    ("x" * 300, "x" * 299),
]
WRITE = (
    "await store('secret', { who: SESSION });\nglobalThis.__leak = SESSION;\n"
    "await results.save({ who: SESSION });\nreturn 1;"
)
PEEK = "return [await load('secret'), typeof globalThis.__leak];"


@asynccontextmanager
async def _store(backend: str, tmp_path: Path) -> AsyncGenerator[SessionStore]:
    if backend == "memory":
        async with MemoryStore() as memory:
            yield memory
    else:
        async with SQLiteStore(tmp_path / "state.db") as sqlite:
            yield sqlite


def _mode(store: SessionStore, session: str, **options: Any) -> CodeMode:
    return CodeMode([echo_tool()], store=store, session_id=session, limits=ROOMY, **options)


def _cell(code: str, session: str) -> str:
    return f"const SESSION = {session!r};\n" + code


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("writer", "reader"), PAIRS, ids=[f"pair{i}" for i in range(len(PAIRS))])
def test_look_alike_sessions_share_nothing(
    writer: str, reader: str, backend: str, tmp_path: Path
) -> None:
    async def main() -> list[Any]:
        async with (
            _store(backend, tmp_path) as store,
            _mode(store, writer) as w,
            _mode(store, reader) as r,
        ):
            clean = await _probe(r)
            assert (await w.exec(_cell(WRITE, writer)))["status"] == "completed"
            parked = await w.exec("await yield_control('mine');\nreturn 'resumed';")
            seen = (await r.exec(PEEK))["value"]
            with pytest.raises(InputError):
                await r.wait(parked["runId"])
            runs = [p.run_id for p in await store.list_runs(reader)]
            await r.exec("await store('secret', 'reader');\nreturn 1;")
            mine = (await w.exec(PEEK))["value"]
            resumed = (await w.wait(parked["runId"]))["value"]
            return [seen, runs, mine, resumed, clean == await _probe(r)]

    assert run(main()) == [
        [None, "undefined"],
        [],
        [{"who": writer}, "undefined"],
        "resumed",
        True,
    ]


INTERLEAVED = (
    "await store('k', SESSION);\n"
    "for (let i = 0; i < 5; i++) {\n"
    "  await echo({ i });\n"
    "  await new Promise((r) => setTimeout(r, 0));\n"
    "  if ((await load('k')) !== SESSION) throw new Error('saw ' + (await load('k')));\n"
    "}\n"
    "await yield_control('half');\n"
    "return [await load('k'), typeof globalThis.__other];"
)


@pytest.mark.parametrize("guest_thread", [True, False], ids=["guest_thread", "loop_thread"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_interleaved_cells_of_eight_sessions_each_see_their_own_values(
    backend: str, guest_thread: bool, tmp_path: Path
) -> None:
    sessions = [f"s{i}" for i in range(8)]

    async def one(store: SessionStore, session: str) -> Any:
        async with _mode(store, session, guest_thread=guest_thread) as mode:
            await mode.exec(f"globalThis.__other = {session!r};\nreturn 1;")
            parked = await mode.exec(_cell(INTERLEAVED, session))
            assert parked["status"] == "waiting", parked
            return (await mode.wait(parked["runId"]))["value"]

    async def main() -> list[Any]:
        async with _store(backend, tmp_path) as store:
            return list(await asyncio.gather(*(one(store, s) for s in sessions)))

    assert run(main()) == [[s, "undefined"] for s in sessions]


ENDINGS = {
    "throws": "throw new Error('after writing');",
    "times_out": "for (;;) {}",
    "runs_out_of_memory": "const a = [];\nfor (;;) a.push(new Array(1e5).fill(1));",
    "overflows_the_queue": "for (let i = 0; i < 200; i++) echo({ i });",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_a_failed_cell_commits_nothing_in_any_session(
    ending: str, backend: str, tmp_path: Path
) -> None:
    code = "await store('secret', 'lost');\nawait echo({});\n" + ENDINGS[ending]

    async def main() -> list[Any]:
        async with (
            _store(backend, tmp_path) as store,
            _mode(store, "a") as a,
            _mode(store, "b") as b,
            CodeMode([echo_tool()], store=store, session_id="a", limits=FAST_A) as short,
        ):
            await b.exec("await store('secret', 'b');\nreturn 1;")
            failed = await short.exec(code)
            return [
                failed["status"],
                (await a.exec(PEEK))["value"],
                (await b.exec(PEEK))["value"],
                await _probe(a) == await _probe(b),
            ]

    assert run(main()) == ["failed", [None, "undefined"], ["b", "undefined"], True]


CONTROL_IDS = ["a\x1fapprovals", "a\x1faudit", "a\x00", "a\n", "\x1b[31m", "a\x85", "a\ud800"]


@pytest.mark.parametrize("session_id", CONTROL_IDS, ids=[f"control{i}" for i in range(7)])
def test_a_session_id_that_could_name_a_derived_ledger_is_refused(
    session_id: str, tmp_path: Path
) -> None:
    async def main() -> Any:
        async with SQLiteStore(tmp_path / "state.db") as store:
            with pytest.raises(ConfigurationError):
                _mode(store, session_id)
            async with _mode(store, "a") as clean:
                return (await clean.exec("return 1"))["value"]

    assert run(main()) == 1
