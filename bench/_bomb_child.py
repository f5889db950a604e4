"""One `web_fetch` of a decompression bomb in a fresh process (run by `bench_tools.py --bombs`).

Arguments: the source tree (already on `PYTHONPATH`), the `Content-Encoding`, the body file.
Prints one JSON line: peak RSS growth over the baseline taken after a clean fetch, the bytes
kept, the outcome and the seconds the bomb took.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from clawcell import ToolError
from clawcell.catalog import Catalog
from clawcell.tools import web


def _serve(encoding: str, body: bytes) -> ThreadingHTTPServer:
    class _Bomb(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            bomb = self.path == "/bomb"
            payload = body if bomb else b"clean"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            if bomb:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Bomb)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return server


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _fetch(catalog: Catalog, url: str) -> tuple[int, str]:
    try:
        result = await catalog.call("web_fetch", {"url": url})
    except ToolError as failed:
        return 0, failed.code
    return int(result["bytes"]), "cut" if result["truncated"] else "whole"


def main() -> None:
    _src, encoding, path = sys.argv[1:4]
    server = _serve(encoding, Path(path).read_bytes())
    base = f"http://127.0.0.1:{server.server_address[1]}"
    catalog = Catalog(web(allow_loopback_for_tests=True))
    asyncio.run(_fetch(catalog, f"{base}/clean"))
    baseline = _peak_mib()
    started = time.perf_counter()
    kept, outcome = asyncio.run(_fetch(catalog, f"{base}/bomb"))
    seconds = time.perf_counter() - started
    server.shutdown()
    report = {"growth_mib": _peak_mib() - baseline, "bytes": kept, "outcome": outcome}
    print(json.dumps(report | {"seconds": seconds}))


if __name__ == "__main__":
    main()
