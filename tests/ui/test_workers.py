"""The Control UI on several workers sharing one store: what one worker is asked, the turn on
another hears (each worker here is its own app, event loop, agent and store object)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from starlette.testclient import TestClient

from clawcell import SQLiteStore, Tool
from clawcell.agent import (
    Agent,
    ModelRequest,
    ModelResponse,
    ModelText,
    ScriptedModel,
    exec_call,
)
from clawcell.store import StoredValue
from clawcell.ui import UiSettings, create_app
from clawcell.ui._chat._live_rows import INDEX as RUNNING_TURNS
from clawcell.ui._chat._live_rows import LiveRows, row_of
from clawcell.ui._security import Secrets
from tests.ui._client import BASE, TOKEN, sse

CSRF = {"x-csrf-token": Secrets(token=TOKEN).csrf}
HEARTBEATS = "\x1fclawcell\x1fworkers"


def _worker(path: Path, model: ScriptedModel, tools: list[Tool] | None = None) -> TestClient:
    agent = Agent(model=model, tools=tools or [], store=SQLiteStore(path))
    test_client = TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE)
    assert test_client.get(f"/?token={TOKEN}").status_code == 200
    return test_client


def test_stop_sent_to_another_worker_stops_the_turn_streaming_from_the_first(
    tmp_path: Path,
) -> None:
    async def hold(_: dict[str, Any]) -> str:
        await asyncio.Event().wait()  # only cancellation ends it
        return "never"

    model = ScriptedModel([exec_call('text("holding"); return await hold();'), "later"])
    path = tmp_path / "state.db"
    with (
        _worker(path, model, [Tool(name="hold", execute=hold)]) as a,
        _worker(path, ScriptedModel([])) as b,
    ):
        assert b.post("/api/sessions/s/stop", headers=CSRF).status_code == 409
        with a.stream("POST", "/api/sessions/s/turns", json={"text": "go"}, headers=CSRF) as res:
            lines = res.iter_lines()
            for line in lines:
                if line == "event: cell_output":
                    break
            stopped = b.post("/api/sessions/s/stop", headers=CSRF)
            rest = "\n".join(lines)
        assert stopped.json() == {"stopped": True}
        names = [name for name, _ in sse(rest.split("\n", 1)[1])]
        assert names[-2:] == ["turn_stopped", "done"]
        history = b.get("/api/sessions/s/history").json()
        assert history[-1]["stopReason"] == "aborted"
        assert b.post("/api/sessions/s/stop", headers=CSRF).status_code == 409


def test_a_configured_canvas_origin_is_the_one_every_worker_frames_and_admits(
    tmp_path: Path,
) -> None:
    origin = "https://canvas.example.com"
    csps: list[str] = []
    for port in (9001, 9002):  # two workers, each its own canvas listener port
        settings = UiSettings(
            token=TOKEN, canvas_port=port, canvas_origin=origin, allowed_hosts=("ui.example.com",)
        )
        app = create_app(Agent(model=ScriptedModel([])), settings)
        with TestClient(app, base_url="https://ui.example.com") as page:
            response = page.get(f"/?token={TOKEN}")
            assert response.status_code == 200
            csps.append(response.headers["content-security-policy"])
        canvas = TestClient(app.state.canvas_app, base_url=origin)
        assert canvas.get("/__openclaw__/canvas/unknown").status_code == 404  # host admitted
        other = TestClient(app.state.canvas_app, base_url="https://evil.example.com")
        assert other.get("/__openclaw__/canvas/unknown").status_code != 404
    assert csps[0] == csps[1] and f"frame-src {origin} " in csps[0]


class _PausingModel:
    """Streams `Hello `, waits (in a thread) until `go` is set, then ends with `Hello world`."""

    name = "pausing"
    tool_style: Literal["anthropic"] = "anthropic"

    def __init__(self) -> None:
        self.streamed, self.go = threading.Event(), threading.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelText | ModelResponse]:
        yield ModelText(text="Hello ")
        self.streamed.set()
        await asyncio.to_thread(self.go.wait)
        yield ModelText(text="world")
        yield ModelResponse(text="Hello world")


def test_a_page_loaded_from_another_worker_mid_reply_follows_the_turn_live_from_its_start(
    tmp_path: Path,
) -> None:
    model = _PausingModel()
    path = tmp_path / "state.db"
    agent = Agent(model=model, store=SQLiteStore(path))
    with (
        TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE) as a,
        _worker(path, ScriptedModel([])) as b,
    ):
        assert a.get(f"/?token={TOKEN}").status_code == 200
        with a.stream("POST", "/api/sessions/s/turns", json={"text": "hi"}, headers=CSRF) as res:
            lines = res.iter_lines()
            for line in lines:  # the test client runs the app as its body is read
                if line == "event: text_delta":
                    break
            assert model.streamed.wait(60)
            during = b.get("/?session=s").text  # B names the turn A runs; its page follows it
            match = re.search(r'data-live-turn="(t[^"]+)"', during)
            assert match is not None, during
            seen: list[str] = []
            with b.stream("GET", f"/api/sessions/s/live?turn={match.group(1)}") as live:
                for line in live.iter_lines():
                    seen.append(line)
                    if "Hello" in line:  # what A streamed so far, relayed through the store
                        model.go.set()  # now the rest, live
                    if line.startswith("data: ") and '"turn_end"' in line:
                        break
            rest = "\n".join(lines)
        after = b.get("/?session=s").text
    relayed = "\n".join(seen)
    assert relayed.index("Hello") < relayed.index("world") < relayed.index('"turn_end"')
    assert "event: done" in rest and "Hello world" in after


def _dead_workers_turn(path: Path) -> None:
    """Leave in the store what a worker killed mid-turn leaves: the session's running turn and
    its entry in the index of running turns, and no heartbeat."""

    async def main() -> None:
        async with SQLiteStore(path) as store:
            rows = LiveRows(store, store, "dead-worker", 30.0)
            record = {"seq": 1, "owner": "dead-worker", "state": "running", "count": 0}
            await rows.patch("s", {"last": 1, "turns": {"t1-dead": record | {"chunks": 0}}})
            listed = {"turnId": "t1-dead", "owner": "dead-worker"}
            await store.put(RUNNING_TURNS, "s", StoredValue(json=json.dumps(listed)))

    asyncio.run(main())


def _turn_state_once_ended(path: Path) -> str:
    """The dead worker's turn's state once it is no longer `running` (ceiling: 60 s)."""

    async def main() -> str:
        async with SQLiteStore(path) as store, asyncio.timeout(60):
            while True:
                run = await store.load_run(row_of("s"), "live")
                assert run is not None
                state = str(run.meta["turns"]["t1-dead"]["state"])
                if state != "running":
                    return state
                await store.wait_for_change(row_of("s"), "live", timeout=5, since=run.revision)

    return asyncio.run(main())


def _items(path: Path, row: str) -> dict[str, StoredValue]:
    async def main() -> dict[str, StoredValue]:
        async with SQLiteStore(path) as store:
            return await store.items(row)

    return asyncio.run(main())


def test_a_worker_that_ran_no_turn_ends_a_dead_workers_turn_and_stops_sweeping_as_it_stops(
    tmp_path: Path,
) -> None:
    # The sweep starts with the app, not with the worker's first turn: a worker that only
    # serves pages (or none yet) still ends the turns of workers that died.
    path = tmp_path / "state.db"
    _dead_workers_turn(path)
    with _worker(path, ScriptedModel([])):
        state = _turn_state_once_ended(path)
        assert len(_items(path, HEARTBEATS)) == 1  # this worker's, renewed by its sweep
    assert state == "interrupted"
    assert _items(path, RUNNING_TURNS) == {}
    assert _items(path, HEARTBEATS) == {}  # stopped with the app: its heartbeat withdrawn
