"""Sub-agent runs in the chat view: a row in the parent's turn that opens the child session."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from starlette.testclient import TestClient

from clawcell.agent import (
    Agent,
    ModelRequest,
    ScriptedModel,
    SubagentProfile,
    exec_call,
    subagent_tools,
)
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, create_app
from clawcell.ui._media import MediaRoots
from clawcell.ui._render._messages import Renderer
from clawcell.ui._security import Secrets
from clawcell.ui._stream._events import TurnStream, stream_turn
from clawcell.ui._subagent_rows import RunWatch, with_subagent_runs
from tests._swallowing import CancelSwallowingStore, ends_when_its_loop_closes
from tests.conftest import run
from tests.ui._client import BASE, TOKEN, sse
from tests.ui._gated import CHILD_REPLY, gated_agent

CSRF = {"x-csrf-token": Secrets(token=TOKEN).csrf}
FAN_OUT = """
const hs = await Promise.all(["tides", "comets"].map((t) =>
  sessions_spawn({profile: "researcher", task: `one line on ${t}`, label: t})));
return (await agents_wait({runIds: hs.map((h) => h.runId)})).runs.map((r) => r.reply);
"""


def _agent() -> Agent:
    def answer(request: ModelRequest) -> str:
        return "Noted: " + request.messages[0]["content"][0]["text"]

    researcher = SubagentProfile(
        name="researcher", model=ScriptedModel([answer, answer], name="small")
    )
    agent = Agent(model=ScriptedModel([exec_call(FAN_OUT), "Both in."]), store=MemoryStore())
    subagent_tools(agent, [researcher])
    return agent


def _client(agent: Agent) -> TestClient:
    test_client = TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE)
    assert test_client.get(f"/?token={TOKEN}").status_code == 200
    return test_client


def test_the_parent_turn_shows_a_collapsed_row_per_run_linking_to_its_session() -> None:
    with _client(_agent()) as test_client:
        turn = test_client.post("/api/sessions/s1/turns", json={"text": "go"}, headers=CSRF)
        assert turn.status_code == 200
        page = test_client.get("/?session=s1").text
        child = test_client.get("/?session=s1%2Fsub%2F2")
    rows = re.findall(r'<details class="subagent-run" id="subagent-(sub_[0-9a-f]+)" '
                      r'data-session="([^"]+)">', page)  # fmt: skip
    assert [session for _, session in rows] == ["s1/sub/1", "s1/sub/2"]
    assert '<a class="subagent-open" href="/?session=s1%2Fsub%2F1">s1/sub/1 →</a>' in page
    assert page.count('<span class="status status-completed">completed</span>') == 2
    assert '<span class="subagent-name">comets</span>' in page
    assert "Noted: one line on comets" in page
    # in the turn's work group, after its cell: counted apart from the cells
    work = page[page.index('<details class="work"') :]
    assert "1 cell · 2 sub-agents</summary>" in work
    assert work.index('class="cell"') < work.index('class="subagent-run"')
    # the child session opens read-only, with the way back to its parent
    assert child.status_code == 200
    assert 'It was spawned from <a href="/?session=s1">s1</a>' in child.text
    assert '<form id="composer" class="composer" hidden>' in child.text
    assert "Noted: one line on comets" in child.text


def test_only_a_sub_sessions_id_opens_read_only_and_refuses_turns() -> None:
    with _client(_agent()) as test_client:
        for plain in ("s1%2Fother%2F1", "s1%2Fsub%2Fx"):  # ordinary ids that hold `/`
            page = test_client.get(f"/?session={plain}")
            assert page.status_code == 200 and 'class="child-session"' not in page.text
        child = test_client.get("/?session=s1%2Fsub%2F1")
        assert 'class="child-session"' in child.text
        turn = test_client.post("/api/sessions/s1%2Fsub%2F1/turns", json={"text": "x"},
                                headers=CSRF)  # fmt: skip
    assert turn.status_code == 400
    assert turn.json()["error"] == (
        "session 's1/sub/1' is a sub-agent's session (`<parent>/sub/<n>`): it is read-only "
        "here; its runs take their tasks from the parent's cells."
    )


def _result(stamp: int) -> dict[str, Any]:
    return {"role": "toolResult", "toolName": "exec", "timestamp": stamp, "content": []}


def test_runs_go_after_the_cell_that_ended_after_they_started() -> None:
    page = [{"role": "user", "timestamp": 1000}, _result(2000), _result(5000)]
    runs = [
        {"runId": "old", "startedAt": 0.5},  # before the page: an older page's
        {"runId": "first", "startedAt": 1.5},
        {"runId": "second", "startedAt": 3.0},
        {"runId": "live", "startedAt": 9.0},  # its cell has not ended yet
    ]
    placed = with_subagent_runs(page, runs)
    order = [m.get("run", {}).get("runId") or m["role"] for m in placed]
    assert order == ["user", "toolResult", "first", "toolResult", "second", "live"]


def _stream() -> TurnStream:
    renderer = Renderer(
        settings=UiSettings(token=TOKEN), media=MediaRoots([]), canvas_host_url=None
    )
    return TurnStream(renderer=renderer, container="transcript")


def test_a_streaming_turn_shows_its_sub_agent_row_as_the_run_starts_and_ends() -> None:
    async def main() -> list[tuple[str, dict[str, Any]]]:
        gate = asyncio.Event()
        async with gated_agent(gate) as agent:
            stream = _stream()
            messages: list[tuple[str, dict[str, Any]]] = []
            turn = stream_turn(agent.run("s1", "go"), stream, watch=RunWatch(agent, "s1"))
            async with asyncio.timeout(60):
                async for text in turn:
                    ((name, data),) = sse(text)
                    messages.append((name, data))
                    if name == "subagent_run":
                        gate.set()  # the row is on its way while the run still waits
        return messages

    messages = run(main())
    names = [name for name, _ in messages]
    first, last = names.index("subagent_run"), len(names) - 1 - names[::-1].index("subagent_run")
    # the row comes while the cell waits; its end before the cell's, as `agents_wait` returns
    assert names.index("cell_started") < first < last < names.index("cell_finished")
    started, ended = messages[first][1], messages[last][1]
    run_id = started["event"]["run"]["runId"]
    assert started["event"]["run"] | {"startedAt": 0} == {
        "runId": run_id, "sessionId": "s1/sub/1", "profile": "slow", "label": "gated",
        "status": "running", "reply": None, "truncated": False, "error": None, "usage": None,
        "task": "Wait for the gate.", "startedAt": 0, "interrupted": False,
    }  # fmt: skip
    ((op,),) = [started["ops"]]
    assert op["op"] == "append" and op["target"].endswith("-cells")  # into the turn's work
    assert f'id="subagent-{run_id}"' in op["html"] and "status-running" in op["html"]
    (redraw,) = ended["ops"]
    assert (redraw["op"], redraw["target"]) == ("replace", f"subagent-{run_id}")
    assert "status-completed" in redraw["html"] and CHILD_REPLY in redraw["html"]
    assert ended["event"]["run"]["status"] == "completed"
    folds = [op for _, data in messages for op in data["ops"] if op["op"] == "fold"]
    (fold,) = [op for op in folds if op["target"].endswith("-summary")]
    assert fold["text"].endswith("· 1 cell · 1 sub-agent")


def test_a_run_already_on_the_page_is_redrawn_not_added_again() -> None:
    stream = _stream()
    stream.runs.add("sub_a")
    run_data = {"runId": "sub_a", "sessionId": "s/sub/1", "profile": "p", "status": "failed",
                "error": "boom", "task": "t"}  # fmt: skip
    (op,) = stream.ops({"type": "subagent_run", "run": run_data})
    assert (op.get("op"), op.get("target")) == ("replace", "subagent-sub_a")
    assert "boom" in op.get("html", "")
    (added,) = stream.ops({"type": "subagent_run", "run": {**run_data, "runId": "sub_b"}})
    assert (added.get("op"), added.get("target")) == ("append", "transcript")  # no work yet


def test_a_change_the_poll_saw_but_the_page_never_got_is_sent_at_the_end() -> None:
    # A turn that ends closes the polling side with its last change still queued: the end of
    # the turn must send it (it used to count as seen, and the row stayed "running").
    async def main() -> tuple[str, list[str]]:
        gate = asyncio.Event()
        async with gated_agent(gate) as agent:
            watch = RunWatch(agent, "s1")
            await watch.start()

            async def drain() -> None:
                async for _ in agent.run("s1", "go"):
                    pass

            gate.set()
            await asyncio.wait_for(drain(), 60)
            polled = watch.events(interval=0.01)
            first = await asyncio.wait_for(anext(polled), 60)  # polled, then dropped
            await polled.aclose()
            return first["run"]["status"], [e["run"]["status"] for e in await watch.changes()]

    polled, at_end = run(main())
    assert polled == "completed"
    assert at_end == ["completed"]


def test_a_run_watch_ends_when_its_loop_closes_though_a_store_read_swallowed_the_cancel() -> None:
    # The loop closing around a page's watch cancels it once and waits for it; the read of the
    # runs swallowed that, and the old watch polled on forever.
    class Holder:
        def __init__(self, store: MemoryStore) -> None:
            self.store = store

    async def main() -> None:
        store = CancelSwallowingStore("items")
        watch = RunWatch(Holder(store), "s")

        async def follow() -> None:
            async for _ in watch.events(interval=0.001):
                pass

        asyncio.get_running_loop().create_task(follow())
        await store.entered.wait()

    assert ends_when_its_loop_closes(main)
