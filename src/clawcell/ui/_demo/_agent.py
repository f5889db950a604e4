"""`clawcell serve --demo`: a `ScriptedModel` agent whose turns exercise every render path.

At start the demo plays eight scripted turns into the session `demo` (Markdown, an image, a
voice note with a reply target, canvases, a stored canvas with a `strict` sandbox ceiling, a
truncated cell, a waiting cell continued by `wait`, a failed cell, a `show_widget` widget with
`sendPrompt` buttons, a YouTube card and an MCP App from the demo's own MCP server
(`_app_server`, with the `[mcp]` extra), and last a cell whose `deploy` call waits for
approval, so the page opens on an approval card); every later message gets a cell with live
output and an echo.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import re
import sys
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any, Final, cast

from ... import Tool
from ...agent import Agent, ModelRequest, ScriptedModel, ScriptedTurn, exec_call, wait_call
from ...mcp import ServerConfig, StdioServer, mcp_app_sink
from ...store import MemoryStore
from .._documents import canvas_tool
from .._mcp_apps._api import McpAppApi
from .._protocol import ChatAgent
from .._widgets._tool import widget_tool
from ._media_files import write_demo_media

__all__ = ["DEMO_SESSION", "demo_agent", "demo_script"]

DEMO_SESSION: Final = "demo"
_CANVAS_HTML: Final = """<!doctype html>
<link rel="stylesheet" href="style.css">
<h1>Hosted canvas</h1>
<p id="state">Scripts are <strong>blocked</strong> in this sandbox tier.</p>
<button id="count" type="button">clicked 0×</button>
<script src="app.js"></script>
"""
_CANVAS_JS: Final = """document.getElementById("state").innerHTML =
  "Scripts <strong>ran</strong> (origin: " + String(self.origin) + ")";
