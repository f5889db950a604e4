"""The UI's optional capabilities, named as protocols: the real agent and Code Mode have each
one (a renamed method would otherwise drop a feature silently), and a plain double has none
and still serves the chat."""

from __future__ import annotations

import asyncio

from clawcell.agent import Agent, ScriptedModel
from clawcell.store import MemoryStore
from clawcell.ui._protocol import (
    ApprovingRunner,
    CatalogRunner,
    ChatAgent,
    SharedTurnsAgent,
    StoreAgent,
    TranscriptAgent,
    agent_store,
)
from tests.ui._client import client, post
from tests.ui._fakes import FakeAgent, reply_turn


def test_the_agent_and_its_code_mode_have_every_capability_the_ui_uses() -> None:
    async def check() -> None:
        store = MemoryStore()
        async with Agent(model=ScriptedModel(["hi"]), store=store) as agent:
            chat: ChatAgent = agent
            assert isinstance(chat, SharedTurnsAgent)
            assert isinstance(chat, StoreAgent) and agent_store(chat) is store
            assert isinstance(chat, TranscriptAgent)
            runner = chat.mode("s")
            assert isinstance(runner, ApprovingRunner)
            assert isinstance(runner, CatalogRunner)

    asyncio.run(check())


def test_a_double_without_the_capabilities_has_none_and_still_serves_a_turn() -> None:
    agent = FakeAgent([reply_turn("Hello")])
    assert not isinstance(agent, StoreAgent) and agent_store(agent) is None
    assert not isinstance(agent, TranscriptAgent) and not isinstance(agent, SharedTurnsAgent)
    app = client(agent)
    response = post(app, "/api/sessions/s/turns", {"text": "hi"})
    assert response.status_code == 200 and "Hello" in response.text
    history = app.get("/api/sessions/s/history").json()  # `ChatAgent.history`, shown whole
    assert [m["role"] for m in history] == ["user", "assistant"]
