"""The session tools over an agent's store: list, history, search, send, status, visibility."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from clawcell import ToolError
from clawcell.agent import Agent, ScriptedModel
from clawcell.catalog import Catalog, call_session
from clawcell.store import MemoryStore, SessionStore, SQLiteStore
from clawcell.tools import SessionVisibility, sessions

StoreFactory = Callable[[Path], SessionStore]
STORES: dict[str, StoreFactory] = {
    "memory": lambda _path: MemoryStore(),
    "sqlite": lambda path: SQLiteStore(path / "s.db"),
}
SEED = {
    "ops-daily": ["Summarise the deploy log", "Deploy finished; the canary flag is green."],
    "team-research": ["Find papers on quokka migration", "Three papers on quokka migration."],
    "private-notes": ["My password hint is purple elephant", "Noted."],
}


def entry(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}


@asynccontextmanager
async def seeded_agent(
    store: SessionStore, visibility: SessionVisibility | None = None, replies: int = 0
) -> AsyncGenerator[tuple[Agent, Catalog]]:
    holder: list[Agent] = []
    tools = sessions(lambda: holder[0], visibility=visibility)
    agent = Agent(model=ScriptedModel(["ok"] * replies), tools=tools, store=store)
    holder.append(agent)
    for session_id, (asked, answered) in SEED.items():
        await store.append_transcript(
            session_id, [entry("user", asked), entry("assistant", answered)]
        )
    try:
        yield agent, Catalog(tools)
    finally:
        await agent.aclose()
        await store.close()


async def as_session(session_id: str, catalog: Catalog, name: str, args: dict[str, Any]) -> Any:
    async def call() -> Any:
        call_session.set(session_id)
        return await catalog.call(name, args)

    return await asyncio.create_task(call())


@pytest.mark.parametrize("backend", sorted(STORES))
def test_search_finds_a_phrase_in_another_session(backend: str, tmp_path: Path) -> None:
    async def main() -> Any:
        async with seeded_agent(STORES[backend](tmp_path)) as (_agent, catalog):
            return await as_session(
                "ops-daily", catalog, "sessions_search", {"query": "Quokka MIGRATION"}
            )

    found = asyncio.run(main())
    assert found["engine"] == ("fts5" if backend == "sqlite" else "scan")
    assert [(hit["sessionId"], hit["index"], hit["role"]) for hit in found["results"]] in (
        [("team-research", 0, "user"), ("team-research", 1, "assistant")],
        [("team-research", 1, "assistant"), ("team-research", 0, "user")],
    )
    assert all("quokka migration" in hit["snippet"].lower() for hit in found["results"])


@pytest.mark.parametrize("backend", sorted(STORES))
def test_a_session_outside_the_policy_is_refused(backend: str, tmp_path: Path) -> None:
    policy = SessionVisibility(see=("self", "team-*", "ops-*"), send=("team-*",))

    async def main() -> Any:
        async with seeded_agent(STORES[backend](tmp_path), policy) as (_agent, catalog):
            listed = await as_session("ops-daily", catalog, "sessions_list", {})
            hits = await as_session("ops-daily", catalog, "sessions_search", {"query": "purple"})
            with pytest.raises(ToolError) as read:
                await as_session(
                    "ops-daily", catalog, "sessions_history", {"sessionId": "private-notes"}
                )
            with pytest.raises(ToolError) as sent:
                await as_session(
                    "ops-daily", catalog, "sessions_send",
                    {"sessionId": "private-notes", "text": "hi"},
                )  # fmt: skip
            return listed, hits, read.value, sent.value

    listed, hits, read, sent = asyncio.run(main())
    assert sorted(row["sessionId"] for row in listed["sessions"]) == ["ops-daily", "team-research"]
    assert listed["total"] == 2
    assert hits["results"] == []
    assert read.code == "session_not_visible"
    assert sent.code == "session_not_allowed"


def test_history_is_paged_and_bounded(tmp_path: Path) -> None:
    async def main() -> Any:
        async with seeded_agent(MemoryStore()) as (_agent, catalog):
            return await as_session(
                "ops-daily", catalog, "sessions_history",
                {"sessionId": "team-research", "limit": 1, "maxChars": 10},
            )  # fmt: skip

    page = asyncio.run(main())
    assert page == {
        "sessionId": "team-research",
        "messages": [{"index": 0, "role": "user", "text": "Find paper", "truncated": True}],
        "total": 2,
        "nextOffset": 1,
    }


SEED_CELL = """
const { sessions } = await sessions_list({ limit: 20 });
const target = sessions.find((s) => s.title.toLowerCase().includes("quokka"));
const sent = await sessions_send({ sessionId: target.sessionId, text: "Any new papers?" });
return { to: target.sessionId, status: sent.status, turn: typeof sent.turnId };
"""


def test_the_seed_cell_lists_finds_by_label_and_sends(tmp_path: Path) -> None:
    async def main() -> Any:
        async with seeded_agent(SQLiteStore(tmp_path / "s.db"), replies=1) as (agent, _catalog):
            envelope = await agent.mode("ops-daily").exec(SEED_CELL)
            for _ in range(200):
                if len(await agent.transcript("team-research")) >= 4:
                    break
                await asyncio.sleep(0.05)
            status = await as_session("team-research", _catalog, "session_status", {})
            return envelope, await agent.transcript("team-research"), status

    envelope, transcript, status = asyncio.run(main())
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == {"to": "team-research", "status": "started", "turn": "string"}
    assert [m["role"] for m in transcript] == ["user", "assistant", "user", "assistant"]
    assert transcript[2]["content"][0]["text"] == "Any new papers?"
    assert status["sessionId"] == "team-research" and status["messages"] == 4
    assert status["parkedRuns"] == [] and status["pendingApprovals"] == 0


def test_a_session_cannot_send_to_itself() -> None:
    async def main() -> Any:
        async with seeded_agent(MemoryStore()) as (_agent, catalog):
            with pytest.raises(ToolError) as caught:
                await as_session(
                    "ops-daily", catalog, "sessions_send", {"sessionId": "ops-daily", "text": "x"}
                )
            return caught.value

    assert asyncio.run(main()).code == "session_not_allowed"


def test_the_docs_show_the_seed_cell_and_each_declaration() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "tools.md").read_text("utf-8")
    assert f"```js\n{SEED_CELL.strip()}\n```" in text
    tools = sessions(lambda: None)  # pyright: ignore[reportArgumentType]  # contracts only
    catalog = Catalog(tools)
    for tool in tools:
        declared = catalog.api_read(f"tools/{tool.name}.d.ts")["content"].rstrip()
        assert f"```ts\n{declared}\n```" in text


def test_config_session_tools_act_once_bound_to_their_agent() -> None:
    from clawcell.tools import bind_agent, from_config

    async def main() -> Any:
        tools = from_config({"sessions": {"see": ["self", "team-*"]}})
        catalog = Catalog(tools)
        with pytest.raises(ToolError) as unbound:
            await as_session("ops-daily", catalog, "sessions_list", {})
        store = MemoryStore()
        async with Agent(model=ScriptedModel([]), tools=tools, store=store) as agent:
            bind_agent(tools, agent)
            for session_id, (asked, answered) in SEED.items():
                await store.append_transcript(
                    session_id, [entry("user", asked), entry("assistant", answered)]
                )
            listed = await as_session("ops-daily", catalog, "sessions_list", {})
        return unbound.value, listed

    unbound, listed = asyncio.run(main())
    assert unbound.code == "unbound_session_tools"
    assert sorted(row["sessionId"] for row in listed["sessions"]) == ["ops-daily", "team-research"]
