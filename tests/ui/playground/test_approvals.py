"""The playground's approval cards and run history: a gated call parks the run on a card,
a decision continues it, a newer `exec` supersedes what is still pending (409 after), and the
page shows the runs again, newest first, with who decided."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator
from typing import Any

from starlette.testclient import TestClient

from clawcell import Tool
from tests.ui._client import client, post, sse
from tests.ui._fakes import FakeAgent

GATED = (
    'text("asking"); '
    "try { return await pay({ amount: 500 }); } catch (e) { return `no: ${e.message}`; }"
)


class Ledger:
    """The `pay` tool (approval always) and what it did."""

    def __init__(self) -> None:
        self.paid: list[int] = []

    async def pay(self, arguments: dict[str, Any]) -> str:
        self.paid.append(int(arguments["amount"]))
        return f"paid {arguments['amount']}"

    def agent(self) -> FakeAgent:
        return FakeAgent(tools=[Tool(name="pay", execute=self.pay, approval="always")])


@contextlib.contextmanager
def _client(agent: FakeAgent) -> Generator[TestClient]:
    """One event loop for every request, as a real server has: a parked run's live gate
    stays in the loop that parked it."""
    with client(agent) as test_client:
        yield test_client


def _park(test_client: TestClient) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    messages = sse(post(test_client, "/api/playground/exec", {"code": GATED}).text)
    envelope = messages[-1][1]["envelope"]
    assert envelope["status"] == "waiting" and envelope["reason"] == "approval"
    return envelope, messages


def _decide_url(envelope: dict[str, Any], session: str = "playground") -> str:
    approval = envelope["pendingApprovals"][0]["id"]
    return f"/api/playground/{session}/runs/{envelope['runId']}/approvals/{approval}"


def _card_id(messages: list[tuple[str, dict[str, Any]]]) -> str:
    match = re.search(r'<details class="cell" id="(play-\d+)"', _html(messages))
    assert match is not None
    return match.group(1)


def _html(messages: list[tuple[str, dict[str, Any]]]) -> str:
    return "".join(op.get("html", "") for _, data in messages for op in data.get("ops", []))


def test_a_gated_call_shows_an_approval_card_for_its_run() -> None:
    ledger = Ledger()
    with _client(ledger.agent()) as test_client:
        envelope, messages = _park(test_client)
    approval = envelope["pendingApprovals"][0]
    html = _html(messages)
    assert (
        f'<form class="approval" id="approval-{approval["id"]}" data-run="{envelope["runId"]}" '
        f'data-approval="{approval["id"]}">'
    ) in html
    assert '<button type="button" data-decision="approve" class="approve">Approve</button>' in html
    assert ledger.paid == []


def test_approve_records_the_decision_and_the_run_continues() -> None:
    ledger = Ledger()
    with _client(ledger.agent()) as test_client:
        envelope, parked = _park(test_client)
        response = post(test_client, _decide_url(envelope), {"decision": "approve", "note": "ok"})
        assert response.status_code == 200
        messages = sse(response.text)
        assert [name for name, _ in messages][:2] == ["approval_decided", "cell_started"]
        decided = messages[0][1]["decision"]
        assert (decided["decision"], decided["by"], decided["note"]) == (
            "approve",
            "control-ui",
            "ok",
        )
        redrawn = messages[0][1]["ops"][0]
        assert redrawn["target"] == _card_id(parked)
        assert "approved by control-ui" in redrawn["html"]
        assert (
            'status-approved" id="' in redrawn["html"] and "the run went on with" in redrawn["html"]
        )
        assert messages[-1][1]["envelope"]["value"] == "paid 500"
        assert f'continues run <code class="run-id">{envelope["runId"]}</code>' in _html(messages)
        assert ledger.paid == [500]


def test_deny_continues_the_run_with_the_refusal_and_nothing_runs() -> None:
    ledger = Ledger()
    with _client(ledger.agent()) as test_client:
        envelope, _ = _park(test_client)
        messages = sse(post(test_client, _decide_url(envelope), {"decision": "deny"}).text)
        assert messages[-1][1]["envelope"]["value"].startswith("no: ")
        assert ledger.paid == []


def test_a_decision_is_taken_once() -> None:
    ledger = Ledger()
    with _client(ledger.agent()) as test_client:
        envelope, _ = _park(test_client)
        assert post(test_client, _decide_url(envelope), {"decision": "approve"}).status_code == 200
        again = post(test_client, _decide_url(envelope), {"decision": "approve"})
        assert again.status_code == 409 and "not pending" in again.json()["error"]
        assert ledger.paid == [500]


def test_a_newer_exec_supersedes_the_pending_card_and_deciding_it_is_refused() -> None:
    ledger = Ledger()
    agent = ledger.agent()
    with _client(agent) as test_client:
        envelope, parked = _park(test_client)
        approval = envelope["pendingApprovals"][0]["id"]
        messages = sse(post(test_client, "/api/playground/exec", {"code": "return 1;"}).text)
        expired = messages[0][1]["ops"][0]  # the parked run's card, redrawn and folded
        card = _card_id(parked)
        assert expired["target"] == card
        assert f'<details class="cell play-run" id="{card}">' in expired["html"]
        assert 'status-expired" id="' in expired["html"]
        assert 'class="approval" id="approval-' not in expired["html"]  # no live card
        assert (
            "expired: a newer run in this session moved it on; the call did not run"
            in expired["html"]
        )
        response = post(test_client, _decide_url(envelope), {"decision": "approve"})
        assert response.status_code == 409
        assert "expired (superseded)" in response.json()["error"]
        assert test_client.portal is not None
        audit = [
            d.to_json() for d in test_client.portal.call(agent.mode("playground").approval_audit)
        ]
        assert [(d["approvalId"], d["by"], d.get("reason")) for d in audit] == [
            (approval, "expiry", "superseded")
        ]
        waited = sse(post(test_client, "/api/playground/wait", {"runId": envelope["runId"]}).text)
        assert waited[-1][1]["envelope"]["value"].startswith("no: ")  # the run goes on, unpaid
        assert ledger.paid == []


def test_a_wait_does_not_supersede_a_pending_card() -> None:
    ledger = Ledger()
    with _client(ledger.agent()) as test_client:
        envelope, _ = _park(test_client)
        sse(post(test_client, "/api/playground/wait", {"runId": envelope["runId"]}).text)
        assert post(test_client, _decide_url(envelope), {"decision": "approve"}).status_code == 200
        assert ledger.paid == [500]


def test_decisions_need_the_csrf_token_and_a_valid_body() -> None:
    ledger = Ledger()
    with _client(ledger.agent()) as test_client:
        envelope, _ = _park(test_client)
        url = _decide_url(envelope)
        assert test_client.post(url, json={"decision": "approve"}).status_code == 403
        bad = post(test_client, url, {"decision": "maybe"})
        assert bad.status_code == 400
        assert bad.json() == {"error": "`decision` must be 'approve' or 'deny', got 'maybe'."}
        odd_url = f"/api/playground/playground/runs/{envelope['runId']}/approvals/a%20b"
        odd = post(test_client, odd_url, {"decision": "approve"})
        assert odd.status_code == 400 and "approval id 'a b' is not allowed" in odd.json()["error"]
        assert post(test_client, url, {"decision": "approve"}).status_code == 200  # still pending
        assert ledger.paid == [500]


def test_the_page_shows_the_runs_newest_first_with_live_and_decided_cards() -> None:
    ledger = Ledger()
    with _client(ledger.agent()) as test_client:
        sse(post(test_client, "/api/playground/exec", {"code": 'return "first";'}).text)
        envelope, _ = _park(test_client)
        page = test_client.get("/playground").text
        cards = re.findall(r'<details class="cell play-run" id="(play-\d+)"', page)
        assert len(cards) == 2 and int(cards[0][5:]) > int(cards[1][5:])  # newest first
        assert page.index('id="runs-top"') < page.index(cards[0])
        assert 'class="approval" id="approval-' in page  # still pending: a live card
        assert '<details class="envelope"><summary>envelope</summary>' in page  # folded
        assert "waiting for approval" in page and ">done<" in page  # status in words
        post(test_client, _decide_url(envelope), {"decision": "approve"})
        page = test_client.get("/playground").text
        assert len(re.findall(r'class="cell play-run"', page)) == 3
        assert 'class="approval" id="approval-' not in page
        assert re.search(r"approved by control-ui <time datetime=[^>]+>[^<]+ UTC</time>", page)


def test_an_empty_session_says_how_to_start() -> None:
    page = client(FakeAgent()).get("/playground?session=fresh").text
    assert 'id="runs-empty"' in page and "No runs in this session yet" in page


def test_history_is_per_session() -> None:
    with _client(Ledger().agent()) as test_client:
        post(test_client, "/api/playground/exec", {"session": "a", "code": "return 1;"})
        assert 'class="cell play-run"' in test_client.get("/playground?session=a").text
        assert 'class="cell play-run"' not in test_client.get("/playground?session=b").text
