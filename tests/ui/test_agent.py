"""The UI over the real `clawcell.agent.Agent` (a `ScriptedModel`), at the HTTP level."""

from __future__ import annotations

from starlette.testclient import TestClient

from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, canvas_tool, create_app
from clawcell.ui._security import Secrets
from tests.ui._client import BASE, TOKEN, sse


def _client(agent: Agent) -> TestClient:
    test_client = TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE)
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
        response = test_client.get("/__openclaw__/canvas/documents/cv_9/index.html")
        assert response.status_code == 200 and response.text == "<p>nine</p>"
