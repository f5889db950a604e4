"""Costs of composer attachments (a script, not a test).

Run: `.venv/bin/python bench/bench_attachments.py [rounds]`. Over one `SQLiteStore` (in a
temporary folder) and Starlette's test client: uploading a 5 MiB image (the default per-file
cap), and what files kept in the transcript cost later: reading a 20-message session's
transcript, rendering its chat page, and serving one thumbnail, each for a session without
files and one whose 4 user messages each carry a 2.5 MiB image (10 MiB in all, the default
per-message cap). Rounds alternate between the two sessions; medians in ms, and the ratio.
Writes `bench/results/attachments.{json,md}`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from _common import machine_meta, write_results
from clawcell.agent import Agent, Attachment, ScriptedModel
from clawcell.agent._transcript import user_entry
from clawcell.store import SQLiteStore
from clawcell.ui import UiSettings, create_app
from clawcell.ui._security import Secrets

TOKEN = "bench-token-0123456789"
BASE = "http://127.0.0.1:8787"
UPLOAD = "/api/sessions/u/attachments?name=a.png"
CSRF = {"x-csrf-token": Secrets(token=TOKEN).csrf}


def _png(size: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8)


def _session(with_images: bool) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for n in range(10):
        files = (
            [Attachment.of(f"shot-{n}.png", _png(5 * 2**19)).block()]
            if with_images and n < 4
            else []
        )
        entries.append(user_entry(f"question {n}", turn_id=f"t{n}", attachments=files))
        entries.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {n}"}],
                        "turnId": f"t{n}", "stopReason": "stop"})  # fmt: skip
    return entries


def _ms(function: Callable[[], Any]) -> float:
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1000


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "state.db")
        agent = Agent(model=ScriptedModel([]), store=store)
        with TestClient(create_app(agent, UiSettings(token=TOKEN)), base_url=BASE) as http:
            assert http.get(f"/?token={TOKEN}").status_code == 200
            portal = http.portal
            assert portal is not None
            for name, images in (("plain", False), ("images", True)):
                portal.call(store.append_transcript, name, _session(images))
            stored = portal.call(store.read_transcript, "images")
            digest = stored[0]["content"][1]["sha256"]
            image = _png(5 * 2**20)
            samples: dict[str, list[float]] = {}

            def measure(label: str, function: Callable[[], Any]) -> None:
                samples.setdefault(label, []).append(_ms(function))

            for _ in range(rounds):
                measure("upload a 5 MiB image",
                        lambda: http.post(UPLOAD, content=image, headers=CSRF))  # fmt: skip
                for name in ("plain", "images"):  # alternated: the same load for both
                    measure(f"read_transcript ({name})",
                            lambda n=name: portal.call(store.read_transcript, n))  # fmt: skip
                    measure(f"chat page ({name})", lambda n=name: http.get(f"/?session={n}"))
                measure("one thumbnail (images)",
                        lambda: http.get(f"/api/sessions/images/attachments/{digest}"))  # fmt: skip
        asyncio.run(agent.aclose())
    medians = {label: statistics.median(values) for label, values in samples.items()}
    rows = [f"| {label} | {value:.1f} |" for label, value in medians.items()]
    ratios = [
        f"| {what}: with images / without | "
        f"{medians[f'{what} (images)'] / medians[f'{what} (plain)']:.1f}× |"
        for what in ("read_transcript", "chat page")
    ]
    load = os.getloadavg()[0]
    table = "\n".join([f"| measure (median of {rounds} rounds) | ms |", "| --- | ---: |",
                       *rows, *ratios])  # fmt: skip
    markdown = f"{table}\n\nLoad average (1 min) at the end: {load:.2f}.\n"
    print(markdown)
    meta = machine_meta(rounds=rounds, sha256=hashlib.sha256(image).hexdigest()[:8])
    write_results("attachments", {"meta": meta, "medians_ms": medians}, markdown)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
