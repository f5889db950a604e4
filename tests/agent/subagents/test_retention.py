"""Sub-agent run records are pruned: a parent keeps its newest `keep_finished_runs` finished
runs (in the store and in memory) and every run still in flight."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from clawcell.agent import (
    Agent,
    ModelRequest,
    ScriptedModel,
    SubagentProfile,
    Subagents,
    exec_call,
    subagent_runs,
)
from clawcell.agent._subagents._run_book import KEEP_FINISHED_RUNS
from clawcell.errors import ConfigurationError
from clawcell.store import MemoryStore, StoredValue
from tests.agent._helpers import collect
from tests.conftest import run
from tests.store.conftest import StoreFactory

RECORDS = "chat\x1fsubagents"
ONE_BY_ONE = """
const replies = [];
for (const topic of ["a", "b", "c", "d", "e"]) {
  const h = await sessions_spawn({profile: "researcher", task: `topic ${topic}`, label: topic});
  replies.push((await agents_wait({runIds: [h.runId]})).runs[0].reply);
}
return replies;
"""


def _answer(request: ModelRequest) -> str:
    return f"answer about {request.messages[0]['content'][0]['text']}"


def _record(run_id: str, status: str, started: float) -> StoredValue:
    record = {
        "runId": run_id,
        "sessionId": f"chat/sub/{run_id}",
        "parent": "chat",
        "profile": "researcher",
        "label": None,
        "task": "seeded",
        "startedAt": started,
        "status": status,
        "owner": "other-host:1:abc",
        "aliveAt": time.time(),  # a fresh heartbeat: another live process drives it
    }
    return StoredValue(json=json.dumps(record))


async def _five_runs(store: Any, keep: int | None) -> tuple[Subagents, list[str]]:
    """Seed an old finished run (with a claim entry) and an older run in flight elsewhere,
    then run five children one after the other."""
    long_ago = time.time() - 3600
    await store.put(RECORDS, "sub_inflight", _record("sub_inflight", "running", long_ago))
    await store.put(RECORDS, "sub_old", _record("sub_old", "completed", long_ago + 1))
    await store.put(RECORDS, "sub_old#resume1", StoredValue(json='"other-host:1:abc"'))
    researcher = SubagentProfile(name="researcher", model=ScriptedModel([_answer] * 5))
    agent = Agent(model=ScriptedModel([exec_call(ONE_BY_ONE), "done"]), store=store)
    kept = {} if keep is None else {"keep_finished_runs": keep}
    runtime = Subagents(agent, [researcher], **kept)
    agent.add_tools(runtime.tools)
    async with agent:
        await collect(agent, "chat", "five topics, one by one")
        return runtime, [r["runId"] for r in runtime.runs("chat")]


def test_only_the_newest_finished_runs_and_every_run_in_flight_are_kept() -> None:
    async def main() -> tuple[list[str], list[dict[str, Any]], list[str], int]:
        store = MemoryStore()
        _, in_memory = await _five_runs(store, keep=2)
        stored = await subagent_runs(store, "chat")
        keys = sorted(await store.items(RECORDS))
        transcripts = [len(await store.read_transcript(f"chat/sub/{n}")) for n in range(1, 6)]
        return in_memory, stored, keys, sum(1 for t in transcripts if t)

    in_memory, stored, keys, transcripts = run(main())
    assert [(r["label"], r["status"]) for r in stored] == [
        (None, "running"),  # in flight in another process: kept however old
        ("d", "completed"),
        ("e", "completed"),
    ]
    assert stored[1]["reply"] == "answer about topic d"
    assert keys == sorted(r["runId"] for r in stored)  # the dropped runs' claims went too
    assert sorted(in_memory) == keys  # memory holds no more than the store
    assert transcripts == 5  # the child sessions themselves stay


def test_pruning_works_on_every_durable_store(new_durable_store: StoreFactory) -> None:
    async def main() -> tuple[list[str | None], list[str]]:
        store = new_durable_store()
        try:
            await _five_runs(store, keep=3)
            stored = await subagent_runs(store, "chat")
            keys = sorted(await store.items(RECORDS))
        finally:
            await store.close()
        return [r["label"] for r in stored], keys

    labels, keys = run(main())
    assert labels == [None, "c", "d", "e"]  # the run in flight elsewhere, the newest three
    assert len(keys) == 4 and not any("#resume" in key for key in keys)


def test_the_default_keeps_a_hundred_finished_runs() -> None:
    async def main() -> list[dict[str, Any]]:
        store = MemoryStore()
        await _five_runs(store, keep=None)
        return await subagent_runs(store, "chat")

    stored = run(main())
    assert [r["label"] for r in stored][2:] == ["a", "b", "c", "d", "e"]
    assert [r["runId"] for r in stored][:2] == ["sub_inflight", "sub_old"]
    assert KEEP_FINISHED_RUNS == 100


@pytest.mark.parametrize("keep", [0, -1, 100_001, True, 2.5])
def test_a_keep_out_of_range_is_refused(keep: Any) -> None:
    agent = Agent(model=ScriptedModel([]))
    researcher = SubagentProfile(name="researcher", model=ScriptedModel([]))
    with pytest.raises(ConfigurationError) as caught:
        Subagents(agent, [researcher], keep_finished_runs=keep)
    assert caught.value.message == (
        f"`keep_finished_runs` must be an integer from 1 to 100000, got {keep!r}."
    )