let n = 0;
document.getElementById("count").onclick = (e) => { e.target.textContent = `clicked ${++n}×`; };
"""
_CANVAS_CSS: Final = "body{font:15px system-ui;margin:1rem;color:#1d2430}h1{font-size:1.1rem}"
_STATIC_HTML: Final = (
    "<!doctype html><body style='font:15px system-ui'><h1>Static</h1><p>No script."
)


def _last_tool_text(request: ModelRequest) -> str:
    for message in reversed(request.messages):
        if message.get("role") == "toolResult":
            return "".join(str(b.get("text", "")) for b in message.get("content", []))
    return ""


def _found(pattern: str, request: ModelRequest) -> str:
    match = re.search(pattern, _last_tool_text(request))
    return match.group(1) if match else "missing"


def _canvas_reply(request: ModelRequest) -> str:
    refs = list(dict.fromkeys(re.findall(r'"ref":"(cv_[0-9a-f]+)"', _last_tool_text(request))))
    first, second = [*refs, "missing", "missing"][:2]
    return (
        "Two hosted canvases. The first runs a script only when the tier allows it; the "
        "second is static.\n"
        f'[embed ref="{first}" title="Interactive canvas" height="220" /]\n'
        f'[embed ref="{second}" title="Static canvas" height="160" /]\n'
        'These never render: [embed url="javascript:alert(1)" /] '
        '[embed url="https://example.com/board" /]'
    )


def _wait_for_run(request: ModelRequest) -> ScriptedTurn:
    return wait_call(_found(r'"runId":"(cm_[^"]+)"', request))


def _echo(request: ModelRequest) -> str:
    user = [m for m in request.messages if m.get("role") == "user"][-1]
    text = "".join(str(b.get("text", "")) for b in user.get("content", []))
    return f"You said:\n\n> {text}\n\n(This is the scripted demo model.)"


def _live(request: ModelRequest) -> ScriptedTurn:
    """After the seeded turns: a live cell for a message, an echo after it, and a closing
    line once a decision has let the `deploy` cell go on (whenever that happens)."""
    last: Mapping[str, Any] = request.messages[-1] if request.messages else {}
    if last.get("role") != "toolResult":
        return exec_call(_LIVE_CELL, title="live output")
    if last.get("toolName") == "wait":
        try:
            envelope: object = json.loads(_last_tool_text(request))
        except ValueError:
            envelope = {}
        value = cast(dict[str, Any], envelope).get("value") if isinstance(envelope, dict) else None
        return f"Your decision reached the cell; it returned `{json.dumps(value)}`."
    return _echo(request)


def demo_script(chart: Path, voice: Path) -> tuple[list[str], list[ScriptedTurn]]:
    """The seeded user messages and the model turns that answer them."""
    canvases = (
        f"const a = await canvas({{ html: {_CANVAS_HTML!r}, "
        f"assets: {{ 'app.js': {_CANVAS_JS!r}, 'style.css': {_CANVAS_CSS!r} }} }});\n"
        f"const b = await canvas({{ html: {_STATIC_HTML!r} }});\n"
        "json(a); return [a, b];"
    )
    messages = ["Show me some rich output.", "Send me a voice note.", "Make two canvases.",
                "Print a lot.", "Wait for something.", "Do something that fails.",
                "Show me a widget, a video and an app.", "Deploy the site."]  # fmt: skip
    turns: list[ScriptedTurn] = [
        "[[reply_to_current]] ## Rich output\n\nMarkdown is rendered on the server and "
        "sanitized: **bold**, `code`, [a link](https://example.com), and "
        "<script>window.pwned = 1</script> stays text.\n\n| tier | scripts |\n|---|---|\n"
        f"| strict | no |\n| scripts | yes |\n\nA chart:\nMEDIA:{chart}",
        f"[[audio_as_voice]] [[reply_to_current]] Here is a voice note.\nMEDIA:{voice}",
        exec_call(canvases, title="two canvases"),
        _canvas_reply,
        exec_call('text("x".repeat(80000)); return "done";', title="a lot of output"),
        "The output was cut by the budget; the card shows the truncation marker.",
        exec_call('text("asking for input"); await yield_control(); return 42;'),
        _wait_for_run,
        "The cell parked as `waiting`, and `wait` continued it to **42**.",
        exec_call('text("about to fail"); throw new Error("the demo cell failed on purpose");'),
        "That cell failed; its card shows the code and the error.",
        exec_call(_SURFACES_CELL, title="widget and MCP App"),
        "A widget from `show_widget` (its buttons call `sendPrompt`: a click sends your pick "
        "as a message), a YouTube card (nothing loads from YouTube but the thumbnail until "
        "you press Play), and the counter, an MCP App from the demo's MCP server (its +1 "
        "asks for approval first).\n"
        f'[embed url="{DEMO_VIDEO}" title="Big Buck Bunny (Blender Foundation)" /]',
        exec_call(_DEPLOY_CELL, title="needs approval"),
    ]
    return messages, turns + [_live] * 400


_DEPLOY_CELL: Final = (
    'text("asking to deploy");\n'
    'try { return await deploy({ target: "production" }); }\n'
    "catch (error) { return `not deployed: ${error.message}`; }"
)

DEMO_VIDEO: Final = "https://www.youtube.com/watch?v=aqz-KE-bpKQ&t=30s"
_WIDGET: Final = """<div class="card">
  <p class="muted">Which colour should the next chart use?</p>
  <div class="row">
    <button class="primary" onclick="sendPrompt('Use blue for the chart.')">Blue</button>
    <button onclick="sendPrompt('Use green for the chart.')">Green</button>
    <button onclick="sendPrompt('Use orange for the chart.')">Orange</button>
  </div>
  <p><span class="badge ok">scripts on</span> <span id="clock" class="muted"></span></p>
</div>
<script>
  document.getElementById("clock").textContent = "rendered at " + new Date().toLocaleTimeString();
