"""`show_widget`: input checks, the canonical page, retention and the canvas-host route."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from clawcell import ToolError
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, canvas_tool, create_app, widget_tool
from clawcell.ui._security import Secrets
from clawcell.ui._widgets._page import inline_scripts, widget_page
from clawcell.ui._widgets._tool import MAX_WIDGET_CHARS, MAX_WIDGETS_PER_SESSION
from tests.ui._client import BASE, TOKEN

CAP = Secrets(token=TOKEN).canvas_cap


async def _execute(tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    return await tool.execute(arguments)


def _show(store: MemoryStore, **arguments: Any) -> dict[str, Any]:
    return asyncio.run(_execute(widget_tool(store), arguments))


def _refused(store: MemoryStore, **arguments: Any) -> str:
    with pytest.raises(ToolError) as caught:
        _show(store, **arguments)
    return caught.value.message


def test_a_widget_is_stored_as_its_canonical_page_and_returns_a_preview_handle() -> None:
    store = MemoryStore()
    result = _show(store, title="Pick", widget_code="<button>blue</button>")
    assert result["status"] == "shown" and re.fullmatch(r"wg_[0-9a-f]{20}", result["ref"])
    assert result["url"] == f"/__openclaw__/canvas/widgets/{result['ref']}/index.html"
    assert result["mcpAppPreview"]["view"] == {"id": result["ref"], "url": result["url"]}
    page = asyncio.run(store.get_document_file(result["ref"], "index.html"))
    assert page is not None
    text = page.decode()
    assert "<title>Pick</title>" in text and "--accent-fill" in text and "sendPrompt" in text
    assert text.index("sendPrompt") < text.index("<button>blue</button>")  # bridge first


def test_a_syntax_error_in_an_inline_script_rejects_the_call_with_its_position() -> None:
    store = MemoryStore()
    code = "<p>hi</p>\n<script>\nconst a = 1;\n  call(;\n</script>"
    assert _refused(store, title="t", widget_code=code) == (
        "widget script 1 has a syntax error at line 4, column 8 of `widget_code`: Unexpected "
        "token. Fix the script and call `show_widget` again; nothing was stored."
    )
    assert asyncio.run(store.get_document_file("wg_anything", "index.html")) is None


def test_module_scripts_are_parsed_as_modules_and_the_column_counts_from_the_tag() -> None:
    store = MemoryStore()
    assert _show(store, title="m", widget_code='<script type="module">await 1;</script>')
    message = _refused(store, title="m", widget_code="<b>x</b><script type=module>let = ;</script>")
    assert message.startswith(
        "widget module script 1 has a syntax error at line 1, column 29 "
        "of `widget_code`: The keyword 'let' is reserved."
    )


def test_scripts_with_src_or_a_data_type_are_not_parsed() -> None:
    code = (
        '<script src="x.js">not js at all(</script><script type="application/json">{bad</script>'
        '<script type="text/template"><%= x %></script><script>ok()</script>'
    )
    assert [s.code for s in inline_scripts(code)] == ["ok()"]
    assert _show(MemoryStore(), title="t", widget_code=code)["status"] == "shown"


_NEEDS = "`show_widget` needs a non-empty string"
_LONG = "characters; the limit is"
BAD_INPUT = {
    "no-title": ({"widget_code": "<p>x</p>"}, f"{_NEEDS} `title`, got None."),
    "blank-title": ({"title": " ", "widget_code": "<p/>"}, f"{_NEEDS} `title`, got ' '."),
    "code-not-text": ({"title": "t", "widget_code": 5}, f"{_NEEDS} `widget_code`, got 5."),
    "long-title": (
        {"title": "t" * 121, "widget_code": "x"},
        f"`show_widget` `title` has 121 {_LONG} 120 (make it shorter).",
    ),
    "long-code": (
        {"title": "t", "widget_code": "x" * (MAX_WIDGET_CHARS + 1)},
        f"`show_widget` `widget_code` has 262145 {_LONG} 262144 (make it shorter).",
    ),
    "extra-field": (
        {"title": "t", "widget_code": "x", "pin": True},
        "`show_widget` takes only `title` and `widget_code` or `report`, got ['pin']; drop the "
        "other fields.",
    ),
}


@pytest.mark.parametrize(("arguments", "message"), BAD_INPUT.values(), ids=BAD_INPUT.keys())
def test_bad_input_is_refused_with_a_clear_message(arguments: dict[str, Any], message: str) -> None:
    assert _refused(MemoryStore(), **arguments) == message


def test_code_of_exactly_the_limit_is_accepted() -> None:
    assert _show(MemoryStore(), title="t", widget_code="x" * MAX_WIDGET_CHARS)["status"] == "shown"


def test_svg_code_renders_in_svg_mode() -> None:
    assert '<body class="svg-widget">' in widget_page("s", '  <svg viewBox="0 0 1 1"></svg>')
    assert "<body>" in widget_page("h", "<p>x</p>")
    assert "<title>&lt;b&gt;</title>" in widget_page("<b>", "x")


def test_a_session_keeps_its_newest_widgets_and_the_oldest_document_is_replaced() -> None:
    store = MemoryStore()
    tool = widget_tool(store)

    async def many() -> list[str]:
        return [
            (await _execute(tool, {"title": f"w{i}", "widget_code": f"<p>{i}</p>"}))["ref"]
            for i in range(MAX_WIDGETS_PER_SESSION + 2)
        ]

    refs = asyncio.run(many())
    pages = [asyncio.run(store.get_document_file(ref, "index.html")) or b"" for ref in refs]
    assert all(b"This widget was removed" in page for page in pages[:2])
    assert all(b"This widget was removed" not in page for page in pages[2:])
    assert b"<p>2</p>" in pages[2]


def _canvas(store: MemoryStore, tier: str = "scripts") -> TestClient:
    settings = UiSettings(token=TOKEN, canvas_port=8788, embed_sandbox=tier)  # type: ignore[arg-type]
    app: Any = create_app(Agent(model=ScriptedModel([]), store=store), settings)
    return TestClient(app.state.canvas_app, base_url="http://127.0.0.1:8788")


@pytest.mark.parametrize(
    ("tier", "sandbox"),
    [
        ("strict", "sandbox;"),
        ("scripts", "sandbox allow-scripts;"),
        ("trusted", "sandbox allow-scripts;"),
    ],
)
def test_the_canvas_host_serves_widgets_sandboxed_without_network_in_every_tier(
    tier: str, sandbox: str
) -> None:
    store = MemoryStore()
    ref = _show(store, title="t", widget_code="<p>w</p>")["ref"]
    response = _canvas(store, tier).get(
        f"/__openclaw__/cap/{CAP}/__openclaw__/canvas/widgets/{ref}/index.html"
    )
    assert response.status_code == 200 and b"<p>w</p>" in response.content
    policy = response.headers["content-security-policy"]
    assert policy.startswith(sandbox) and "allow-same-origin" not in policy
    assert "connect-src 'none'" in policy and "frame-src 'none'" in policy
    assert response.headers["referrer-policy"] == "no-referrer"


def test_widget_documents_are_never_served_or_rewritten_as_hosted_documents() -> None:
    store = MemoryStore()
    ref = _show(store, title="t", widget_code="<p>w</p>")["ref"]
    host = _canvas(store)
    assert (
        host.get(
            f"/__openclaw__/cap/{CAP}/__openclaw__/canvas/documents/{ref}/index.html"
        ).status_code
        == 404
    )
    assert (
        host.get(f"/__openclaw__/cap/{CAP}/__openclaw__/canvas/widgets/cv_1/index.html").status_code
        == 404
    )
    with pytest.raises(ToolError, match="no canvas document 'wg_"):
        asyncio.run(_execute(canvas_tool(store), {"html": "<p>unchecked</p>", "ref": ref}))


def _chat(tier: str) -> str:
    store = MemoryStore()
    code = (
        'return await show_widget({ title: "Pick a colour", '
        'widget_code: "<button>blue</button>" });'
    )
    agent = Agent(model=ScriptedModel([exec_call(code), "Here it is."]),
                  tools=[widget_tool(store)], store=store)  # fmt: skip
    settings = UiSettings(token=TOKEN, canvas_port=8788, embed_sandbox=tier)  # type: ignore[arg-type]
    with TestClient(create_app(agent, settings), base_url=BASE) as test_client:
        assert test_client.get(f"/?token={TOKEN}").status_code == 200
        csrf = {"x-csrf-token": Secrets(token=TOKEN).csrf}
        test_client.post("/api/sessions/s/turns", json={"text": "go"}, headers=csrf)
        return test_client.get("/?session=s").text  # the widget survives a reload


@pytest.mark.parametrize(
    ("tier", "sandbox"),
    [("strict", ""), ("scripts", "allow-scripts"), ("trusted", "allow-scripts")],
)
def test_the_reply_shows_the_widget_on_the_canvas_origin_never_same_origin(
    tier: str, sandbox: str
) -> None:
    page = _chat(tier)
    frame = re.search(r'<iframe class="widget-frame" data-src="([^"]+)" sandbox="([^"]*)"', page)
    assert frame is not None, page
    assert frame.group(1).startswith(
        f"http://127.0.0.1:8788/__openclaw__/cap/{CAP}/__openclaw__/canvas/widgets/wg_"
    )
    assert frame.group(2) == sandbox
    assert "<figcaption>Pick a colour</figcaption>" in page
