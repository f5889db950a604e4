"""The UI over the real `clawcell.agent.Agent` (a `ScriptedModel`), at the HTTP level."""

from __future__ import annotations

import re
from typing import Any, cast

from starlette.testclient import TestClient

from clawcell import Limits, Tool
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, canvas_tool, create_app
from clawcell.ui._security import Secrets
from tests.ui._client import BASE, TOKEN, sse


def _client(agent: Agent) -> TestClient:
    settings = UiSettings(token=TOKEN, canvas_port=8788)
    test_client = TestClient(create_app(agent, settings), base_url=BASE)
    assert test_client.get(f"/?token={TOKEN}").status_code == 200
    return test_client


CSRF = {"x-csrf-token": Secrets(token=TOKEN).csrf}


def test_a_real_agent_turn_streams_cell_events_and_lands_in_history() -> None:
    store = MemoryStore()
    code = 'text("hi"); return await canvas({ html: "<p>doc</p>" });'
    model = ScriptedModel([exec_call(code), 'Done.\n[embed ref="cv_0" /]'])
    agent = Agent(model=model, tools=[canvas_tool(store)], store=store)
    with _client(agent) as test_client:
        response = test_client.post("/api/sessions/s1/turns", json={"text": "go"}, headers=CSRF)
        names = [name for name, _ in sse(response.text)]
        assert names[:2] == ["user", "turn_started"]
        assert (
            names.index("cell_started")
            < names.index("cell_output")
            < names.index("cell_finished")
            < names.index("reply")
            < names.index("turn_finished")
        )
        assert names[-1] == "done"
        page = test_client.get("/?session=s1").text
        assert 'class="cell"' in page and "<p>Done.</p>" in page
        assert test_client.get("/api/sessions").json()[0]["sessionId"] == "s1"


def test_canvas_documents_come_from_the_agents_store() -> None:
    store = MemoryStore()
    agent = Agent(model=ScriptedModel([]), store=store)
    with _client(agent) as test_client:
        assert test_client.portal is not None
        test_client.portal.call(store.put_document, "cv_9", {"index.html": b"<p>nine</p>"})
        app = cast(Any, test_client.app)
        canvas = TestClient(app.state.canvas_app, base_url="http://127.0.0.1:8788")
        cap = Secrets(token=TOKEN).canvas_cap
        response = canvas.get(
            f"/__openclaw__/cap/{cap}/__openclaw__/canvas/documents/cv_9/index.html"
        )
        assert response.status_code == 200 and response.text == "<p>nine</p>"


def _approval_agent() -> Agent:
    async def pay(arguments: dict[str, Any]) -> str:
        return f"paid {arguments['amount']}"

    tool = Tool(name="pay", execute=pay, approval="always")
    code = (
        'try { return await pay({ amount: 500 }); } catch (e) { return "refused: " + e.message; }'
    )
    model = ScriptedModel([exec_call(code), "The cell has finished."])
    return Agent(model=model, tools=[tool], store=MemoryStore())


