"""MCP App views through the Control UI: stored by the turn, served sandboxed by the canvas
host, their data and tool calls behind the app's API with the session's approvals."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from clawcell import Limits
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, create_app
from clawcell.ui._security import Secrets
from tests.mcp.test_apps import apps
from tests.ui._client import BASE, TOKEN

CSRF = {"x-csrf-token": Secrets(token=TOKEN).csrf}
CAP = Secrets(token=TOKEN).canvas_cap

_ID_RULE = (
    ": ids are 1 to 200 letters, digits, `_`, `.`, `:` or `-`, as the waiting envelope gives them."
)


@pytest.fixture
def ui() -> Iterator[tuple[TestClient, TestClient, str]]:
    """A logged-in client, the canvas host and the view id of one MCP App turn."""
    store = MemoryStore()
    model = ScriptedModel([exec_call("return await MCP.apps.showCounter({ start: 5 });"), "Here."])
    agent = Agent(model=model, store=store, mcp_servers={"apps": apps(ask=["increment"])},
                  limits=Limits(timeout_ms=20_000))  # fmt: skip
    app: Any = create_app(agent, UiSettings(token=TOKEN, canvas_port=8788))
    with TestClient(app, base_url=BASE) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200
        client.post("/api/sessions/s/turns", json={"text": "count"}, headers=CSRF)
        page = client.get("/?session=s").text
        view = re.search(
            r'<figure class="surface mcp-app" data-kind="mcp-app" data-view="(ma_\w+)"', page
        )
        assert view is not None, page
        yield (
            client,
            TestClient(app.state.canvas_app, base_url="http://127.0.0.1:8788"),
            view.group(1),
        )


def test_the_reply_frames_the_view_on_the_canvas_origin_without_same_origin(
    ui: tuple[TestClient, TestClient, str],
) -> None:
    client, canvas, view = ui
    page = client.get("/?session=s").text
    src = f"http://127.0.0.1:8788/__openclaw__/cap/{CAP}/__openclaw__/canvas/mcp-apps/{view}/index.html"
    assert f'<iframe class="mcp-app-frame" data-src="{src}" sandbox="allow-scripts"' in page
    response = canvas.get(src.removeprefix("http://127.0.0.1:8788"))
    assert response.status_code == 200 and b"Counter app" in response.content
    policy = response.headers["content-security-policy"]
    assert policy.startswith("sandbox allow-scripts;") and "allow-same-origin" not in policy
    assert "connect-src 'none'" in policy
    # The call data is the page's, never the canvas host's.
    assert (
        canvas.get(
            src.replace("index.html", "call.json").removeprefix("http://127.0.0.1:8788")
        ).status_code
        == 404
    )


def test_the_page_reads_the_tools_input_and_result(ui: tuple[TestClient, TestClient, str]) -> None:
    client, _, view = ui
    call = client.get(f"/api/sessions/s/mcp-apps/{view}").json()
    assert call["arguments"] == {"start": 5} and call["toolName"] == "show_counter"
    assert call["result"]["structuredContent"] == {"count": 5}
    assert client.get(f"/api/sessions/other/mcp-apps/{view}").status_code == 404


def test_a_gated_tool_call_from_the_view_waits_for_approval_and_runs_once(
    ui: tuple[TestClient, TestClient, str],
) -> None:
    client, _, view = ui
    url = f"/api/sessions/s/mcp-apps/{view}/calls"
    asked = client.post(
        url, json={"name": "increment", "arguments": {"by": 2}, "trigger": "gesture"}, headers=CSRF
    ).json()
    approval = asked["approval"]
    [pending] = approval["approvals"]
    assert pending["tool"] == "MCP.apps.increment" and pending["input"] == {"by": 2}
    decide = f"{url}/{approval['runId']}/approvals/{pending['id']}"
    answer = client.post(decide, json={"decision": "approve"}, headers=CSRF).json()
    assert answer["result"]["structuredContent"] == {"count": 7}
    again = client.post(decide, json={"decision": "approve"}, headers=CSRF)
    assert again.status_code == 409  # decided once; the call ran once
    read = client.post(
        url, json={"name": "increment", "arguments": {"by": 0}, "trigger": "approved"}, headers=CSRF
    ).json()
    denied = f"{url}/{read['approval']['runId']}/approvals/{read['approval']['approvals'][0]['id']}"
    assert "error" in client.post(denied, json={"decision": "deny"}, headers=CSRF).json()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "deleteEverything"}, "the view may call only tools of MCP server 'apps'"),
        ({"name": "increment", "arguments": [1]}, "`arguments` must be a JSON object"),
        (
            {"name": "increment", "arguments": {"x": "y" * 70_000}},
            "`arguments` must be a JSON object",
        ),
    ],
    ids=["other-tool", "not-an-object", "too-large"],
)
def test_bad_tool_calls_from_a_view_are_refused(
    ui: tuple[TestClient, TestClient, str], body: dict[str, Any], message: str
) -> None:
    client, _, view = ui
    body = {"trigger": "gesture", **body}
    response = client.post(f"/api/sessions/s/mcp-apps/{view}/calls", json=body, headers=CSRF)
    assert response.status_code == 400 and response.json()["error"].startswith(message)


def test_tool_call_arguments_are_data_so_proto_is_an_ordinary_key(
    ui: tuple[TestClient, TestClient, str],
) -> None:
    # Pasted into the cell as an object literal, `"__proto__"` would set the prototype (and
    # vanish from the arguments); passed as JSON data it stays an own key the tool sees.
    client, _, view = ui
    url = f"/api/sessions/s/mcp-apps/{view}/calls"
    body = {"name": "increment", "arguments": {"by": 1, "__proto__": {"by": 99}},
            "trigger": "gesture"}  # fmt: skip
    asked = client.post(url, json=body, headers=CSRF).json()
    [pending] = asked["approval"]["approvals"]
    assert pending["input"] == {"by": 1, "__proto__": {"by": 99}}


@pytest.mark.parametrize("trigger", [None, "app", "load", "none"])
def test_a_tool_call_without_a_user_trigger_is_refused_and_nothing_runs(
    ui: tuple[TestClient, TestClient, str], trigger: str | None
) -> None:
    client, _, view = ui
    body: dict[str, Any] = {"name": "increment", "arguments": {"by": 1}}
    if trigger is not None:
        body["trigger"] = trigger
    response = client.post(f"/api/sessions/s/mcp-apps/{view}/calls", json=body, headers=CSRF)
    assert response.status_code == 403
    rows = client.get(f"/api/sessions/s/mcp-apps/{view}").json()["activity"]
    if trigger == "none":  # a call the page refused: recorded, never run
        assert response.json()["error"].startswith("the call was refused")
        assert [(r["tool"], r["trigger"], r["status"]) for r in rows] == [
            ("increment", "none", "refused")
        ]
    else:
        assert response.json()["error"].startswith(
            f"`trigger` must be 'gesture', 'approved' or 'none', got {trigger!r}"
        )
        assert rows == []
    assert all("runId" not in row for row in rows)  # no cell was started


def test_every_app_tool_call_is_an_activity_row_and_a_pending_approval_survives_a_reload(
    ui: tuple[TestClient, TestClient, str],
) -> None:
    client, _, view = ui
    url = f"/api/sessions/s/mcp-apps/{view}/calls"
    body = {"name": "increment", "arguments": {"by": 2}, "trigger": "gesture"}
    approval = client.post(url, json=body, headers=CSRF).json()["approval"]
    # A reload: the page reads the view again and finds the call still waiting.
    read = client.get(f"/api/sessions/s/mcp-apps/{view}").json()
    [row] = read["activity"]
    assert {k: row[k] for k in ("app", "view", "tool", "arguments", "trigger", "status")} == {
        "app": "apps", "view": view, "tool": "increment", "arguments": {"by": 2},
        "trigger": "gesture", "status": "waiting",
    }  # fmt: skip
    assert read["pending"] == [approval]
    [pending] = approval["approvals"]
    decide = f"{url}/{approval['runId']}/approvals/{pending['id']}"
    client.post(decide, json={"decision": "approve"}, headers=CSRF)
    after = client.get(f"/api/sessions/s/mcp-apps/{view}").json()
    [row] = after["activity"]
    assert row["status"] == "completed" and row["result"]["structuredContent"] == {"count": 7}
    assert after["pending"] == []
    # Rows belong to the session: another session sees none of them.
    assert client.get(f"/api/sessions/other/mcp-apps/{view}").status_code == 404


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ([1], 'the body must be a JSON object `{"decision": "approve" | "deny", …}`.'),
        ({"decision": "maybe"}, "`decision` must be 'approve' or 'deny', got 'maybe'."),
        ({"decision": "approve", "note": 5}, "`note` must be a string, got 5."),
        ({"decision": "approve", "remember": "yes"},
         "`remember` must be true or false, got 'yes'."),
    ],
    ids=["not-an-object", "bad-decision", "note-not-text", "remember-not-bool"],
)  # fmt: skip
def test_a_malformed_decision_on_a_views_call_is_refused_as_the_chats_is_and_nothing_runs(
    ui: tuple[TestClient, TestClient, str], body: object, error: str
) -> None:
    # The three decision routes (chat, playground, MCP App) read the body with one helper:
    # the same refusals, and a call decided only by a well-formed decision.
    client, _, view = ui
    url = f"/api/sessions/s/mcp-apps/{view}/calls"
    call = {"name": "increment", "arguments": {"by": 2}, "trigger": "gesture"}
    approval = client.post(url, json=call, headers=CSRF).json()["approval"]
    [pending] = approval["approvals"]
    decide = f"{url}/{approval['runId']}/approvals/{pending['id']}"
    response = client.post(decide, json=body, headers=CSRF)
    assert (response.status_code, response.json()) == (400, {"error": error})
    assert client.get(f"/api/sessions/s/mcp-apps/{view}").json()["pending"] == [approval]


@pytest.mark.parametrize(
    ("tail", "error"),
    [("cm%3C1/approvals/ap_1", "run id 'cm<1' is not allowed" + _ID_RULE),
     ("cm_1/approvals/ap%201", "approval id 'ap 1' is not allowed" + _ID_RULE)],
    ids=["run", "approval"],
)  # fmt: skip
def test_a_decision_on_a_views_call_for_a_bad_id_says_which_id(
    ui: tuple[TestClient, TestClient, str], tail: str, error: str
) -> None:
    client, _, view = ui
    url = f"/api/sessions/s/mcp-apps/{view}/calls/{tail}"
    response = client.post(url, json={"decision": "approve"}, headers=CSRF)
    assert (response.status_code, response.json()) == (400, {"error": error})


def test_a_views_tool_call_over_the_json_body_cap_is_refused_unread_and_nothing_runs(
    ui: tuple[TestClient, TestClient, str],
) -> None:
    # Every route reads its JSON body through one capped reader (`_responses.json_body`):
    # the view's tool calls too, whatever the arguments' own limit.
    client, _, view = ui
    body = {"name": "increment", "arguments": {"by": 1}, "trigger": "gesture",
            "padding": "x" * (4 * 1024 * 1024)}  # fmt: skip
    url = f"/api/sessions/s/mcp-apps/{view}/calls"
    response = client.post(url, json=body, headers=CSRF)
    assert response.status_code == 400
    assert response.json()["error"].startswith("the body must be a JSON object of at most")
    assert client.get(f"/api/sessions/s/mcp-apps/{view}").json()["activity"] == []
