"""Every session-id route takes every id the agent accepts: `/`, `%`, `?`, `#`, dots, quotes,
markup, bidi controls and any script travel percent-encoded as one path segment."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

import pytest
from markupsafe import escape

from clawcell.agent import Agent, ScriptedModel
from clawcell.store import MemoryStore, StoredValue
from clawcell.ui import UiSettings, create_app
from clawcell.ui._sessions._paths import SessionSegments
from tests.ui._client import BASE, TOKEN, client, csrf, sse
from tests.ui._fakes import FakeAgent, reply_turn

HOSTILE = [
    "s1/sub/1",
    "a/../b",
    "../etc",
    "/leading",
    "trailing/",
    "a//b",
    "%2F",
    "%",
    "x?y#z&w=1",
    "a b",
    "<script>alert('x')</script>",
    "\"'`",
    "a\\b",
    "\u202eevil",
    "ü 日本 😀",
    "x/history",  # looks like another route's tail
    "s/runs/r/approvals/a",
    "v/mcp-apps/ma_x",
    "...",
    "x" * 1024,
]


def _path(session: str, tail: str) -> str:
    return f"/api/sessions/{quote(session, safe='')}/{tail}"


@pytest.mark.parametrize("session", HOSTILE)
def test_every_session_route_takes_the_id_as_it_is(session: str) -> None:
    agent = FakeAgent([reply_turn("hello back")], history={session: []})
    agent.pending["ap_1"] = "cm_1"
    agent.turns.append(reply_turn("decided"))
    test_client = client(agent)
    headers = {"x-csrf-token": csrf(test_client)}
    page = test_client.get("/", params={"session": session})
    assert page.status_code == 200
    assert f'data-session="{escape(session)}"' in page.text
    child = session == "s1/sub/1"
    turn = test_client.post(_path(session, "turns"), json={"text": "hi"}, headers=headers)
    assert turn.status_code == (400 if child else 200)  # a sub-agent's session is read-only
    if not child:
        assert sse(turn.text)[-1][0] == "done" and agent.received == [(session, "hi")]
    history = test_client.get(_path(session, "history")).json()
    assert [m["role"] for m in history] == ([] if child else ["user", "assistant"])
    older = test_client.get(_path(session, "messages?before=1"))
    assert older.status_code == 200 and older.json()["before"] == 0
    stop = test_client.post(_path(session, "stop"), headers=headers)
    assert stop.status_code == 409
    assert stop.json()["error"] == f"no turn is running in session {session!r}."
    decide = test_client.post(
        _path(session, "runs/cm_1/approvals/ap_1"), json={"decision": "approve"}, headers=headers
    )
    assert decide.status_code == 200
    assert [d["sessionId"] for d in agent.decisions] == [session]
    view = test_client.get(_path(session, "mcp-apps/ma_none"))
    assert view.status_code == 404
    assert view.json()["error"] == f"no MCP App view 'ma_none' in session {session!r:.80}."


@pytest.mark.parametrize("session", HOSTILE[:6])
def test_the_playground_decides_in_the_session_it_names(session: str) -> None:
    agent = FakeAgent()
    test_client = client(agent)
    page = test_client.get("/playground", params={"session": session})
    assert page.status_code == 200 and f'data-session="{escape(session)}"' in page.text
    url = f"/api/playground/{quote(session, safe='')}/runs/cm_1/approvals/ap_1"
    decided = test_client.post(
        url, json={"decision": "approve"}, headers={"x-csrf-token": csrf(test_client)}
    )
    assert decided.status_code == 409  # the session's runner looked for the approval
    assert "ap_1" in decided.json()["error"] and agent.modes.keys() == {session}


@pytest.mark.parametrize(
    ("segment", "error"),
    [
        ("a%00b", "session id 'a\\x00b' is not allowed: it holds the control character '\\x00'."),
        ("%ff", "session id '\ufffd' is not allowed: it is not valid UTF-8."),
        ("x" * 1025, f"session id {'x' * 1025!r:.80} is not allowed: a session id has at most "
                     "1024 characters."),
    ],
    ids=["nul", "latin1", "too-long"],
)  # fmt: skip
def test_an_id_no_session_may_have_is_refused_on_every_route(segment: str, error: str) -> None:
    agent = FakeAgent()
    test_client = client(agent)
    headers = {"x-csrf-token": csrf(test_client)}
    base = f"/api/sessions/{segment}"
    answers = [
        test_client.post(f"{base}/turns", json={"text": "hi"}, headers=headers),
        test_client.get(f"{base}/history"),
        test_client.get(f"{base}/messages?before=1"),
        test_client.post(f"{base}/stop", headers=headers),
        test_client.post(f"{base}/runs/r/approvals/a", json={"decision": "deny"}, headers=headers),
    ]
    assert [(a.status_code, a.json()["error"]) for a in answers] == [(400, error)] * 5
    assert agent.received == [] and agent.decisions == []


def _entries(count: int, stamp: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "timestamp": stamp + i,
         "content": [{"type": "text", "text": f"child message {i}."}]}
        for i in range(count)
    ]  # fmt: skip


def test_a_sub_agent_session_loads_its_older_messages() -> None:
    store = MemoryStore()
    agent = Agent(model=ScriptedModel([]), store=store)
    from starlette.testclient import TestClient

    with TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE) as test_client:
        assert test_client.get(f"/?token={TOKEN}").status_code == 200
        assert test_client.portal is not None
        test_client.portal.call(store.append_transcript, "chat/sub/1", _entries(150, 1000))
        page = test_client.get("/?session=chat%2Fsub%2F1").text
        assert 'data-before="50"' in page and "child message 149." in page
        older = test_client.get("/api/sessions/chat%2Fsub%2F1/messages?before=50")
    assert older.status_code == 200
    assert older.json()["before"] == 0 and "child message 0." in older.json()["html"]


def _run(run_id: str, started_ms: int) -> StoredValue:
    import json

    record = {"runId": run_id, "sessionId": f"chat/sub/{run_id[-1]}", "parent": "chat",
              "profile": "researcher", "label": run_id, "task": "t", "startedAt": started_ms / 1000,
              "status": "completed", "reply": "r"}  # fmt: skip
    return StoredValue(json=json.dumps(record))


def test_an_older_page_shows_the_sub_agent_rows_of_its_own_turns() -> None:
    store = MemoryStore()
    agent = Agent(model=ScriptedModel([]), store=store)
    from starlette.testclient import TestClient

    with TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE) as test_client:
        assert test_client.get(f"/?token={TOKEN}").status_code == 200
        assert test_client.portal is not None
        test_client.portal.call(store.append_transcript, "chat", _entries(150, 1000))
        for run_id, started in (("run_old1", 1010), ("run_new2", 1120)):
            test_client.portal.call(store.put, "chat\x1fsubagents", run_id, _run(run_id, started))
        page = test_client.get("/?session=chat").text
        older = test_client.get("/api/sessions/chat/messages?before=50").json()["html"]
    assert "run_new2" in page and "run_old1" not in page
    assert "run_old1" in older and "run_new2" not in older


@pytest.mark.parametrize(
    ("scope", "path"),
    [
        ({"raw_path": b"/api/sessions/a%2Fsub%2F1/messages",
          "path": "/api/sessions/a/sub/1/messages"}, "/api/sessions/a%2Fsub%2F1/messages"),
        ({"raw_path": b"/ui/api/sessions/a%2fb/stop", "path": "/api/sessions/a/b/stop",
          "root_path": "/ui"}, "/api/sessions/a%2Fb/stop"),
        ({"path": "/api/sessions/a b/turns"}, "/api/sessions/a%20b/turns"),  # no raw_path
        ({"raw_path": b"/api/playground/exec", "path": "/api/playground/exec"},
         "/api/playground/exec"),
        ({"raw_path": b"/static/app.css", "path": "/static/app.css"}, "/static/app.css"),
    ],
    ids=["raw", "under-a-root-path", "without-raw-path", "playground-tool", "other-route"],
)  # fmt: skip
def test_the_session_segment_reaches_the_router_encoded(scope: dict[str, Any], path: str) -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["path"])

    asyncio.run(SessionSegments(app)({"type": "http", **scope}, _nothing, _nothing))
    assert seen == [path]


async def _nothing(*_: Any) -> Any:
    return None
