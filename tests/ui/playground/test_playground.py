"""The playground API: a real cell's live output, its envelope, `wait`, and refusals."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import Tool
from tests.ui._client import client, post, sse
from tests.ui._fakes import FakeAgent


async def _double(arguments: dict[str, Any]) -> int:
    return int(arguments["n"]) * 2


def _agent() -> FakeAgent:
    return FakeAgent(tools=[Tool(name="double", execute=_double)])


def test_exec_streams_a_card_each_output_item_and_the_envelope() -> None:
    code = 'text("a"); json({ b: 1 }); return await double({ n: 21 });'
    messages = sse(post(client(_agent()), "/api/playground/exec", {"code": code}).text)
    names = [name for name, _ in messages]
    assert names[0] == "cell_started" and names[-1] == "cell_finished"
    live = [op["html"] for name, data in messages if name == "cell_output" for op in data["ops"]]
    assert '<li class="out out-text"><pre tabindex="0">a</pre></li>' in live
    assert any("→ double started" in html for html in live)
    envelope = messages[-1][1]["envelope"]
    assert envelope["status"] == "completed" and envelope["value"] == 42
    assert envelope["output"] == [
        {"type": "text", "text": "a"},
        {"type": "json", "value": {"b": 1}},
    ]
    assert '<details class="envelope">' in messages[-1][1]["ops"][0]["html"]  # folded by default


def test_wait_continues_a_parked_cell() -> None:
    test_client = client(_agent())
    first = sse(
        post(test_client, "/api/playground/exec", {"code": "await yield_control(); return 7;"}).text
    )[-1][1]["envelope"]
    assert first["status"] == "waiting"
    second = sse(post(test_client, "/api/playground/wait", {"runId": first["runId"]}).text)
    assert second[-1][1]["envelope"]["value"] == 7


def test_wait_on_an_unknown_run_shows_the_protocol_error() -> None:
    messages = sse(post(client(_agent()), "/api/playground/wait", {"runId": "cm_nope"}).text)
    assert messages[-1][1]["envelope"] == {
        "status": "failed",
        "code": "invalid_input",
        "error": "code mode run is unavailable or expired.",
        "output": [],
    }


@pytest.mark.parametrize(
    ("tool", "body", "message"),
    [
        ("exec", {}, "`exec` needs a string `code`, got None."),
        ("wait", {"runId": 3}, "`wait` needs a string `runId`, got 3."),
    ],
)
def test_a_call_without_its_argument_is_refused(tool: str, body: object, message: str) -> None:
    response = post(client(_agent()), f"/api/playground/{tool}", body)
    assert response.status_code == 400
    assert response.json() == {"error": message}


def test_an_unknown_playground_tool_is_refused() -> None:
    response = post(client(_agent()), "/api/playground/shell", {"runId": "x"})
    assert response.status_code == 404
