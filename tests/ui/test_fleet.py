"""Issue 37 through a whole fleet (`tests/ui/_fleet.py`): three `clawcell serve` and two
`clawcell mcp serve --http` workers on one PostgreSQL database behind round-robin proxies,
one scripted OpenAI-compatible model server. Each test sends its requests the way a page or
an MCP client would, through the proxy, or to a named worker when the point is that it is
not the one running the turn."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Generator, Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import mcp
from tests.mcp_server._serve import envelope_of
from tests.ui._fleet import MCP_TOKEN, Fleet, events, start_fleet
from tests.ui._fleet_net import WORKER_HEADER

pytestmark = pytest.mark.xdist_group("fleet")


@pytest.fixture(scope="module")
def fleet(postgres_dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Generator[Fleet]:
    with start_fleet(postgres_dsn, tmp_path_factory.mktemp("fleet")) as running:
        yield running


def _turn(fleet: Fleet, session: str, text: str, base: str | None = None) -> tuple[str, list[Any]]:
    """One turn's events, and the worker the proxy gave it to (`""` when sent directly)."""
    with (
        fleet.client(base) as client,
        client.stream("POST", f"/api/sessions/{session}/turns", json={"text": text}) as response,
    ):
        assert response.status_code == 200, response.read()
        return response.headers.get(WORKER_HEADER, ""), list(events(response.iter_lines()))


def _reply(turn: list[tuple[str, dict[str, Any]]]) -> str:
    texts = [str(data["event"].get("content")) for name, data in turn if name == "reply"]
    assert texts, turn
    return texts[-1]


def test_the_model_sees_every_earlier_turn_whichever_worker_ran_it(fleet: Fleet) -> None:
    served = [_turn(fleet, "context", text) for text in ("first", "second", "third")]
    assert len({worker for worker, _ in served}) == 3  # round robin: three workers
    assert "saw: first | second | third" in _reply(served[-1][1])


def _pending(turn: list[tuple[str, dict[str, Any]]]) -> tuple[str, str]:
    """The run id and approval id of the approval a turn ended waiting for."""
    found: list[tuple[str, str]] = []

    def visit(value: object) -> None:
        if isinstance(value, dict):
            data: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
            if isinstance(data.get("pendingApprovals"), list) and data["pendingApprovals"]:
                found.append((str(data["runId"]), str(data["pendingApprovals"][0]["id"])))
            for item in data.values():
                visit(item)
        elif isinstance(value, list):
            items: list[object] = value  # pyright: ignore[reportUnknownVariableType]
            for item in items:
                visit(item)

    visit([data for _, data in turn])
    assert found, turn
    return found[-1]


def _decide(
    fleet: Fleet, base: str, session: str, pending: tuple[str, str], **body: Any
) -> tuple[int, list[tuple[str, dict[str, Any]]]]:
    run_id, approval_id = pending
    path = f"/api/sessions/{session}/runs/{run_id}/approvals/{approval_id}"
    with fleet.client(base) as client, client.stream("POST", path, json=body) as response:
        if response.status_code != 200:
            response.read()
            return response.status_code, [("error", response.json())]
        return 200, list(events(response.iter_lines()))


def test_an_approval_and_remember_for_this_session_sent_to_other_workers_take_effect(
    fleet: Fleet,
) -> None:
    a, b, c = (w.url for w in fleet.ui_workers)
    _, asked = _turn(fleet, "approve", "deploy alpha", a)
    status, continued = _decide(fleet, b, "approve", _pending(asked), decision="approve",
                                remember=True)  # fmt: skip
    assert status == 200, continued
    assert "saw: deploy alpha" in _reply(continued)
    _, remembered = _turn(fleet, "approve", "deploy beta", c)  # asks nobody: remembered
    assert "saw: deploy alpha | deploy beta" in _reply(remembered)
    assert [
        line.split(" by ")[0] for line in fleet.deployed() if "alpha" in line or "beta" in line
    ] == [
        "alpha",
        "beta",
    ]


def test_a_card_expired_by_a_newer_message_on_another_worker_never_runs_its_tool(
    fleet: Fleet,
) -> None:
    a, b, c = (w.url for w in fleet.ui_workers)
    _, asked = _turn(fleet, "expire", "deploy gamma", a)
    _turn(fleet, "expire", "never mind", b)
    status, answer = _decide(fleet, c, "expire", _pending(asked), decision="approve")
    assert status == 409, answer
    assert not [line for line in fleet.deployed() if line.startswith("gamma")]


