"""Approval prompts over HTTP: the card on the live stream, the decision route, its refusals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from clawcell.approvals import ApprovalAnswer
from clawcell.ui._templates import TEMPLATES, fragment
from tests.ui._client import BASE, TOKEN, client, csrf, post, sse
from tests.ui._fakes import Event, FakeAgent, reply_event

APPROVAL = {
    "id": "ap_1",
    "tool": "pay",
    "input": {"amount": 500, "to": "<img src=x onerror=alert(1)>"},
    "reason": "over 100 EUR <b>",
    "requestedAt": "2026-12-01T10:12:03.120+00:00",
}
WAITING = {
    "status": "waiting",
    "runId": "cm_1",
    "reason": "approval",
    "output": [],
    "pendingToolCalls": [{"id": "bridge:callValue:1", "method": "callValue"}],
    "pendingApprovals": [APPROVAL],
}
DECIDE = "/api/sessions/s/runs/cm_1/approvals/ap_1"

_ID_RULE = (
    ": ids are 1 to 200 letters, digits, `_`, `.`, `:` or `-`, as the waiting envelope gives them."
)


async def _parking_turn(_: str) -> AsyncIterator[Event]:
    yield Event(type="turn_started")
    yield Event(type="cell_started", fields={"callId": "k", "tool": "exec", "code": "pay()"})
    yield Event(type="cell_finished", fields={"callId": "k", "envelope": WAITING})
    request = {"callId": "k", "runId": "cm_1", "approval": APPROVAL}
    yield Event(type="approval_requested", fields=request)
    yield Event(type="turn_finished", fields={"state": "waiting_approval"})


async def _continued_turn(decision: str) -> AsyncIterator[Event]:
    yield Event(type="turn_started")
    yield Event(type="cell_started", fields={"callId": "w", "tool": "wait", "runId": "cm_1"})
    envelope: dict[str, Any] = {"status": "completed", "output": [], "value": f"paid ({decision})"}
    yield Event(type="cell_finished", fields={"callId": "w", "envelope": envelope})
    yield reply_event("Paid.")
    yield Event(type="turn_finished", fields={"state": "replied"})


def _ops(messages: list[tuple[str, dict[str, Any]]], name: str) -> list[dict[str, Any]]:
    return [op for event, data in messages if event == name for op in data["ops"]]


def test_a_turn_parked_on_an_approval_shows_a_card_in_its_cell() -> None:
    messages = sse(
        post(client(FakeAgent([_parking_turn])), "/api/sessions/s/turns", {"text": "x"}).text
    )
    cell = _ops(messages, "cell_started")[-1]["html"]  # after the turn's "worked" group
    assert '<div class="cell-approvals" id="cell-' in cell
    result = _ops(messages, "cell_finished")[0]["html"]
    assert (
        '<p class="waiting waiting-approval">waiting for approval of <code>pay</code>; the turn '
        "continues once it is decided.</p>"
    ) in result
    [card] = _ops(messages, "approval_requested")
    assert card["op"] == "append" and card["target"].endswith("-approvals")
    assert card["target"].removesuffix("-approvals") in cell
    html = card["html"]
    assert '<form class="approval" id="approval-ap_1" data-run="cm_1" data-approval="ap_1">' in html
    assert '<code class="approval-tool">pay</code>' in html
    assert '<p class="approval-reason">over 100 EUR &lt;b&gt;</p>' in html
    assert (
        '<pre class="approval-input" tabindex="0">{\n  &#34;amount&#34;: 500,\n  &#34;to&#34;: '
        "&#34;&lt;img src=x onerror=alert(1)&gt;&#34;\n}</pre>"
    ) in html
    assert '<time datetime="2026-12-01T10:12:03.120+00:00">2026-12-01 10:12:03 UTC</time>' in html
    assert '<input type="checkbox" name="remember"> remember for this session' in html
    assert '<button type="button" data-decision="approve" class="approve">Approve</button>' in html
    assert '<button type="button" data-decision="deny" class="deny">Deny</button>' in html
    assert "<img" not in html
    assert messages[-2][1]["event"] == {"type": "turn_finished", "state": "waiting_approval"}


def test_a_decision_streams_the_decided_card_and_the_continued_turn() -> None:
    agent = FakeAgent([_continued_turn])
    agent.pending["ap_1"] = "cm_1"
    body = {"decision": "approve", "note": "ok for <December>", "remember": True}
    response = post(client(agent), DECIDE, body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    messages = sse(response.text)
    assert [name for name, _ in messages] == [
        "approval_decided", "turn_started", "cell_started", "cell_finished", "reply",
        "turn_finished", "done",
    ]  # fmt: skip
    assert _ops(messages, "approval_decided") == [{
        "op": "replace", "target": "approval-ap_1-controls",
        "html": '<p class="approval-decided approval-approve" id="approval-ap_1-controls">'
                "approved by control-ui: ok for &lt;December&gt;</p>",
    }]  # fmt: skip
    [group, wait_card] = _ops(messages, "cell_started")
    assert group["target"] == "transcript" and 'class="work"' in group["html"]
    assert (
        wait_card["target"].endswith("-cells")
        and '<code class="run-id">cm_1</code>' in wait_card["html"]
    )
    assert "paid (approve)" in _ops(messages, "cell_finished")[0]["html"]
    assert "<p>Paid.</p>" in _ops(messages, "reply")[-1]["html"]  # after the group folds
    assert agent.decisions == [{
        "sessionId": "s", "runId": "cm_1", "approvalId": "ap_1", "decision": "approve",
        "note": "ok for <December>", "by": "control-ui", "remember": True,
    }]  # fmt: skip


def test_a_denial_is_shown_as_denied_and_remember_defaults_to_false() -> None:
    agent = FakeAgent([_continued_turn])
    agent.pending["ap_1"] = "cm_1"
    messages = sse(post(client(agent), DECIDE, {"decision": "deny"}).text)
    assert _ops(messages, "approval_decided")[0]["html"] == (
        '<p class="approval-decided approval-deny" id="approval-ap_1-controls">'
        "denied by control-ui</p>"
    )
    assert agent.decisions[0]["remember"] is False and agent.decisions[0]["note"] == ""


def test_an_unknown_approval_is_refused_with_a_json_error() -> None:
    response = post(client(FakeAgent()), DECIDE, {"decision": "approve"})
    assert response.status_code == 409
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "error": "approval 'ap_1' of run 'cm_1' is not pending.",
        "code": "invalid_input",
    }


def test_an_approval_decided_already_is_refused_and_the_next_decision_still_works() -> None:
    agent = FakeAgent([_continued_turn, _continued_turn])
    agent.pending["ap_1"] = "cm_1"
    test_client = client(agent)
    assert post(test_client, DECIDE, {"decision": "approve"}).status_code == 200
    again = post(test_client, DECIDE, {"decision": "deny"})
    assert again.status_code == 409
    assert again.json()["error"] == "approval 'ap_1' of run 'cm_1' is not pending."
    agent.pending["ap_2"] = "cm_1"
    other = post(test_client, "/api/sessions/s/runs/cm_1/approvals/ap_2", {"decision": "deny"})
    assert other.status_code == 200
    assert [d["approvalId"] for d in agent.decisions] == ["ap_1", "ap_2"]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ([1], 'the body must be a JSON object `{"decision": "approve" | "deny", …}`.'),
        ({}, "`decision` must be 'approve' or 'deny', got None."),
        ({"decision": "maybe"}, "`decision` must be 'approve' or 'deny', got 'maybe'."),
        ({"decision": "deny", "note": 5}, "`note` must be a string, got 5."),
        ({"decision": "deny", "note": "n" * 2001},
         "`note` has 2001 characters; shorten it to at most 2000."),
        ({"decision": "deny", "remember": "yes"}, "`remember` must be true or false, got 'yes'."),
    ],
    ids=["not-an-object", "no-decision", "bad-decision", "note-not-text", "note-too-long",
         "remember-not-bool"],
)  # fmt: skip
def test_a_malformed_decision_is_refused_before_the_agent_is_asked(
    body: object, error: str
) -> None:
    agent = FakeAgent()
    agent.pending["ap_1"] = "cm_1"
    response = post(client(agent), DECIDE, body)
    assert response.status_code == 400
    assert response.json() == {"error": error}
    assert agent.decisions == [] and agent.pending == {"ap_1": "cm_1"}


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("/api/sessions/a%00b/runs/cm_1/approvals/ap_1",
         "session id 'a\\x00b' is not allowed: it holds the control character '\\x00'."),
        ("/api/sessions/s/runs/cm%3C1/approvals/ap_1", "run id 'cm<1' is not allowed" + _ID_RULE),
        ("/api/sessions/s/runs/cm_1/approvals/ap%201",
         "approval id 'ap 1' is not allowed" + _ID_RULE),
    ],
    ids=["session", "run", "approval"],
)  # fmt: skip
def test_a_decision_for_a_bad_id_is_refused(url: str, error: str) -> None:
    response = post(client(), url, {"decision": "approve"})
    assert response.status_code == 400
    assert response.json() == {"error": error}


def test_a_decision_without_the_csrf_header_is_refused() -> None:
    agent = FakeAgent()
    agent.pending["ap_1"] = "cm_1"
    response = client(agent).post(DECIDE, json={"decision": "approve"})
    assert response.status_code == 403
    assert response.text == "Refused: missing or wrong `X-CSRF-Token` header (reload the page)."
    assert agent.pending == {"ap_1": "cm_1"}


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({"origin": "https://evil.example"},
         "Refused: cross-origin request from 'https://evil.example'."),
        ({"sec-fetch-site": "cross-site"}, "Refused: cross-site request ('cross-site')."),
    ],
    ids=["origin", "sec-fetch-site"],
)  # fmt: skip
def test_a_cross_site_decision_is_refused_even_with_the_csrf_header(
    headers: dict[str, str], error: str
) -> None:
    agent = FakeAgent()
    agent.pending["ap_1"] = "cm_1"
    test_client = client(agent)
    response = test_client.post(
        DECIDE, json={"decision": "approve"}, headers={"x-csrf-token": csrf(test_client), **headers}
    )
    assert response.status_code == 403
    assert response.text == error
    assert agent.decisions == []


def test_a_decision_without_the_token_is_refused() -> None:
    response = client(login=False).post(DECIDE, json={"decision": "approve"})
    assert response.status_code == 401
    assert response.text.startswith("This clawcell server needs its access token")


def test_a_same_origin_decision_with_a_bearer_token_is_accepted() -> None:
    agent = FakeAgent([_continued_turn])
    agent.pending["ap_1"] = "cm_1"
    test_client = client(agent, login=False)
    headers = {"authorization": f"Bearer {TOKEN}", "origin": BASE,
               "x-csrf-token": csrf(client())}  # fmt: skip
    response = test_client.post(DECIDE, json={"decision": "approve"}, headers=headers)
    assert response.status_code == 200
    assert sse(response.text)[-1][0] == "done"


def test_a_cards_note_field_stops_where_the_answers_check_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(TEMPLATES.globals, "max_note_chars", 17)  # the card follows the value
    card = fragment("approval", value=APPROVAL, run_id="cm_1")
    monkeypatch.undo()
    assert 'name="note" placeholder="note (optional)" aria-label="note" maxlength="17"' in card
    assert f'maxlength="{ApprovalAnswer.MAX_NOTE_CHARS}"' in fragment(
        "approval", value=APPROVAL, run_id="cm_1"
    )
