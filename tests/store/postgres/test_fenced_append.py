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


def test_a_message_to_a_titled_session_leaves_its_title_row_alone(
    postgres_dsn: str, postgres_schema: str
) -> None:
    user = {"role": "user", "content": [{"type": "text", "text": "the first words"}]}

    async def body() -> tuple[dict[str, int], dict[str, int], str]:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            await store.list_sessions()  # the schema is created outside the count
            with counting() as first:
                await store.append_transcript("s", [user])
            with counting() as second:
                await store.append_transcript("s", [dict(user, content="other words")])
            record = await store.session_record("s")
            assert record is not None
            return dict(first.statements), dict(second.statements), record.title

    first, second, title = run(body())
    assert first.get("UPDATE sessions") == 1  # the default title, once
    assert "UPDATE sessions" not in second
    assert title == "the first words"
