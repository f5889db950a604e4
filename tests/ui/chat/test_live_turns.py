"""Turns that belong to the server: they run without a page, pages follow them live with the
backlog, Stop names its turn, and messages sent meanwhile form a visible queue."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

import clawcell.ui._chat._turns as turns_module
from clawcell.ui import UiSettings, create_app
from clawcell.ui._chat._turns import RETAIN_S, LiveTurn, LocalTurns
from tests.ui._client import BASE, TOKEN, sse
from tests.ui._fakes import Documents, Event, FakeAgent, Turn, reply_event, reply_turn


def _held(gate: asyncio.Event, started: asyncio.Event, text: str = "held reply") -> Turn:
    """A turn with a cell that emits output, then waits for `gate` (or a Stop)."""

    async def turn(_: str) -> AsyncIterator[Event]:
        yield Event(type="turn_started")
        yield Event(type="cell_started", fields={"callId": "c1", "code": "hold()"})
        yield Event(
            type="cell_output", fields={"callId": "c1", "item": {"type": "text", "text": "so far"}}
        )
        started.set()
        await gate.wait()
        yield reply_event(text)
        yield Event(type="turn_finished")

    return turn


Body = Callable[[httpx.AsyncClient, FakeAgent], Awaitable[None]]


def _run(agent: FakeAgent, body: Body) -> None:
    async def main() -> None:
        app = create_app(agent, UiSettings(token=TOKEN, canvas_port=8788), documents=Documents())
        transport = httpx.ASGITransport(app=app)
        http = httpx.AsyncClient(transport=transport, base_url=BASE, follow_redirects=True)
        async with http:
            page = await http.get(f"/?token={TOKEN}")
            match = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
            assert match is not None
            http.headers["x-csrf-token"] = match.group(1)
            http.headers["origin"] = BASE
            await body(http, agent)

    asyncio.run(main())


def _names(text: str) -> list[str]:
    return [name for name, _ in sse(text)]


def test_a_turn_runs_to_its_end_with_no_page_attached_and_a_later_page_gets_all_of_it() -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def body(http: httpx.AsyncClient, agent: FakeAgent) -> None:
        started_turn = await http.post("/api/sessions/s/turns?follow=0", json={"text": "go"})
        assert started_turn.status_code == 202
        turn_id = started_turn.json()["turnId"]
        assert started_turn.headers["x-turn-id"] == turn_id
        await started.wait()
        gate.set()  # nobody follows the turn: it still ends, and is recorded
        live = await http.get(f"/api/sessions/s/live?turn={turn_id}&until=idle")
        messages = sse(live.text.replace(f"id: {turn_id}/", "x-id: "))
        names = [name for name, _ in messages]
        assert names[:2] == ["live", "live"]  # the queue (empty), then the turn begun
        assert messages[1][1]["event"] == {"type": "turn", "turnId": turn_id,
                                           "state": messages[1][1]["event"]["state"]}  # fmt: skip
        assert names[2:] == ["user", "turn_started", "cell_started", "cell_output", "reply",
                             "turn_finished", "done", "live"]  # fmt: skip
        assert messages[-1][1]["event"] == {"type": "turn_end", "turnId": turn_id,
                                            "state": "finished"}  # fmt: skip
        assert agent.transcripts["s"][-1]["role"] == "assistant"

    _run(FakeAgent([_held(gate, started)]), body)


def test_each_live_message_carries_its_turn_and_place_and_a_reconnect_resumes_after_it() -> None:
    async def body(http: httpx.AsyncClient, _: FakeAgent) -> None:
        first = await http.post("/api/sessions/s/turns", json={"text": "hi"})
        turn_id = first.headers["x-turn-id"]
        ids = re.findall(r"^id: (.+)$", (await http.get(
            f"/api/sessions/s/live?turn={turn_id}&until=idle")).text, re.M)  # fmt: skip
        assert ids == [f"{turn_id}/{n}" for n in range(1, len(_names(first.text)) + 1)]
        resumed = await http.get(f"/api/sessions/s/live?turn={turn_id}&from=4&until=idle")
        assert re.findall(r"^id: (.+)$", resumed.text, re.M) == ids[4:]

    _run(FakeAgent([reply_turn("hello there")]), body)


def test_stop_names_its_turn_a_second_stop_is_no_error_and_the_queued_message_runs_next() -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def body(http: httpx.AsyncClient, agent: FakeAgent) -> None:
        turn_id = (await http.post("/api/sessions/s/turns?follow=0", json={"text": "one"})).json()[
            "turnId"
        ]
        await started.wait()
        queued = await http.post("/api/sessions/s/turns?follow=0", json={"text": "two"})
        assert queued.status_code == 202  # not a second concurrent turn: it waits, visibly
        assert queued.json() == {"queued": {"id": queued.json()["queued"]["id"], "text": "two"},
                                 "turnId": turn_id}  # fmt: skip
        assert agent.received == [("s", "one")]
        assert (await http.get("/api/sessions/s/queue")).json()["queue"][0]["text"] == "two"
        stopped = await http.post(f"/api/sessions/s/turns/{turn_id}/stop")
        assert stopped.json() == {"stopped": True, "turnId": turn_id, "state": "running"}
        live = (await http.get(f"/api/sessions/s/live?turn={turn_id}&until=idle")).text
        assert "turn_stopped" in live and '"state": "stopped"' in live
        assert "answer two" in live  # the queued message became the next turn, after the stop
        again = await http.post(f"/api/sessions/s/turns/{turn_id}/stop")
        assert again.status_code == 200
        assert again.json() == {"stopped": False, "turnId": turn_id, "state": "stopped"}
        assert agent.received == [("s", "one"), ("s", "two")]
        assert (await http.get("/api/sessions/s/queue")).json() == {"queue": []}
        unknown = await http.post("/api/sessions/s/turns/t0-none/stop")
        assert unknown.status_code == 404
        assert unknown.json()["error"] == (
            "no turn 't0-none' in session 's' (it ended long ago, or never ran here): "
            "reload the page."
        )

    _run(FakeAgent([_held(gate, started), reply_turn("answer two")]), body)


def test_a_queued_message_can_be_edited_or_dropped_until_it_becomes_a_turn() -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def body(http: httpx.AsyncClient, agent: FakeAgent) -> None:
        turn_id = (await http.post("/api/sessions/s/turns?follow=0", json={"text": "one"})).json()[
            "turnId"
        ]
        await started.wait()
        a = (await http.post("/api/sessions/s/turns", json={"text": "draft a"})).json()["queued"]
        b = (await http.post("/api/sessions/s/turns", json={"text": "b"})).json()["queued"]
        edited = await http.patch(f"/api/sessions/s/queue/{a['id']}", json={"text": "final a"})
        assert edited.json() == {"queued": {"id": a["id"], "text": "final a"}}
        assert (await http.delete(f"/api/sessions/s/queue/{b['id']}")).json() == {"dropped": True}
        gone = await http.delete(f"/api/sessions/s/queue/{b['id']}")
        assert gone.status_code == 404 and gone.json()["code"] == "not_queued"
        bad = await http.patch(f"/api/sessions/s/queue/{a['id']}", json={"text": ""})
        assert bad.status_code == 400
        gate.set()
        await http.get(f"/api/sessions/s/live?turn={turn_id}&until=idle")
        assert agent.received == [("s", "one"), ("s", "final a")]
        late = await http.patch(f"/api/sessions/s/queue/{a['id']}", json={"text": "too late"})
        assert late.status_code == 404

    _run(FakeAgent([_held(gate, started), reply_turn("ok")]), body)


def test_a_page_drawn_while_a_turn_runs_names_it_and_leaves_its_messages_to_the_backlog() -> None:
    gate, started = asyncio.Event(), asyncio.Event()
    earlier = {"role": "assistant", "content": [{"type": "text", "text": "earlier"}]}
    history = {"s": [{"role": "user", "content": "earlier question"}, earlier]}

    async def body(http: httpx.AsyncClient, _: FakeAgent) -> None:
        turn_id = (await http.post("/api/sessions/s/turns?follow=0", json={"text": "NOW"})).json()[
            "turnId"
        ]
        await started.wait()
        (await http.post("/api/sessions/s/turns", json={"text": "queued <b>x</b>"})).json()
        page = (await http.get("/?session=s")).text
        assert f'data-live-turn="{turn_id}"' in page
        assert "earlier question" in page and "NOW" not in page  # the backlog draws it
        assert '<p class="queued-text">queued &lt;b&gt;x&lt;/b&gt;</p>' in page
        gate.set()
        await http.get(f"/api/sessions/s/live?turn={turn_id}&until=idle")
        page = (await http.get("/?session=s")).text
        assert 'data-live-turn=""' in page and "NOW" in page

    _run(FakeAgent([_held(gate, started), reply_turn("ok")], history=history), body)


def test_a_page_following_a_turn_no_longer_kept_is_told_to_reload() -> None:
    async def body(http: httpx.AsyncClient, _: FakeAgent) -> None:
        live = await http.get("/api/sessions/s/live?turn=t9-gone&until=idle")
        assert sse(live.text) == [("live", {"event": {"type": "gone", "turnId": "t9-gone"},
                                            "ops": []})]  # fmt: skip
        bad = await http.get("/api/sessions/s/live?from=x")
        assert bad.status_code == 400

    _run(FakeAgent(), body)


def test_a_decision_while_a_turn_runs_is_refused_with_the_turn_named() -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def body(http: httpx.AsyncClient, agent: FakeAgent) -> None:
        agent.pending["a1"] = "r1"
        turn_id = (await http.post("/api/sessions/s/turns?follow=0", json={"text": "x"})).json()[
            "turnId"
        ]
        await started.wait()
        refused = await http.post("/api/sessions/s/runs/r1/approvals/a1", json={"decision": "deny"})
        assert refused.status_code == 409
        assert refused.json()["error"] == (
            f"turn {turn_id!r} is running in session 's': decide once it ended (or stop it)."
        )
        gate.set()

    _run(FakeAgent([_held(gate, started)]), body)


def test_a_follower_gets_the_backlog_then_live_messages_then_the_next_turn() -> None:
    async def main() -> None:
        later: list[str] = []
        turns = LocalTurns(lambda session, text: later.append(text))
        release = asyncio.Event()

        async def produce(turn: LiveTurn) -> AsyncIterator[str]:
            yield "a"
            await release.wait()
            yield "b"

        first = await turns.start("s", produce)
        await asyncio.sleep(0)  # the turn's task yields "a" and waits
        seen: list[tuple[str, Any]] = []
        follow = turns.follow("s", None, 0, until_idle=True)
        queues: list[list[str]] = []
        async for kind, data in follow:
            seen.append((kind, data.get("sse", data.get("turnId"))))
            if kind == "queue":
                queues.append([message["text"] for message in data["queue"]])
            if data.get("sse") == "a":
                assert await turns.enqueue("s", "next") is not None
                release.set()
        # Every change of the queue is told: "next" queued, then taken as the next turn
        # (when the first turn ended, before its last message reached this follower).
        assert seen == [("queue", None), ("turn", first.turn_id), ("message", "a"),
                        ("queue", None), ("queue", None), ("message", "b"),
                        ("turn_end", first.turn_id)]  # fmt: skip
        assert queues == [[], ["next"], []]
        assert later == ["next"] and await turns.queue("s") == ()

    asyncio.run(main())


def test_finished_turns_are_kept_for_a_while_then_named_gone() -> None:
    async def main() -> None:
        now = [0.0]
        turns = LocalTurns(lambda session, text: None, clock=lambda: now[0])

        async def produce(turn: LiveTurn) -> AsyncIterator[str]:
            yield "x"

        old = await turns.start("s", produce)
        while old.state == "running":
            await asyncio.sleep(0)
        now[0] = RETAIN_S + 1
        await turns.start("s", produce)  # starting a turn evicts what is past its time
        assert [kind async for kind, _ in turns.follow("s", old.turn_id, 0)] == ["gone"]

    asyncio.run(main())


def test_closing_the_registry_stops_its_turns_and_ends_every_live_stream() -> None:
    async def main() -> None:
        turns = LocalTurns(lambda session, text: None)
        entered = asyncio.Event()

        async def produce(turn: LiveTurn) -> AsyncIterator[str]:
            yield "a"
            entered.set()
            await turn.stop.wait()  # a turn honours its Stop
            yield "stopped"

        running = await turns.start("s", produce)

        async def idle_follower() -> list[str]:
            return [kind async for kind, _ in turns.follow("idle", None, 0)]

        follower = asyncio.create_task(idle_follower())
        await entered.wait()
        await turns.close()  # what `serve_ui` does as it stops: no stream outlives the server
        assert await follower == ["queue"]
        assert running.state == "stopped" and running.messages == ["a", "stopped"]

    asyncio.run(main())


def test_a_turn_that_ends_while_its_follower_is_busy_ends_the_follow_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The turn ends (and signals it) while the follower is suspended on a `yield`: that
    # signal must not be lost, or the follower sleeps until the next keepalive (15 s; an
    # hour here, so a lost one shows as the `wait_for` below giving up).
    monkeypatch.setattr(turns_module, "KEEPALIVE_S", 3600.0)

    async def scenario() -> list[str]:
        turns = LocalTurns(lambda session, text: None)

        async def producer(turn: LiveTurn) -> AsyncIterator[str]:
            yield "event: one\ndata: {}\n\n"
            await asyncio.sleep(0)  # the follower takes "one" from here
            yield "event: two\ndata: {}\n\n"

        turn = await turns.start("s", producer)
        kinds: list[str] = []
        async for kind, _ in turns.follow("s", turn.turn_id, 0):
            kinds.append(kind)
            if kind == "message" and len(kinds) == 3:
                for _ in range(5):  # the follower is busy: the producer ends meanwhile
                    await asyncio.sleep(0)
            if kind == "turn_end":
                break
        await turns.close()
        return kinds

    kinds = asyncio.run(asyncio.wait_for(scenario(), timeout=120))
    assert kinds == ["queue", "turn", "message", "message", "turn_end"]