def _cards(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<form class="approval" id="approval-[^"]+" data-run="([^"]+)" '
                      r'data-approval="([^"]+)">', page)  # fmt: skip


def test_a_parked_turn_offers_its_approval_again_after_a_reload_and_can_be_decided() -> None:
    with _client(_approval_agent()) as test_client:
        turn = sse(test_client.post("/api/sessions/s1/turns", json={"text": "pay"},
                                    headers=CSRF).text)  # fmt: skip
        requested = next(data["event"] for name, data in turn if name == "approval_requested")
        run_id, approval_id = requested["runId"], requested["approval"]["id"]
        assert turn[-2][1]["event"]["state"] == "waiting_approval"
        page = test_client.get("/?session=s1").text
        assert _cards(page) == [(run_id, approval_id)]
        assert "waiting for approval of <code>pay</code>" in page
        url = f"/api/sessions/s1/runs/{run_id}/approvals/{approval_id}"
        decided = sse(test_client.post(url, json={"decision": "deny", "note": "not today"},
                                       headers=CSRF).text)  # fmt: skip
        names = [name for name, _ in decided]
        assert names[0] == "approval_decided" and names[-1] == "done"
        finished = next(data["event"] for name, data in decided if name == "cell_finished")
        assert finished["envelope"]["value"] == 'refused: Tool "pay" was not approved: not today.'
        assert decided[-2][1]["event"]["state"] == "replied"
        page = test_client.get("/?session=s1").text
        assert _cards(page) == [] and "<p>The cell has finished.</p>" in page
        again = test_client.post(url, json={"decision": "approve"}, headers=CSRF)
        assert again.status_code == 409
        assert again.json() == {
            "error": f"approval {approval_id!r} of run {run_id!r} is not pending; it may have "
            "been decided already, expired, or belong to another run.",
            "code": "invalid_input",
        }


def test_a_new_message_expires_the_old_approval_card_and_deciding_it_is_refused() -> None:
    deployed: list[dict[str, Any]] = []

    async def deploy(params: dict[str, Any]) -> str:
        deployed.append(params)
        return "deployed"

    code = 'return await deploy({ target: "production" });'
    model = ScriptedModel([exec_call(code), "OK, not deploying."])
    tool = Tool(name="deploy", execute=deploy, approval="always")
    agent = Agent(model=model, tools=[tool], store=MemoryStore())
    with _client(agent) as test_client:
        first = sse(test_client.post("/api/sessions/s/turns", json={"text": "deploy"},
                                     headers=CSRF).text)  # fmt: skip
        requested = next(data for name, data in first if name == "approval_requested")
        run_id, approval_id = requested["event"]["runId"], requested["event"]["approval"]["id"]
        second = sse(test_client.post("/api/sessions/s/turns", json={"text": "never mind"},
                                      headers=CSRF).text)  # fmt: skip
        [expired] = [data for name, data in second if name == "approval_decided"]
        assert expired["event"]["reason"] == "superseded"
        [op] = expired["ops"]
        assert op["target"] == f"approval-{approval_id}-controls"
        assert "expired: a newer message moved the session on; the call did not run" in op["html"]
        url = f"/api/sessions/s/runs/{run_id}/approvals/{approval_id}"
        refused = test_client.post(url, json={"decision": "approve"}, headers=CSRF)
        assert refused.status_code == 409
        assert refused.json()["code"] == "invalid_input"
        page = test_client.get("/?session=s").text
        assert "waiting-expired" in page and 'class="approval"' not in page
    assert deployed == []


def test_stop_cancels_the_running_turn_and_its_cell_and_the_next_turn_works() -> None:
    finished: list[str] = []

    async def hold(_: dict[str, Any]) -> str:
        import asyncio

        await asyncio.Event().wait()  # only cancellation ends it
        finished.append("hold")
        return "never"

    code = 'text("waiting on hold"); return await hold();'
    model = ScriptedModel([exec_call(code), "after the stop"])
    # The cell's own deadline well past the test's pace under load: only Stop may end it.
    agent = Agent(model=model, tools=[Tool(name="hold", execute=hold)], store=MemoryStore(),
                  limits=Limits(timeout_ms=60_000))  # fmt: skip
    with _client(agent) as test_client:
        assert test_client.post("/api/sessions/s/stop", headers=CSRF).status_code == 409
        body = {"text": "hold on"}
        with test_client.stream("POST", "/api/sessions/s/turns", json=body,
                                headers=CSRF) as response:  # fmt: skip
            lines = response.iter_lines()
            for line in lines:
                if line == "event: cell_output":
                    break
            stopped = test_client.post("/api/sessions/s/stop", headers=CSRF)
            rest = "\n".join(lines)
        assert stopped.json() == {"stopped": True}
        messages = sse(rest.split("\n", 1)[1])  # after the cell_output line's data
        names = [name for name, _ in messages]
        assert names[-2:] == ["turn_stopped", "done"]
        ops = messages[-2][1]["ops"]
        assert ops[0]["target"].endswith("-status") and ">stopped</span>" in ops[0]["html"]
        assert re.fullmatch(r"Stopped after \d+\.\d s · 1 cell", ops[1]["text"])
        assert "■ stopped" in ops[-1]["html"]
        transcript = test_client.get("/api/sessions/s/history").json()
        assert transcript[-1]["role"] == "assistant"
        assert transcript[-1]["stopReason"] == "aborted"
        page = test_client.get("/?session=s").text  # after a reload: stopped, output kept
        assert '<span class="status status-stopped"' in page and ">stopped</span>" in page
        assert "waiting on hold" in page and "threw an error" not in page
        after = sse(test_client.post("/api/sessions/s/turns", json={"text": "again"},
                                     headers=CSRF).text)  # fmt: skip
        assert any("after the stop" in str(data["ops"]) for name, data in after if name == "reply")
    assert finished == []


def test_a_long_history_message_is_whole_and_folds_behind_show_more() -> None:
    store = MemoryStore()
    agent = Agent(model=ScriptedModel([]), store=store)
    long_text = "word " * 3000  # 15,000 characters: the projection's 8,000 cut must not apply
    entries = [
        {"role": "user", "content": [{"type": "text", "text": "tell me a lot"}]},
        {"role": "assistant", "content": [{"type": "text", "text": long_text + "THE END"}]},
    ]
    with _client(agent) as test_client:
        assert test_client.portal is not None
        test_client.portal.call(store.append_transcript, "long", entries)
        page = test_client.get("/?session=long").text
    assert "THE END" in page
    assert 'class="message message-assistant message-long folded"' in page
    assert '<button type="button" class="show-more" aria-expanded="false">Show more</button>' in (
        page
    )
    assert page.count('aria-label="Copy message"') == 2


def test_a_long_session_renders_its_latest_page_and_older_pages_on_request() -> None:
    store = MemoryStore()
    agent = Agent(model=ScriptedModel([]), store=store)
    entries = [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": [{"type": "text", "text": f"message number {i}."}]}
        for i in range(250)
    ]  # fmt: skip
    with _client(agent) as test_client:
        assert test_client.portal is not None
        test_client.portal.call(store.append_transcript, "long", entries)
        page = test_client.get("/?session=long").text
        assert "message number 249." in page and "message number 150." in page
        assert "message number 149." not in page
        assert 'id="load-older" class="load-older" data-before="150"' in page
        older = test_client.get("/api/sessions/long/messages?before=150").json()
        assert older["before"] == 50
        assert "message number 149." in older["html"] and "message number 50." in older["html"]
        assert "message number 49." not in older["html"]
        first = test_client.get("/api/sessions/long/messages?before=50").json()
        assert first["before"] == 0 and "message number 0." in first["html"]
        bad = test_client.get("/api/sessions/long/messages?before=x")
        assert bad.status_code == 400
