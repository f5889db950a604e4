"""The session drawer's routes on SQLite and PostgreSQL, each with two workers (two apps,
agents and store objects over one database): what one worker changes, the other lists."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, cast

import pytest
from starlette.testclient import TestClient

from clawcell import Tool
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.agent._subagents._run import SubagentRun
from clawcell.store import MemoryStore, PostgresStore, SessionTurns, SQLiteStore, StoredValue
from clawcell.ui import UiSettings, create_app
from clawcell.ui._security import Secrets
from tests.ui._client import BASE, TOKEN

CSRF = {"x-csrf-token": Secrets(token=TOKEN).csrf}
Store = SQLiteStore | PostgresStore
Factory = Callable[[], Store]


@pytest.fixture(params=["sqlite", "postgres"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Factory:
    """Stores of one backend over one database."""
    if request.param == "sqlite":
        return lambda: SQLiteStore(tmp_path / "state.db")
    dsn: str = request.getfixturevalue("postgres_dsn")
    schema: str = request.getfixturevalue("postgres_schema")
    return lambda: PostgresStore(dsn, schema=schema, max_size=4)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": 2}


def seed(new_store: Factory, sessions: dict[str, list[dict[str, Any]]]) -> None:
    async def main() -> None:
        async with new_store() as store:
            for session_id, entries in sessions.items():
                await store.append_transcript(session_id, entries)

    asyncio.run(main())


def worker(
    new_store: Factory, model: ScriptedModel | None = None, tools: list[Tool] | None = None
) -> TestClient:
    """A worker's app; log in (`login`) once inside its `with`, where its event loop runs (a
    PostgreSQL store belongs to the loop of its first call)."""
    agent = Agent(model=model or ScriptedModel([]), tools=tools or [], store=new_store())
    return TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE)


def login(*clients: TestClient) -> None:
    for test_client in clients:
        assert test_client.get(f"/?token={TOKEN}").status_code == 200


@pytest.fixture
def two(new_store: Factory) -> Generator[tuple[TestClient, TestClient]]:
    seed(new_store, {
        "s-old": [user("Budget for the spring offsite"), reply("Here is a draft.")],
        "s-mid": [user("Fix the flaky quokka test"), reply("The quokka fixture leaks.")],
        "s-new": [user("Groceries for Sunday")],
    })  # fmt: skip
    with worker(new_store) as a, worker(new_store) as b:
        login(a, b)
        yield a, b


def listed(test_client: TestClient, query: str = "") -> list[tuple[str, str, bool]]:
    response = test_client.get(f"/api/session-list?{query}")
    assert response.status_code == 200
    return [(s["sessionId"], s["title"], s["pinned"]) for s in response.json()["sessions"]]


def test_sessions_are_listed_newest_first_with_the_title_of_their_first_message(
    two: tuple[TestClient, TestClient],
) -> None:
    a, _ = two
    assert listed(a) == [
        ("s-new", "Groceries for Sunday", False),
        ("s-mid", "Fix the flaky quokka test", False),
        ("s-old", "Budget for the spring offsite", False),
    ]


def test_a_rename_and_a_pin_on_one_worker_are_what_the_other_lists(
    two: tuple[TestClient, TestClient],
) -> None:
    a, b = two
    renamed = a.patch("/api/sessions/s-old", json={"title": "  Offsite budget "}, headers=CSRF)
    pinned = a.patch("/api/sessions/s-old", json={"pinned": True}, headers=CSRF)
    assert renamed.json()["title"] == "Offsite budget" and pinned.json()["pinned"] is True
    assert listed(b)[0] == ("s-old", "Offsite budget", True)
    page = b.get("/?session=s-old").text
    assert "<title>clawcell · Offsite budget</title>" in page
    assert re.search(r'data-session="s-old"[^>]*data-pinned="1"', page)


def test_archived_sessions_leave_the_list_and_are_listed_apart(
    two: tuple[TestClient, TestClient],
) -> None:
    a, b = two
    assert a.patch("/api/sessions/s-mid", json={"archived": True}, headers=CSRF).status_code == 200
    assert [s for s, _, _ in listed(b)] == ["s-new", "s-old"]
    assert [s for s, _, _ in listed(b, "archived=1")] == ["s-mid"]


def test_the_list_is_paged_with_a_cursor_and_searched_by_title(
    two: tuple[TestClient, TestClient],
) -> None:
    a, b = two
    first = a.get("/api/session-list?limit=2").json()
    second = b.get("/api/session-list", params={"limit": "2", "after": first["next"]}).json()
    assert [s["sessionId"] for s in first["sessions"]] == ["s-new", "s-mid"]
    assert [s["sessionId"] for s in second["sessions"]] == ["s-old"]
    assert second["next"] is None
    assert [s for s, _, _ in listed(a, "q=QUOKKA")] == ["s-mid"]


@pytest.mark.parametrize(
    ("method", "url", "body", "error"),
    [
        ("GET", "/api/session-list?limit=0", None, "`limit` must be a count from 1 to 100, got 0."),
        ("GET", "/api/session-list?limit=x", None, "`limit` must be a count from 1 to 100, got "
         "'x'."),
        ("GET", "/api/session-list?after=nope", None, "`after` must be the `next` cursor of an "
         "earlier page, got 'nope'; start again from the first page."),
        ("PATCH", "/api/sessions/s-new", {"title": ""}, "A session title must be one line of 1 to "
         "200 characters, got ''; shorten it or remove its line breaks."),
        ("PATCH", "/api/sessions/s-new", {"pinned": "yes"}, "`pinned` must be true or false, got "
         "'yes'."),
        ("PATCH", "/api/sessions/s-new", {"colour": "red"}, "the body must be a JSON object with "
         "`title` (text), `pinned` or `archived` (true or false), got {'colour': 'red'}."),
        ("GET", "/api/search?q=", None, "`q` must be 1 to 200 characters of words, got ''."),
    ],
    ids=["limit-0", "limit-text", "cursor", "empty-title", "pinned-text", "unknown-field", "no-q"],
)  # fmt: skip
def test_bad_requests_say_what_was_wrong(
    two: tuple[TestClient, TestClient], method: str, url: str, body: Any, error: str
) -> None:
    a, _ = two
    response = a.request(method, url, json=body, headers=CSRF)
    assert (response.status_code, response.json()["error"]) == (400, error)


def test_changes_need_the_csrf_token(two: tuple[TestClient, TestClient]) -> None:
    a, _ = two
    assert a.patch("/api/sessions/s-new", json={"pinned": True}).status_code == 403
    assert a.delete("/api/sessions/s-new").status_code == 403
    assert listed(a)[0] == ("s-new", "Groceries for Sunday", False)


def test_deleting_removes_the_transcript_everywhere_and_a_second_delete_is_a_404(
    two: tuple[TestClient, TestClient],
) -> None:
    a, b = two
    assert a.delete("/api/sessions/s-mid", headers=CSRF).json() == {"deleted": "s-mid"}
    assert b.get("/api/sessions/s-mid/history").json() == []
    assert [s for s, _, _ in listed(b)] == ["s-new", "s-old"]
    assert b.get("/api/search?q=quokka").json()["hits"] == []
    again = b.delete("/api/sessions/s-mid", headers=CSRF)
    assert again.status_code == 404
    assert again.json()["error"] == (
        "there is no session 's-mid' (it has no messages, or it was deleted): reload the "
        "session list."
    )


def test_a_session_whose_turn_runs_on_another_worker_cannot_be_deleted(
    new_store: Factory, two: tuple[TestClient, TestClient]
) -> None:
    a, _ = two
    held, done = threading.Event(), threading.Event()

    def other_worker() -> None:  # holds the session's turn, as a running turn does
        async def main() -> None:
            async with new_store() as store:
                hold = await SessionTurns(store).hold("s-mid", wait=0)
                assert hold is not None
                held.set()
                await asyncio.get_running_loop().run_in_executor(None, done.wait)
                await hold.release()

        asyncio.run(main())

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert held.wait(60)
        refused = a.delete("/api/sessions/s-mid", headers=CSRF)
    finally:
        done.set()
        thread.join()
    assert (refused.status_code, refused.json()) == (409, {
        "error": "session 's-mid' has a turn running (or messages queued): stop it or wait for "
                 "it to end, then delete the session.", "code": "turn_running",
    })  # fmt: skip
    assert len(a.get("/api/sessions/s-mid/history").json()) == 2
    assert a.delete("/api/sessions/s-mid", headers=CSRF).status_code == 200


def test_a_session_whose_turn_streams_on_this_worker_cannot_be_deleted(tmp_path: Path) -> None:
    async def hold(_: dict[str, Any]) -> str:
        await asyncio.Event().wait()  # only cancellation ends it
        return "never"

    model = ScriptedModel([exec_call('text("holding"); return await hold();'), "later"])
    path = tmp_path / "state.db"
    with worker(lambda: SQLiteStore(path), model, [Tool(name="hold", execute=hold)]) as a:
        login(a)
        with a.stream("POST", "/api/sessions/s/turns", json={"text": "go"}, headers=CSRF) as res:
            for line in res.iter_lines():
                if line == "event: cell_output":
                    break
            refused = a.delete("/api/sessions/s", headers=CSRF)
            a.post("/api/sessions/s/stop", headers=CSRF)
        assert refused.status_code == 409 and refused.json()["code"] == "turn_running"
        assert a.get("/api/sessions/s/history").json()[0]["content"][0]["text"] == "go"


def test_transcript_search_finds_messages_of_every_session_or_of_one(
    two: tuple[TestClient, TestClient],
) -> None:
    a, _ = two
    everywhere = a.get("/api/search?q=quokka").json()
    hits = sorted((h["sessionId"], h["index"], h["role"], h["title"]) for h in everywhere["hits"])
    assert hits == [
        ("s-mid", 0, "user", "Fix the flaky quokka test"),
        ("s-mid", 1, "assistant", "Fix the flaky quokka test"),
    ]
    assert all("quokka" in h["snippet"].lower() for h in everywhere["hits"])
    assert a.get("/api/search?q=quokka&session=s-old").json()["hits"] == []
    here = a.get("/api/search", params={"q": "draft", "session": "s-old"}).json()["hits"]
    assert [(h["sessionId"], h["index"]) for h in here] == [("s-old", 1)]


def test_a_search_hit_opens_its_session_at_the_message(two: tuple[TestClient, TestClient]) -> None:
    a, _ = two
    page = a.get("/?session=s-mid&at=1").text
    assert 'data-found="1"' in page
    transcript = page[page.index('id="transcript"') :]
    first = re.search(r'<article class="message message-(\w+)', transcript)
    assert first is not None and first.group(1) == "assistant"  # the hit, not the question
    assert "Load older messages" in transcript  # the messages before it are one click away


class _NoSearch:
    """A store with a session list and no transcript search (a third-party backend's shape):
    a memory store's methods, but `search_transcripts`."""

    def __init__(self) -> None:
        self._store = MemoryStore()

    def __getattr__(self, name: str) -> Any:
        if name == "search_transcripts":
            raise AttributeError(name)
        return getattr(self._store, name)


def _memory_worker(store: MemoryStore | _NoSearch) -> TestClient:
    agent = Agent(model=ScriptedModel([]), tools=[], store=cast(MemoryStore, store))
    return TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE)


