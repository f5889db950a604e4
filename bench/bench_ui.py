"""Costs of the web Control UI (a script, not a test).

Run: `.venv/bin/python bench/bench_ui.py`. Prints medians and writes `bench/results/ui.json`:
rendering one assistant reply (Markdown + media + two canvases), rendering the chat page of a
100-message session, and the time from POSTing a turn to its first SSE message and to its last
(a `ScriptedModel` agent with one cell), all through Starlette's test client on loopback.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore
from clawcell.ui import UiSettings, create_app
from clawcell.ui._media import MediaRoots
from clawcell.ui._render._messages import Renderer
from clawcell.ui._security import Secrets

RESULTS = Path(__file__).resolve().parent / "results"
TOKEN = "bench-token-0123456789"
REPLY = (
    "[[reply_to_current]] ## Weekly report\n\nRevenue is **up 4%**; see `q3.csv`.\n\n"
    "| week | eur |\n|---|---|\n| 1 | 10 |\n| 2 | 12 |\n\n[[audio_as_voice]]\n"
    "MEDIA:https://cdn.example.com/chart.png\nMEDIA:https://cdn.example.com/note.ogg\n"
    '[embed ref="cv_a" title="A" height="300" /]\n[embed ref="cv_b" /]'
)


def _median_ms(function: Callable[[], Any], rounds: int) -> float:
    samples: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def _render_reply() -> float:
    renderer = Renderer(
        settings=UiSettings(token=TOKEN), media=MediaRoots([]), canvas_host_url=None
    )
    return _median_ms(lambda: renderer.reply_text(REPLY), 200)


def _agent(turns: list[Any]) -> Agent:
    return Agent(model=ScriptedModel(turns), store=MemoryStore())


def _page_and_turns() -> tuple[float, float, float]:
    turns: list[Any] = []
    for _ in range(60):
        turns += [exec_call('text("working"); return 1;'), REPLY]
    agent = _agent(turns)
    client = TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url="http://127.0.0.1")
    headers = {"x-csrf-token": Secrets(token=TOKEN).csrf}
    first: list[float] = []
    total: list[float] = []
    with client:
        client.get(f"/?token={TOKEN}")
        for _ in range(25):
            start = time.perf_counter()
            with client.stream("POST", "/api/sessions/s/turns", json={"text": "go"},
                               headers=headers) as response:  # fmt: skip
                chunks = response.iter_text()
                next(chunks)
                first.append(time.perf_counter() - start)
                for _ in chunks:
                    pass
            total.append(time.perf_counter() - start)
        page = _median_ms(lambda: client.get("/?session=s"), 20)
    return page, statistics.median(first) * 1000, statistics.median(total) * 1000


def main() -> int:
    reply_ms = _render_reply()
    page_ms, first_ms, turn_ms = _page_and_turns()
    rows = {
        "render one rich reply (ms)": reply_ms,
        "chat page, 100 transcript entries, 25 cells (ms)": page_ms,
        "turn POST → first SSE message (ms)": first_ms,
        "turn POST → last SSE message, one cell (ms)": turn_ms,
    }
    for name, value in rows.items():
        print(f"| {name} | {value:.2f} |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ui.json").write_text(
        json.dumps(
            {"python": sys.version.split()[0], "machine": platform.machine(), "medians": rows},
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