def _live(fleet: Fleet, base: str, session: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A page's live stream of the session on the worker at `base`, forever."""
    with (
        fleet.client(base) as client,
        client.stream("GET", f"/api/sessions/{session}/live") as response,
    ):
        assert response.status_code == 200
        yield from events(response.iter_lines())


def _kind(name: str, data: dict[str, Any]) -> str:
    """A live pair's kind: the `live` message's own type, else the SSE event name."""
    return str(data["event"]["type"]) if name == "live" else name


def test_a_second_message_is_queued_behind_the_running_turn_and_stop_from_another_worker_ends_it(
    fleet: Fleet,
) -> None:
    a, b, c = (w.url for w in fleet.ui_workers)
    with (
        fleet.client(a) as client,
        client.stream("POST", "/api/sessions/busy/turns", json={"text": "hold on"}) as response,
    ):
        lines = response.iter_lines()
        for name, _ in events(lines):
            if name == "cell_output":
                break
        with fleet.client(c) as other:  # the turn runs on A: C queues the message, visibly
            queued = other.post("/api/sessions/busy/turns", json={"text": "next"})
            assert queued.status_code == 202 and queued.json()["queued"]["text"] == "next"
        live = _live(fleet, c, "busy")
        assert _kind(*next(live)) == "queue"  # C's page follows the session from here on
        with fleet.client(b) as third:
            assert third.post("/api/sessions/busy/stop").json() == {"stopped": True}
        assert [name for name, _ in events(lines)][-2:] == ["turn_stopped", "done"]
    follow: list[tuple[str, dict[str, Any]]] = []
    for name, data in live:  # on C: the stopped turn's end, then the queued one, relayed
        follow.append((name, data))
        if sum(_kind(*pair) == "turn_end" for pair in follow) == 2:
            break
    live.close()  # the page leaves: its stream is closed
    assert "saw: hold on | next" in _reply(follow)  # the model saw the stopped turn's message
    with fleet.client() as client:
        history = client.get("/api/sessions/busy/history").json()
    roles = [m["role"] for m in history]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]


def _playground_cards(fleet: Fleet, base: str, session: str) -> list[str]:
    with fleet.client(base) as client:
        page = client.get("/playground", params={"session": session})
    assert page.status_code == 200
    return re.findall(r'<details class="cell play-run" id="(play-\d+)"', page.text)


def _play(fleet: Fleet, session: str, code: str, base: str | None = None) -> dict[str, Any]:
    with fleet.client(base) as client:
        body = {"session": session, "code": code}
        answer = client.post("/api/playground/exec", json=body)
    assert answer.status_code == 200, answer.text
    return list(events(iter(answer.text.splitlines())))[-1][1]


def test_playground_runs_get_distinct_cards_and_every_worker_shows_the_same_history(
    fleet: Fleet,
) -> None:
    finished = [_play(fleet, "play", f"return {n};") for n in range(4)]  # round robin
    assert [f["envelope"]["value"] for f in finished] == [0, 1, 2, 3]
    seen = [_playground_cards(fleet, w.url, "play") for w in fleet.ui_workers]
    assert seen[0] == ["play-4", "play-3", "play-2", "play-1"]
    assert seen[1] == seen[0] and seen[2] == seen[0]


def test_a_playground_card_expired_on_another_worker_never_runs_its_tool(fleet: Fleet) -> None:
    a, b, c = (w.url for w in fleet.ui_workers)
    parked = _play(fleet, "play-expire", 'return await deploy({ target: "delta" });', a)
    run_id = parked["envelope"]["runId"]
    approval_id = parked["envelope"]["pendingApprovals"][0]["id"]
    _play(fleet, "play-expire", "return 1;", b)  # a newer run supersedes the card
    path = f"/api/playground/play-expire/runs/{run_id}/approvals/{approval_id}"
    with fleet.client(c) as client:
        answer = client.post(path, json={"decision": "approve"})
    assert answer.status_code == 409, answer.text
    assert not [line for line in fleet.deployed() if line.startswith("delta")]


class _Approve:
    """An MCP client's elicitation callback that approves, counting the questions."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        del context, params
        self.asked += 1
        return types.ElicitResult(action="accept", content={"approve": True})


def test_an_mcp_approval_answered_through_the_balancer_runs_the_call_once(fleet: Fleet) -> None:
    code = 'return await deploy({ target: "mcp-epsilon" });'
    approve = _Approve()
    before = len(fleet.mcp_proxy.served)

    async def main() -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {MCP_TOKEN}"}
        http = create_mcp_http_client(headers=headers)
        try:
            transport = streamable_http_client(fleet.mcp, http_client=http)
            async with mcp.Client(transport, elicitation_callback=approve) as client:
                return envelope_of(await client.call_tool("exec", {"code": code}))
        finally:
            await http.aclose()

    envelope = asyncio.run(main())
    assert (envelope["status"], envelope.get("value")) == ("completed", "deployed"), envelope
    assert approve.asked == 1
    assert set(fleet.mcp_proxy.served[before:]) == {0, 1}  # both workers answered requests
    assert len([line for line in fleet.deployed() if line.startswith("mcp-epsilon")]) == 1