def test_the_memory_store_answers_transcript_search_itself() -> None:
    store = MemoryStore()

    async def fill() -> None:
        await store.append_transcript(
            "s-mid", [user("Fix the flaky quokka test"), reply("The quokka fixture leaks.")]
        )
        await store.append_transcript("s-new", [user("Groceries for Sunday")])

    asyncio.run(fill())
    with _memory_worker(store) as a:
        login(a)
        found = a.get("/api/search?q=QUOKKA+fixture").json()
    assert found["truncated"] is False
    assert [(h["sessionId"], h["index"], h["role"], h["title"]) for h in found["hits"]] == [
        ("s-mid", 1, "assistant", "Fix the flaky quokka test")
    ]


def test_a_store_without_transcript_search_answers_search_with_404() -> None:
    with _memory_worker(_NoSearch()) as a:
        login(a)
        response = a.get("/api/search?q=quokka")
    assert (response.status_code, response.json()["error"]) == (
        404,
        "this agent's store does not search transcripts; give the agent a `clawcell.store` "
        "backend (memory, SQLite or PostgreSQL).",
    )


def _rows(new_store: Factory, writes: dict[tuple[str, str], str | None]) -> dict[str, bool]:
    """Write (or, for `None`, only look at) entries; which of them exist afterwards."""

    async def main() -> dict[str, bool]:
        async with new_store() as store:
            for (row, key), json in writes.items():
                if json is not None:
                    await store.put(row, key, StoredValue(json=json))
            return {f"{row}/{key}": await store.get(row, key) is not None for row, key in writes}

    return asyncio.run(main())


