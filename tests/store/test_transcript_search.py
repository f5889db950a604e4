"""Transcript search (`TranscriptSearch`) on every backend: the durable ones' full-text indexes
and the memory store's scan, through the tool and the store."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
from psycopg import sql

from clawcell.agent import Agent, ScriptedModel
from clawcell.catalog import Catalog, call_session
from clawcell.store import PostgresStore, TranscriptSearch

# The store's own query, to ask the planner whether it can use the index.
from clawcell.store._postgres._search import _QUERY  # pyright: ignore[reportPrivateUsage]

from .conftest import StoreFactory

ENGINES = {"MemoryStore": "scan", "SQLiteStore": "fts5", "PostgresStore": "postgres"}


def entry(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_sessions_search_finds_a_phrase_in_another_session(new_store: StoreFactory) -> None:
    from clawcell.tools import sessions

    async def main() -> tuple[str, Any, Any]:
        store = new_store()
        holder: list[Agent] = []
        tools = sessions(lambda: holder[0])
        holder.append(Agent(model=ScriptedModel([]), tools=tools, store=store))
        await store.append_transcript("a", [entry("user", "deploy the canary build")])
        await store.append_transcript(
            "b", [entry("user", "Where do Quokkas migrate?"), entry("assistant", "Nowhere.")]
        )
        catalog = Catalog(tools)

        async def search(query: str) -> Any:
            call_session.set("a")
            return await catalog.call("sessions_search", {"query": query})

        first = await asyncio.create_task(search("quokkas MIGRATE"))
        await store.append_transcript("b", [entry("user", "and quokkas migrate again")])
        second = await asyncio.create_task(search("quokkas migrate"))
        assert isinstance(store, TranscriptSearch)
        await holder[0].aclose()
        await store.close()
        return type(store).__name__, first, second

    kind, first, second = asyncio.run(main())
    assert first["engine"] == ENGINES[kind]
    assert [(h["sessionId"], h["index"], h["role"]) for h in first["results"]] == [("b", 0, "user")]
    assert "Quokkas" in first["results"][0]["snippet"]
    assert sorted(h["index"] for h in second["results"]) == [0, 2]  # the index caught up


def test_every_backend_searches_only_the_sessions_asked_for(new_store: StoreFactory) -> None:
    async def main() -> tuple[list[tuple[str, int]], bool, list[tuple[str, int]], bool]:
        store = new_store()
        assert isinstance(store, TranscriptSearch)
        for session_id in ("a", "b", "c"):
            await store.append_transcript(
                session_id, [entry("user", "the quokka hops"), entry("assistant", "no match")]
            )
        one = await store.search_transcripts(["QUOKKA"], limit=5, sessions=["b"])
        every = await store.search_transcripts(["quokka", "hops"], limit=2)
        await store.close()
        return (
            [(h.session_id, h.index) for h in one.hits],
            one.truncated,
            sorted((h.session_id, h.index) for h in every.hits),
            every.truncated,
        )

    one, one_truncated, every, every_truncated = asyncio.run(main())
    assert (one, one_truncated) == ([("b", 0)], False)
    assert len(every) == 2 and {index for _, index in every} == {0} and every_truncated


def test_a_version_2_postgres_schema_gets_the_search_index_over_its_old_transcripts(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async def fill() -> None:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            await store.append_transcript("old", [entry("user", "the wombat burrows deep")])
            await store.append_transcript("other", [entry("user", "nothing to see")])

    asyncio.run(fill())
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:  # back to version 2
        function = sql.Identifier(postgres_schema, "transcript_text")
        conn.execute(sql.SQL("DROP FUNCTION {} CASCADE").format(function))
        version_table = sql.Identifier(postgres_schema, "schema_version")
        conn.execute(sql.SQL("DELETE FROM {} WHERE version >= 3").format(version_table))
        conn.execute(
            sql.SQL(
                "ALTER TABLE {} DROP COLUMN title, DROP COLUMN pinned, DROP COLUMN archived"
            ).format(sql.Identifier(postgres_schema, "sessions"))
        )

    async def search() -> tuple[tuple[int, int], list[str]]:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            versions = await store.upgrade()
            hits = await store.search_transcripts(["WOMBAT", "burrows"], limit=5)
            return versions, [h.session_id for h in hits.hits]

    assert asyncio.run(search()) == ((2, 4), ["old"])
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path = {}").format(sql.Identifier(postgres_schema)))
        conn.execute("SET enable_seqscan = off")  # a two-row table: ask whether it *can*
        plans = [
            conn.execute("EXPLAIN " + _QUERY, {"q": "wombat", "limit": 5, "all": every,
                                               "sessions": sessions}).fetchall()
            for every, sessions in ((True, []), (False, ["old"]))  # all, or the visible ones
        ]  # fmt: skip
    every, visible = ("\n".join(str(row[0]) for row in plan) for plan in plans)
    assert "transcripts_text_search" in every
    assert "Index" in visible  # by the text index or by session: either way no table scan
