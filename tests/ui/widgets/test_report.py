"""`show_widget` report mode: checked data drawn as a static card that no script runs in."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from clawcell import CodeMode, ToolError
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, create_app, widget_tool
from clawcell.ui._security import Secrets
from tests.ui._client import BASE, TOKEN

CAP = Secrets(token=TOKEN).canvas_cap
REPORT: dict[str, Any] = {
    "blocks": [
        {"type": "metrics", "items": [{"label": "Done", "value": "24", "detail": "this week"}]},
        {"type": "table", "title": "Teams", "columns": ["Team", "Done"],
         "rows": [["Platform", "14"], ["<script>alert(1)</script>", "10"]]},
        {"type": "chart", "points": [{"label": "Mon", "value": 3}, {"label": "Tue", "value": -2}]},
        {"type": "links", "items": [{"label": "Board", "url": "https://example.com/b?x=1&y=2"}]},
        {"type": "text", "text": 'Plain <img src=x onerror="alert(1)"> text.'},
    ]
}  # fmt: skip


async def _execute(tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    return await tool.execute(arguments)


def _show(store: MemoryStore, **arguments: Any) -> dict[str, Any]:
    return asyncio.run(_execute(widget_tool(store), arguments))


def test_a_report_is_stored_as_a_static_page_with_every_value_escaped() -> None:
    store = MemoryStore()
    result = _show(store, title="Weekly <b>report</b>", report=REPORT)
    assert re.fullmatch(r"wgr_[0-9a-f]{20}", result["ref"])
    assert result["mcpAppPreview"]["presentation"]["preferredHeight"] >= 160
    page = (asyncio.run(store.get_document_file(result["ref"], "index.html")) or b"").decode()
    assert "<script" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<title>Weekly &lt;b&gt;report&lt;/b&gt;</title>" in page
    assert (
        '<a href="https://example.com/b?x=1&amp;y=2" target="_blank" rel="noopener noreferrer">'
        "Board</a>" in page
    )
    assert page.count("<rect") == 2 and '<div class="metric">24</div>' in page


def test_the_canvas_host_serves_a_report_where_no_script_can_run() -> None:
    store = MemoryStore()
    ref = _show(store, title="r", report=REPORT)["ref"]
    settings = UiSettings(token=TOKEN, canvas_port=8788, embed_sandbox="trusted")
    app: Any = create_app(Agent(model=ScriptedModel([]), store=store), settings)
    with TestClient(app.state.canvas_app, base_url="http://127.0.0.1:8788") as client:
        response = client.get(
            f"/__openclaw__/cap/{CAP}/__openclaw__/canvas/widgets/{ref}/index.html"
        )
    assert response.status_code == 200
    policy = response.headers["content-security-policy"]
    assert policy.startswith("sandbox allow-popups allow-popups-to-escape-sandbox;")
    assert "script-src 'none'" in policy and "allow-scripts" not in policy
    assert b"<script" not in response.content  # not even the realm guard: nothing runs


_RAGGED = {"type": "table", "columns": ["a", "b"], "rows": [["1"]]}
_TOO_BIG = {"blocks": [{"type": "text", "text": "x" * 3000}] * 3}
BAD: dict[str, tuple[dict[str, Any], str]] = {
    "both": ({"widget_code": "<p/>", "report": REPORT}, "needs exactly one of `widget_code`"),
    "neither": ({}, "needs exactly one of `widget_code`"),
    "unknown-type": ({"report": {"blocks": [{"type": "html", "html": "<p>"}]}},
                     "block 1: needs `type` of ['chart', 'links', 'metrics', 'table', 'text']"),
    "unknown-field": ({"report": {"blocks": [{"type": "text", "text": "a", "style": "x"}]}},
                      "block 1: has unknown fields ['style']"),
    "no-blocks": ({"report": {"blocks": []}}, "`blocks`: needs a list of 1–24 entries"),
    "too-big": ({"report": _TOO_BIG}, "bytes of JSON; the limit is 8192"),
    "ragged-row": ({"report": {"blocks": [_RAGGED]}}, "block 1 row 1: needs a list of 2–2"),
    "javascript-link": ({"report": {"blocks": [{"type": "links", "items": [
        {"label": "x", "url": "javascript:alert(1)"}]}]}}, "`url` needs an http(s) address"),
    "infinite": ({"report": {"blocks": [{"type": "chart", "points": [
        {"label": "x", "value": float("inf")}]}]}}, "needs a finite number"),
    "string-number": ({"report": {"blocks": [{"type": "chart", "points": [
        {"label": "x", "value": "3"}]}]}}, "`value` needs a number, got '3'"),
}  # fmt: skip


@pytest.mark.parametrize(("arguments", "message"), BAD.values(), ids=BAD.keys())
def test_a_bad_report_is_refused_saying_where(arguments: dict[str, Any], message: str) -> None:
    store = MemoryStore()
    with pytest.raises(ToolError) as caught:
        _show(store, title="t", **arguments)
    assert message in caught.value.message


def test_the_chat_draws_a_report_as_a_scriptless_frame() -> None:
    store = MemoryStore()
    code = f"return await show_widget({{ title: 'Weekly', report: {json.dumps(REPORT)} }});"
    agent = Agent(model=ScriptedModel([exec_call(code), "Here it is."]),
                  tools=[widget_tool(store)], store=store)  # fmt: skip
    settings = UiSettings(token=TOKEN, canvas_port=8788, embed_sandbox="trusted")
    with TestClient(create_app(agent, settings), base_url=BASE) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200
        csrf = {"x-csrf-token": Secrets(token=TOKEN).csrf}
        client.post("/api/sessions/s/turns", json={"text": "go"}, headers=csrf)
        page = client.get("/?session=s").text
    frame = re.search(r'<iframe class="report-frame" data-src="([^"]+)" sandbox="([^"]*)"', page)
    assert frame is not None, page
    assert "/__openclaw__/canvas/widgets/wgr_" in frame.group(1)
    assert frame.group(2) == "allow-popups allow-popups-to-escape-sandbox"
    assert 'data-scripts="off"' in page and 'data-kind="report"' in page


def test_the_report_cell_in_the_widgets_page_runs_as_written() -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "widgets.md").read_text("utf-8")
    section = page[page.index("### Report mode") :]
    cell = re.search(r"^```js\n(.*?)^```", section, re.M | re.S)
    assert cell is not None

    async def main() -> dict[str, Any]:
        store = MemoryStore()
        async with CodeMode([widget_tool(store)], store=store, session_id="docs") as mode:
            return await mode.exec(cell.group(1) + "\nreturn shown;")

    envelope = asyncio.run(main())
    assert envelope["status"] == "completed", envelope
    assert envelope["value"]["ref"].startswith("wgr_")