def _running_record(parent: str) -> str:
    record = SubagentRun(
        run_id="sub_1", session_id=f"{parent}/sub/1", parent=parent, profile="p", label=None,
        task="t", owner="gone-worker",
    ).record()  # fmt: skip
    return json.dumps(record)


def test_deleting_removes_the_sessions_derived_rows_and_its_entry_in_the_running_turns_index(
    new_store: Factory, two: tuple[TestClient, TestClient]
) -> None:
    a, _ = two
    stale = json.dumps({"turnId": "t1", "owner": "gone-worker"})
    rows: dict[tuple[str, str], str | None] = {
        ("s-mid\x1fplay", "run:1"): "{}",
        ("s-mid\x1fapprovals", "d1"): "{}",
        ("s-mid/sub/1", "k"): "1",  # a child session is a session of its own
        ("s-midnight", "k"): "1",
        ("\x1fclawcell\x1flive", "s-mid"): stale,
        ("\x1fclawcell\x1flive", "s-new"): stale,
        ("\x1fclawcell\x1fworkers", "s-mid"): "{}",  # keyed like it by chance: not its row
    }
    _rows(new_store, rows)
    assert a.delete("/api/sessions/s-mid", headers=CSRF).status_code == 200
    assert _rows(new_store, dict.fromkeys(rows)) == {
        "s-mid\x1fplay/run:1": False,
        "s-mid\x1fapprovals/d1": False,
        "s-mid/sub/1/k": True,
        "s-midnight/k": True,
        "\x1fclawcell\x1flive/s-mid": False,
        "\x1fclawcell\x1flive/s-new": True,
        "\x1fclawcell\x1fworkers/s-mid": True,
    }


def test_a_session_whose_sub_agent_run_runs_cannot_be_deleted(
    new_store: Factory, two: tuple[TestClient, TestClient]
) -> None:
    # Its heartbeat would write the session's derived rows again after the delete.
    a, _ = two
    _rows(new_store, {("s-mid\x1fsubagents", "sub_1"): _running_record("s-mid")})
    refused = a.delete("/api/sessions/s-mid", headers=CSRF)
    assert (refused.status_code, refused.json()) == (409, {
        "error": "session 's-mid' has sub-agent runs running: wait for them to end, then "
                 "delete the session.", "code": "subagents_running",
    })  # fmt: skip
    assert len(a.get("/api/sessions/s-mid/history").json()) == 2
