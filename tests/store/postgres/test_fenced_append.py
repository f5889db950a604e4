"""A turn's transcript append on PostgreSQL: the fenced renewal and the append commit once."""

from __future__ import annotations

from typing import Any

from clawcell.store import PostgresStore, SessionTurns
from tests.conftest import run

from ._counting import counting


def _entry(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def test_a_held_turns_append_renews_its_lease_and_appends_in_one_commit(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async def body() -> tuple[int, dict[str, int], float, float]:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            hold = await SessionTurns(store, lease_seconds=30).hold("s", wait=0)
            assert hold is not None
            before = await store.load_run("s\x1fturn", "turn")
            with counting(this_task_only=True) as counts:  # not the hold's watch
                await hold.append([_entry("one"), _entry("two")])
            after = await store.load_run("s\x1fturn", "turn")
            await hold.release()
            assert before is not None and after is not None
            assert len(await store.read_transcript("s")) == 2
            return (
                counts.commits,
                dict(counts.statements),
                before.lease_expires_at or 0.0,
                after.lease_expires_at or 0.0,
            )

    commits, statements, before, after = run(body())
    assert commits == 1, statements
    assert statements["UPDATE runs"] == 1  # the fenced renewal
    assert statements["INSERT transcripts"] == 2
    assert after > before
