"""Latency of the built-in tools, called through a `Catalog` (contracts checked; a script).

Run: `.venv/bin/python bench/bench_tools.py`. Builds a scratch workspace and a loopback HTTP
server, prints a table of medians and writes `bench/results/tools.json` and `.md`.

`--bombs [--before REF]` instead measures what `web_fetch` of a decompression bomb costs: each
bomb is fetched in a fresh process (`_bomb_child.py`), which reports its peak RSS growth over a
warmed-up baseline; with `--before`, the same runs against the source tree of git revision
`REF` for comparison. Writes `bench/results/tools_bombs.json` and `.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _common import RESULTS, machine_meta, median_table, serve_html, write_results
from clawcell.catalog import Catalog
from clawcell.tools import FetchSettings, web, workspace

ROUNDS = 15
PAGE = (
    "<html><head><title>Bench</title></head><body><main>"
    + "".join(
        f"<h2>Section {n}</h2><p>Text <a href='/{n}'>link {n}</a> and more.</p>"
        for n in range(2000)
    )
    + "</main></body></html>"
).encode()


def _tree(root: Path) -> None:
    for index in range(400):
        folder = root / f"dir{index % 20}"
        folder.mkdir(exist_ok=True)
        lines = "".join(
            f"line {n} of file {index} {'TODO' if n % 50 == 0 else ''}\n" for n in range(200)
        )
        (folder / f"file{index}.md").write_text(lines)
    (root / "big.txt").write_text("".join(f"row {n:07d} some text here\n" for n in range(40_000)))
    (root / "edit.txt").write_text("alpha\nbeta\ngamma\n" * 200)


async def _median_ms(action: Callable[[], Awaitable[Any]]) -> float:
    await action()
    samples: list[float] = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        await action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def _measure(root: Path, url: str) -> list[tuple[str, float]]:
    files = Catalog(workspace(root))
    cached = Catalog(web(allow_loopback_for_tests=True, settings=FetchSettings()))
    toggle = {"old": "BETA", "new": "beta"}

    async def edit() -> Any:
        toggle["old"], toggle["new"] = toggle["new"], toggle["old"]
        return await files.call(
            "edit",
            {
                "path": "edit.txt",
                "oldText": toggle["old"],
                "newText": toggle["new"],
                "replaceAll": True,
            },
        )

    def read() -> Awaitable[Any]:
        return files.call("read", {"path": "big.txt"})

    def grep() -> Awaitable[Any]:
        return files.call("grep", {"pattern": "TODO", "outputMode": "count"})

    def find() -> Awaitable[Any]:
        return files.call("find", {"pattern": "*.md"})

    def write() -> Awaitable[Any]:
        return files.call("write", {"path": "out/w.txt", "content": "x" * 10_000})

    def fetch_miss() -> Awaitable[Any]:
        first = Catalog(web(allow_loopback_for_tests=True))
        return first.call("web_fetch", {"url": url})

    def fetch_hit() -> Awaitable[Any]:
        return cached.call("web_fetch", {"url": url})

    return [
        ("read 50,000 chars of a 1.2 MB file", await _median_ms(read)),
        ("grep 400 files x 200 lines (count)", await _median_ms(grep)),
        ("find *.md over 400 files", await _median_ms(find)),
        ("write a 10 KB file", await _median_ms(write)),
        ("edit 200 replacements + diff", await _median_ms(edit)),
        ("web_fetch 140 KB HTML via loopback, new web()", await _median_ms(fetch_miss)),
        ("web_fetch, cache hit", await _median_ms(fetch_hit)),
    ]


BOMB_MIB = 256


def _bombs(folder: Path) -> dict[str, tuple[str, Path]]:
    """Bombs that decode to `BOMB_MIB` MiB, written to `folder`: name -> (encoding, file)."""
    import gzip
    import zlib

    import zstandard

    zeros = b"\0" * (1 << 20)
    inner = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    stream = b"".join(inner.compress(zeros) for _ in range(BOMB_MIB)) + inner.flush()
    packer = zstandard.ZstdCompressor(level=3).compressobj()
    zstd = b"".join(packer.compress(zeros) for _ in range(BOMB_MIB)) + packer.flush()
    bodies = {"gzip, gzip": gzip.compress(stream, 9), "gzip": stream, "zstd": zstd}
    found: dict[str, tuple[str, Path]] = {}
    for index, (encoding, body) in enumerate(bodies.items()):
        path = folder / f"bomb{index}"
        path.write_bytes(body)
        found[f"{encoding} ({len(body):,} bytes)"] = (encoding, path)
    return found


def _tree_of(ref: str, folder: Path) -> Path:
    """The `src` directory of git revision `ref`, extracted under `folder`."""
    archive = subprocess.run(
        ["git", "archive", ref, "src"], check=True, capture_output=True, cwd=RESULTS.parents[1]
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def _child(src: Path, encoding: str, body: Path) -> dict[str, Any]:
    child = Path(__file__).with_name("_bomb_child.py")
    done = subprocess.run(
        [sys.executable, str(child), str(src), encoding, str(body)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def bombs(before: str | None) -> None:
    """Peak RSS growth of fetching each bomb, in this tree and (optionally) in `before`."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        trees = {"this tree": RESULTS.parents[1] / "src"}
        if before is not None:
            trees[f"before ({before})"] = _tree_of(before, folder)
        rows = [
            {"bomb": name, "tree": tree, **_child(src, encoding, body)}
            for name, (encoding, body) in _bombs(folder).items()
            for tree, src in trees.items()
        ]
    lines = ["| bomb | tree | RSS growth MiB | bytes kept | outcome | s |"]
    lines.append("| --- | --- | ---: | ---: | --- | ---: |")
    lines += [
        f"| {row['bomb']} | {row['tree']} | {row['growth_mib']:.0f} | {row['bytes']:,} "
        f"| {row['outcome']} | {row['seconds']:.2f} |"
        for row in rows
    ]
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {"decoded_mib": BOMB_MIB, "max_bytes": 2 * 1024 * 1024, "rows": rows}
    (RESULTS / "tools_bombs.json").write_text(json.dumps(data, indent=2) + "\n")
    note = (
        f"Each bomb decodes to {BOMB_MIB} MiB; `web_fetch` keeps `max_bytes` (2 MiB). Peak RSS "
        "growth of a fresh process over its baseline after one clean fetch.\n"
    )
    (RESULTS / "tools_bombs.md").write_text(f"# web_fetch decompression bombs\n\n{note}\n{table}\n")


def main() -> None:
    """Measure, print the table and write the result files."""
    with serve_html(PAGE) as url, tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        _tree(root)
        rows = asyncio.run(_measure(root, url))
    table = median_table(("call", "median ms"), rows, 2)
    meta = machine_meta(rounds=ROUNDS)
    data = {"meta": meta, "rows": [{"call": name, "median_ms": round(v, 3)} for name, v in rows]}
    note = f"Medians of {ROUNDS} calls at a 1-minute load average of {meta['load_average_1m']}.\n"
    write_results("tools", data, f"# clawcell.tools benchmark\n\n{note}\n{table}\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Benchmark the built-in tools.")
    parser.add_argument("--bombs", action="store_true", help="measure decompression bombs")
    parser.add_argument("--before", help="also measure this git revision's tree (with --bombs)")
    options = parser.parse_args()
    if options.bombs:
        bombs(options.before)
    else:
        main()
