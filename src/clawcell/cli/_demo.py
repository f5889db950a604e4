"""`clawcell demo`: a short, readable tour of code mode."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sysconfig
from pathlib import Path
from typing import Any

from .. import CodeMode, Limits, Tool
from .._lazy import install_hint
from ..errors import ToolError

__all__ = ["run_demo"]

_SHIPMENTS = [
    {"id": "a-101", "paid": True, "tons": 3.5},
    {"id": "b-202", "paid": False, "tons": 12.0},
    {"id": "c-303", "paid": True, "tons": 7.25},
]


async def _list_shipments(_: dict[str, Any]) -> list[dict[str, Any]]:
    return _SHIPMENTS


async def _quote(params: dict[str, Any]) -> dict[str, Any]:
    return {"id": params["id"], "eur": round(float(params["tons"]) * 41.5, 2)}


async def _carrier_status(_: dict[str, Any]) -> dict[str, Any]:
    raise ToolError("carrier backend unavailable")


def _tools() -> list[Tool]:
    return [
        Tool(
            name="list_shipments",
            description="List shipments with payment status and weight in tons.",
            execute=_list_shipments,
        ),
        Tool(
            name="quote",
            description="Price a shipment by weight.",
            parameters={
                "type": "object",
                "properties": {"id": {"type": "string"}, "tons": {"type": "number"}},
                "required": ["id", "tons"],
            },
            execute=_quote,
        ),
        Tool(name="carrier_status", description="Ask the carrier.", execute=_carrier_status),
    ]


_STEPS: list[tuple[str, str]] = [
    (
        "A cell composes two tools and returns only what matters",
        "const rows = await list_shipments();\n"
        "const paid = rows.filter((r) => r.paid);\n"
        "const quotes = await Promise.all(paid.map((r) => quote({ id: r.id, tons: r.tons })));\n"
        "text(`priced ${quotes.length} paid shipments`);\n"
        "return quotes;",
    ),
    (
        "Output beyond the budget becomes an exact truncation marker",
        "for (let i = 0; i < 200; i++) text('line ' + i + ' of a chatty tool');\nreturn 'done';",
    ),
    (
        "A tool error is an ordinary, catchable JavaScript error",
        "try {\n  await carrier_status();\n} catch (error) {\n"
        "  return { caught: error.message, code: error.code, effect: error.effectStatus };\n}",
    ),
    ("A busy loop is stopped at the deadline", "while (true) {}"),
]


def _show(title: str, code: str, envelope: dict[str, Any]) -> None:
    shown = {k: v for k, v in envelope.items() if k != "telemetry"}
    print(f"\n== {title}\n")
    print("\n".join("  js> " + line for line in code.splitlines()))
    print()
    print("  " + json.dumps(shown, indent=2, ensure_ascii=False).replace("\n", "\n  "))


async def run_demo() -> None:
    """Run the tour and print each cell with its envelope (telemetry omitted)."""
    limits = Limits(timeout_ms=500, max_output_bytes=1024)
    print("clawcell demo: JavaScript cells calling Python tools in a QuickJS sandbox")
    print(f"limits: timeout {limits.timeout_ms} ms, output budget {limits.max_output_bytes} B")
    async with CodeMode(_tools(), limits=limits) as mode:
        for title, code in _STEPS:
            _show(title, code, await mode.exec(code))
    await _agent_turn()
    print(_next_steps())


_AGENT_REPLY = (
    "The paid shipments cost 145.25 EUR (a-101) and 300.88 EUR (c-303).\n"
    "MEDIA:https://example.com/clawcell/quotes.png\n"
    '[embed ref="cv_quotes" title="Quotes" /]'
)


async def _agent_turn() -> None:
    """One agent turn: a scripted model writes a cell, then answers with media and an embed."""
    from ..agent import Agent, ScriptedModel, exec_call

    model = ScriptedModel([exec_call(_STEPS[0][1], title="Price paid shipments"), _AGENT_REPLY])
    print("\n== An agent turn: a model writes a cell, the reply carries media and a canvas\n")
    streamed: list[str] = []
    async with Agent(model=model, tools=_tools()) as agent:
        async for event in agent.run("demo", "What do the paid shipments cost?"):
            if event.type == "text_delta":
                streamed.append(event.to_dict()["text"])
                continue
            if streamed:
                print(f"  {'text_delta':<14} ×{len(streamed)}: {json.dumps(''.join(streamed))}")
                streamed = []
            _show_event(event.type, event.to_dict())


def _show_event(kind: str, wire: dict[str, Any]) -> None:
    shown = {k: v for k, v in wire.items() if k not in ("type", "turnId")}
    if isinstance(shown.get("envelope"), dict):
        shown["envelope"] = {k: v for k, v in shown["envelope"].items() if k != "telemetry"}
    print(f"  {kind:<14} {json.dumps(shown, ensure_ascii=False)}")


_DOCS = "https://github.com/clawcell/clawcell/tree/main/docs"


def _next_steps() -> str:
    """What to try after the tour, with commands that run where the demo ran."""
    clawcell = _command("clawcell")
    ui = (
        f"  {clawcell} serve --demo"
        if importlib.util.find_spec("starlette") is not None
        else f"  first add the [ui] extra: {install_hint('ui')}\n  then: {clawcell} serve --demo"
    )
    return "\n".join(
        [
            "\n== What to try next\n",
            "The Control UI: a scripted agent chatting in the browser, no model key needed",
            ui,
            "A cell of your own (add --telemetry for the catalog and call counts):",
            f"  echo 'return 6 * 7;' | {clawcell} run -",
            f"  {clawcell} repl",
            "The docs: README.md and docs/cli.md, docs/code-mode.md, docs/agents.md",
            f"  {_DOCS}",
        ]
    )


def _command(name: str) -> str:
    """`name` as the user types it: bare when `PATH` finds this environment's script, else
    its path (relative to the current directory when it lies under it)."""
    script = Path(sysconfig.get_path("scripts")) / name
    found = shutil.which(name)
    if found is not None and Path(found).resolve() == script.resolve():
        return name
    try:
        relative = script.relative_to(Path.cwd())
    except ValueError:
        return str(script)
    return str(relative)
