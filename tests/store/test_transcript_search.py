"""Full-text transcript search of the durable backends (`TranscriptSearch`), through the tool."""

from __future__ import annotations

import asyncio
from typing import Any

from clawcell.agent import Agent, ScriptedModel
from clawcell.catalog import Catalog, call_session
from clawcell.store import TranscriptSearch

from .conftest import StoreFactory

ENGINES = {"SQLiteStore": "fts5", "PostgresStore": "postgres"}


def entry(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_sessions_search_finds_a_phrase_in_another_session(
    new_durable_store: StoreFactory,
) -> None:
    from clawcell.tools import sessions

    async def main() -> tuple[str, Any, Any]:
        store = new_durable_store()
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


def test_the_memory_store_has_no_search_of_its_own(new_store: StoreFactory) -> None:
    store = new_store()
    assert isinstance(store, TranscriptSearch) == (type(store).__name__ != "MemoryStore")
    asyncio.run(store.close())