</script>"""
_SURFACES_CELL: Final = (
    f"const widget = await show_widget({{ title: 'Pick a colour', widget_code: {_WIDGET!r} }});\n"
    "let app = 'no MCP App: install the [mcp] extra';\n"
    "if (typeof MCP !== 'undefined' && MCP.demo) {\n"
    "  try { app = await MCP.demo.showCounter({ start: 1 }); }\n"
    "  catch (error) { app = `no MCP App: ${error.message}`; }\n"
    "}\n"
    "return { widget: widget.ref, app };"
)

_LIVE_CELL: Final = (
    "for (let i = 1; i <= 3; i++) { text(`step ${i} of 3`); await pause({ ms: 400 }); }\n"
    'return "finished";'
)


async def _pause(arguments: dict[str, Any]) -> None:
    await asyncio.sleep(min(float(arguments.get("ms", 0)), 2000) / 1000)


async def _deploy(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"deployed": arguments.get("target"), "at": "https://example.com/"}


def demo_tools(store: MemoryStore) -> list[Tool]:
    """The demo's tools: `canvas`, a `pause` that makes live output visible, and a `deploy`
    that always asks for approval."""
    pause = Tool(name="pause", description="Wait `ms` milliseconds.", execute=_pause)
    deploy = Tool(name="deploy", description="Deploy the site (asks first).", execute=_deploy,
                  approval="always")  # fmt: skip
    return [canvas_tool(store), widget_tool(store), pause, deploy]


_CEILING_REF: Final = "cv_demo_strict"


async def _seed_ceiling(store: MemoryStore) -> None:
    """A stored canvas block whose own `sandbox` ceiling is `strict` (as tool previews carry)."""
    await store.put_document(
        _CEILING_REF,
        {"index.html": _CANVAS_HTML.encode(), "app.js": _CANVAS_JS.encode(),
         "style.css": _CANVAS_CSS.encode()},
    )  # fmt: skip
    preview = {
        "kind": "canvas", "surface": "assistant_message", "render": "url",
        "url": f"/__openclaw__/canvas/documents/{_CEILING_REF}/index.html",
        "viewId": _CEILING_REF, "title": "Same canvas, strict ceiling", "preferredHeight": 180,
        "sandbox": "strict",
    }  # fmt: skip
    text = (
        "The interactive canvas again, from a stored block whose own `sandbox` ceiling is "
        "`strict`: its script does not run whatever the tier (`clawcell serve --demo "
        "--embed-sandbox trusted` shows the third tier)."
    )
    entry = {"role": "assistant", "content": [{"type": "text", "text": text},
             {"type": "canvas", "preview": preview}], "turnId": "demo-ceiling"}  # fmt: skip
    await store.append_transcript(DEMO_SESSION, [entry])


def _demo_servers() -> dict[str, ServerConfig]:
    """The demo's MCP server (an MCP App), when the `[mcp]` extra is installed."""
    if importlib.util.find_spec("mcp") is None:
        return {}
    module, root = "clawcell.ui._demo._app_server", Path(__file__).parents[3]  # this clawcell
    server = StdioServer(command=sys.executable, args=["-m", module], cwd=str(root),
                         ask=["increment"])  # fmt: skip
    return {"demo": server}


@contextlib.asynccontextmanager
async def demo_agent(media_dir: Path) -> AsyncGenerator[ChatAgent]:
    """A demo `Agent` with the `demo` session seeded; its media files go to `media_dir`."""
    chart, voice = write_demo_media(media_dir)
    messages, turns = demo_script(chart, voice)
    store = MemoryStore()
    async with Agent(model=ScriptedModel(turns), tools=demo_tools(store), store=store,
                     mcp_servers=_demo_servers()) as agent:  # fmt: skip
        mcp_app_sink.set(McpAppApi(agent, store).sink_for(DEMO_SESSION))
        for number, text in enumerate(messages, 1):
            async for _ in agent.run(DEMO_SESSION, text, message_id=f"demo-{number}"):
                pass
            if number == 3:
                await _seed_ceiling(store)
        yield agent
