"""The playground's run history: bounded per session and in sessions, newest first; and a
Code Mode that cannot decide approvals gets a clear refusal, not a crash."""

from __future__ import annotations

import asyncio
from typing import Any

from clawcell.ui._play_runs import PlayHistory, PlayRun, waiting_approvals
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


def test_the_history_is_newest_first_and_keeps_the_last_runs_of_each_session() -> None:
    history = PlayHistory(max_runs=3, max_sessions=2)
    for n in range(5):
        history.started("a", PlayRun(id=f"r{n}", tool="exec", code="1", run_id=None))
    assert _ids(history, "a") == ["r4", "r3", "r2"]
    history.started("b", PlayRun(id="b0", tool="exec", code="1", run_id=None))
    history.started("c", PlayRun(id="c0", tool="exec", code="1", run_id=None))
    assert _ids(history, "a") == []  # the least recently used session dropped off
    assert _ids(history, "b") == ["b0"] and _ids(history, "c") == ["c0"]


def test_a_finished_run_keeps_its_envelope_and_a_dropped_one_is_ignored() -> None:
    history = PlayHistory(max_runs=1)
    history.started("a", PlayRun(id="r0", tool="exec", code="1", run_id=None))
    finished = history.finished("a", "r0", {"status": "completed", "value": 1})
    assert finished is not None and finished.envelope == {"status": "completed", "value": 1}
    assert finished.seconds is not None and finished.seconds >= 0
    history.started("a", PlayRun(id="r1", tool="exec", code="2", run_id=None))
    assert history.finished("a", "r0", {"status": "completed"}) is None


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
