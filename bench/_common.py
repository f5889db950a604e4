"""What the benchmark scripts share: the results folder, the machine's figures, one table
writer and a loopback page server. Not a benchmark itself (`run.py` runs `bench_*.py` only).
"""

from __future__ import annotations

import json
import os
import platform
import threading
from collections.abc import Generator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (`/proc/cpuinfo`), else the architecture.

    Recorded with every comparison: the shared hosts this bench runs on change between
    sessions, and the same tree read 2.5 times faster on one host than on another while the
    original's own figures moved by a third (docs/benchmarks.md, "Stop 49")."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def machine_meta(**extra: Any) -> dict[str, Any]:
    """Python, machine, CPU model, load average and cores, then `extra`."""
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        **extra,
    }


def median_table(header: tuple[str, str], rows: list[tuple[str, float]], digits: int) -> str:
    """A two-column markdown table of named medians, printed and returned."""
    lines = [f"| {header[0]} | {header[1]} |", "| --- | ---: |"]
    lines += [f"| {name} | {value:.{digits}f} |" for name, value in rows]
    table = "\n".join(lines)
    print(table)
    return table


def write_results(stem: str, data: dict[str, Any], markdown: str) -> None:
    """`results/<stem>.json` from `data` and `results/<stem>.md` from `markdown`."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(markdown)


@contextmanager
def serve_html(page: bytes) -> Generator[str]:
    """Serve `page` for every GET on a loopback port; yields the server's URL."""

    class Page(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def timed_true_commands(tools: list[Any], calls: int) -> list[float]:
    """Seconds per `exec` of `true` through a catalog of the shell `tools`, `calls` times after
    two to warm up; closes the tools."""
    import time

    from clawcell.catalog import Catalog

    catalog = Catalog(tools)
    samples: list[float] = []
    try:
        for index in range(calls + 2):
            start = time.perf_counter()
            done = await catalog.call("exec", {"command": "true"})
            if index >= 2:
                samples.append(time.perf_counter() - start)
            assert done["status"] == "completed", done
    finally:
        for tool in tools:
            if tool.on_close is not None:
                tool.on_close()
    return samples
