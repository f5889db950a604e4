"""The playground's run history: bounded per session, newest first, shared by every worker
on one store with card ids that never collide; and a Code Mode that cannot decide approvals
gets a clear refusal, not a crash."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from clawcell.store import EntryStore, PostgresStore, SQLiteStore
from clawcell.ui._playground._runs import PlayHistory, PlayRun, RunView, waiting_approvals
from tests.ui._client import client, post
from tests.ui._fakes import FakeAgent


class _Plain:
    """A `CellRunner` without `decide` (what a minimal agent double may return)."""

    async def call_tool(self, name: str, arguments: Any, *, on_update: Any = None) -> Any:
        return {"status": "completed", "output": []}

    async def pending_approvals(self, run_id: str) -> list[Any]:
        return []


def _ids(history: PlayHistory, session: str) -> list[str]:
    return [v.run.id for v in asyncio.run(history.views(session, _Plain()))]


def _start(history: PlayHistory, session: str, code: str = "1") -> PlayRun:
    return asyncio.run(history.start(session, tool="exec", code=code, run_id=None))


def test_the_history_is_newest_first_and_keeps_the_last_runs_of_each_session() -> None:
    history = PlayHistory(max_runs=3)
    for _ in range(5):
        _start(history, "a")
    _start(history, "b")
    assert _ids(history, "a") == ["play-5", "play-4", "play-3"]
    assert _ids(history, "b") == ["play-1"]


def test_a_finished_run_keeps_its_envelope_and_a_dropped_one_is_ignored() -> None:
    history = PlayHistory(max_runs=1)
    first = _start(history, "a")
    finished = asyncio.run(history.finished("a", first.id, {"status": "completed", "value": 1}))
    assert finished is not None and finished.envelope == {"status": "completed", "value": 1}
    assert finished.seconds is not None and finished.seconds >= 0
    _start(history, "a", code="2")
    assert asyncio.run(history.finished("a", first.id, {"status": "completed"})) is None
    assert asyncio.run(history.finished("a", "not-a-card", {"status": "completed"})) is None


async def _two_workers(store: EntryStore) -> tuple[list[str], list[RunView], list[RunView]]:
    """Two histories on one store (two workers): 6 runs started at once, 3 on each."""
    a, b = PlayHistory(store), PlayHistory(store)
    starts = [h.start("s", tool="exec", code=str(n), run_id=None) for n in range(3) for h in (a, b)]
    runs = await asyncio.gather(*starts)
    await a.finished("s", runs[1].id, {"status": "completed", "value": 1})
    return [r.id for r in runs], await a.views("s", _Plain()), await b.views("s", _Plain())


def _check_shared(ids: list[str], seen_by_a: list[RunView], seen_by_b: list[RunView]) -> None:
    assert sorted(ids) == sorted(f"play-{n}" for n in range(1, 7))  # no card id twice
    assert seen_by_a == seen_by_b  # the same history from either worker
    assert [v.run.id for v in seen_by_a] == [f"play-{n}" for n in range(6, 0, -1)]
    finished = next(v.run for v in seen_by_b if v.run.id == ids[1])
    assert finished.envelope == {"status": "completed", "value": 1}


def test_two_workers_on_one_sqlite_file_share_the_history_and_never_share_a_card_id(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        stores = [SQLiteStore(tmp_path / "state.db") for _ in range(2)]
        try:
            first = PlayHistory(stores[0])
            await first.start("s", tool="exec", code="0", run_id=None)
            second = await PlayHistory(stores[1]).start("s", tool="exec", code="1", run_id=None)
            assert second.id == "play-2"  # the other store object's run was seen
        finally:
            for store in stores:
                await store.close()

    asyncio.run(scenario())
    store = SQLiteStore(tmp_path / "race.db")
    try:
        _check_shared(*asyncio.run(_two_workers(store)))
    finally:
        asyncio.run(store.close())


def test_two_workers_on_one_postgresql_schema_share_the_history_and_never_share_a_card_id(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async def scenario() -> tuple[list[str], list[RunView], list[RunView]]:
        store = PostgresStore(postgres_dsn, schema=postgres_schema)
        try:
            return await _two_workers(store)
        finally:
            await store.close()

    _check_shared(*asyncio.run(scenario()))


def test_only_envelopes_parked_on_approvals_have_prompts() -> None:
    prompt: dict[str, Any] = {"id": "ap_1", "tool": "pay", "input": {}}
    parked: dict[str, Any] = {"status": "waiting", "reason": "approval", "runId": "cm_1",
              "pendingApprovals": [prompt, "junk"]}  # fmt: skip
    assert waiting_approvals(parked) == [prompt]
    assert waiting_approvals({**parked, "reason": "tool"}) == []
    assert waiting_approvals({**parked, "runId": None}) == []
    assert waiting_approvals(None) == []


class _PlainAgent(FakeAgent):
    def mode(self, session_id: str) -> Any:
        return _Plain()


def test_a_runner_that_cannot_decide_is_refused_clearly() -> None:
    response = post(client(_PlainAgent()), "/api/playground/playground/runs/cm_1/approvals/ap_1",
                    {"decision": "approve"})  # fmt: skip
    assert response.status_code == 501
    assert response.json() == {"error": "this agent's Code Mode cannot decide approvals."}
