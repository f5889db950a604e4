"""`sessions_search` filters by `SessionVisibility` in the store's query: hidden sessions' hits
neither crowd out the caller's own nor show in `truncated` (every backend)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from clawcell.agent import Agent, ScriptedModel
from clawcell.catalog import Catalog, call_session
from clawcell.store import SessionStore
from clawcell.tools import SessionVisibility, sessions

from ...store.conftest import new_store, postgres_dsn, postgres_schema

__all__ = ["new_store", "postgres_dsn", "postgres_schema"]  # the store fixtures, by backend

StoreFactory = Callable[[], SessionStore]


def entry(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_hidden_hits_neither_crowd_out_own_hits_nor_show_as_truncated(
    new_store: StoreFactory,
) -> None:
    async def main() -> Any:
        holder: list[Agent] = []
        policy = SessionVisibility(see=("self",))
        tools = sessions(lambda: holder[0], visibility=policy)
        store = new_store()
        async with Agent(model=ScriptedModel([]), tools=tools, store=store) as agent:
            holder.append(agent)
            for n in range(30):  # many better hits in a hidden session
                await store.append_transcript("secret", [entry(f"quokka quokka quokka {n}")])
            await store.append_transcript("mine", [entry("one quokka here"), entry("another")])

            async def call() -> Any:
                call_session.set("mine")
                return await Catalog(tools).call("sessions_search", {"query": "quokka", "limit": 1})

            found = await asyncio.create_task(call())
            await store.close()
            return found

    found = asyncio.run(main())
    assert [(hit["sessionId"], hit["index"]) for hit in found["results"]] == [("mine", 0)]
    assert found["truncated"] is False
