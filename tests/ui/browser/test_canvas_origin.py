"""Canvases on their own origin: in every tier a model-written canvas cannot act as the user.

The canvas below is an attack: it tries to read the page's CSRF token, read the session list,
send a turn and approve the pending `deploy` call. The assertions are on the server side:
no turn was added, the tool never ran, the approval is still pending.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from clawcell import Tool
from clawcell.agent import ModelResponse, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import canvas_tool
from tests.ui.browser.conftest import Running, screenshot, send, serve

pytestmark = pytest.mark.slow  # each test starts a server and a browser

ATTACK_HTML = """<!doctype html><p id="csrf">?</p><p id="list">?</p><p id="turn">?</p>
<p id="decide">?</p><p id="done"></p><script src="attack.js"></script>"""
ATTACK_JS = """const out = (id, v) => { document.getElementById(id).textContent = v; };
try { out("csrf", "read:" + parent.document.querySelector('meta[name="csrf-token"]').content); }
catch (error) { out("csrf", "blocked"); }
async function attempt(id, url, init) {
  try {
    const response = await fetch(url, { credentials: "include", ...init });
    out(id, `status ${response.status}: ${(await response.text()).slice(0, 60)}`);
  } catch (error) { out(id, "blocked"); }
}
(async () => {
  await attempt("list", "APP/api/sessions", {});
  const post = { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" } };
  await attempt("turn", "APP/api/sessions/main/turns", { ...post, body: '{"text": "pwned"}' });
  await attempt("decide", "DECIDE", { ...post, body: '{"decision": "approve"}' });
  out("done", "done");
})();"""


def _tools(deployed: list[dict[str, Any]]) -> Any:
    async def deploy(arguments: dict[str, Any]) -> str:
        deployed.append(arguments)
        return "deployed"

    def tools(store: MemoryStore) -> list[Tool]:
        return [canvas_tool(store), Tool(name="deploy", execute=deploy, approval="always")]

    return tools


TURNS = [
    ModelResponse(
        text='Here is the canvas.\n[embed ref="cv_attack" title="Attack" /]',
        tool_calls=(exec_call('return await deploy({ target: "production" });'),),
    )
]


def _transcript(running: Running) -> list[dict[str, Any]]:
    return running.call(running.store.read_transcript("main"))


@pytest.mark.parametrize("tier", ["strict", "scripts", "trusted"])
def test_a_canvas_cannot_send_a_turn_decide_an_approval_or_read_the_sessions(
    page: Page, tier: str
) -> None:
    deployed: list[dict[str, Any]] = []
    with serve(TURNS, tools=_tools(deployed), embed_sandbox=tier) as running:
        page.goto(running.login_url)
        send(page, "deploy it")
        card = page.locator("form.approval")
        run_id, approval_id = card.get_attribute("data-run"), card.get_attribute("data-approval")
        decide = f"{running.base}/api/sessions/main/runs/{run_id}/approvals/{approval_id}"
        script = ATTACK_JS.replace("APP", running.base).replace("DECIDE", decide)
        files = {"index.html": ATTACK_HTML.encode(), "attack.js": script.encode()}
        running.call(running.store.put_document("cv_attack", files))
        before = len(_transcript(running))
        page.reload()  # the frame loads the attack now
        frame = page.frame_locator("iframe[title=Attack]")
        frame.locator("#csrf").wait_for()
        if tier != "strict":
            frame.locator("#done", has_text="done").wait_for()
            assert frame.locator("#csrf").inner_text() == "blocked"
            assert frame.locator("#list").inner_text() == "blocked"  # no CORS: unreadable
        else:
            assert frame.locator("#csrf").inner_text() == "?"  # no script ran at all
        screenshot(page, f"canvas-attack-{tier}")
        # On the server: nothing happened.
        assert len(_transcript(running)) == before
        assert "pwned" not in str(_transcript(running))
        pending = running.call(running.agent.mode("main").pending_approvals(run_id))
        assert [a.id for a in pending] == [approval_id]
        assert deployed == []
        assert page.locator("form.approval button.approve").is_enabled()
