"""Sessions served by several agents (workers) on one durable store: the store is the truth."""

from __future__ import annotations

from pathlib import Path

from clawcell import SQLiteStore
from clawcell.agent import Agent, ScriptedModel
from clawcell.agent._transcript import message_text
from tests.agent._helpers import collect
from tests.conftest import run


def test_a_turn_sends_the_model_every_earlier_turn_whichever_worker_ran_it(tmp_path: Path) -> None:
    model_a = ScriptedModel(["one", "three"])
    model_b = ScriptedModel(["two"])

    async def main() -> list[str]:
        path = tmp_path / "state.db"
        async with (
            SQLiteStore(path) as store_a,
            SQLiteStore(path) as store_b,
            Agent(model=model_a, store=store_a) as a,
            Agent(model=model_b, store=store_b) as b,
        ):
            await collect(a, "s", "first")
            await collect(b, "s", "second")
            await collect(a, "s", "third")
        return [message_text(m) for m in model_a.requests[-1].messages]

    assert run(main()) == ["first", "one", "second", "two", "third"]
