"""`exec` of `true`, before and after the shell sandbox hardening (issue 35), in alternated rounds.

Run: `.venv/bin/python bench/bench_shell_sandbox.py [REV]`. REV (default: the merge base with
`main`) is the "before" source, unpacked with `git archive` into a temporary directory. Each
round runs one child process per (version, sandbox mode), in alternating order, and each child
times `CALLS` calls of `exec({command: "true"})` after two warm-up calls. The table shows the
median over all calls of each version, the after/before ratio, and the load average before and
after. Writes `bench/results/bench_shell_sandbox.json` and `.md`.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Literal

from _common import timed_true_commands

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
ROUNDS = 8
CALLS = 10
MODES = ("required", "off")


async def _child(mode: str, workspace: str) -> list[float]:
    from clawcell.tools import ShellSettings, shell

    sandbox: Literal["required", "off"] = "required" if mode == "required" else "off"
    tools = shell(workspace, settings=ShellSettings(approval="never", sandbox=sandbox))
    return await timed_true_commands(tools, CALLS)


def _run_child(src: Path, mode: str, workspace: str) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, __file__, "--child", mode, workspace]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return [float(x) for x in json.loads(done.stdout.splitlines()[-1])]


def _before(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(into, filter="data")
    vendor = "src/clawcell/runtime/vendor/acorn.js"  # generated, not in git
    (into / vendor).parent.mkdir(parents=True, exist_ok=True)
    (into / vendor).write_bytes((ROOT / vendor).read_bytes())
    return into / "src"


def main(rev: str) -> None:
    load_before = os.getloadavg()
    samples: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        sources = {"before": _before(rev, Path(scratch) / "before"), "after": ROOT / "src"}
        workspace = Path(scratch) / "ws"
        workspace.mkdir()
        for round_ in range(ROUNDS):
            order = list(sources) if round_ % 2 == 0 else list(reversed(sources))
            for mode in MODES:
                for version in order:
                    got = _run_child(sources[version], mode, str(workspace))
                    samples.setdefault((version, mode), []).extend(got)
    load_after = os.getloadavg()
    rows: list[dict[str, object]] = []
    for mode in MODES:
        before = statistics.median(samples[("before", mode)]) * 1000
        after = statistics.median(samples[("after", mode)]) * 1000
        calls = len(samples[("after", mode)])
        rows.append({"sandbox": mode, "before_ms": round(before, 2), "after_ms": round(after, 2),
                     "ratio": round(after / before, 2), "n": calls})  # fmt: skip
    result = {"rev_before": rev, "rounds": ROUNDS, "calls_per_child": CALLS,
              "loadavg_before": load_before, "loadavg_after": load_after, "rows": rows}  # fmt: skip
    lines = [
        f"`exec` of `true`: {ROUNDS} alternated rounds x {CALLS} calls per version and mode; "
        f"before = `{rev}`; load average {load_before[0]:.1f} → {load_after[0]:.1f}.",
        "",
        "| sandbox | before (median ms) | after (median ms) | after/before | calls |",
        "|---|---|---|---|---|",
        *(f"| {r['sandbox']} | {r['before_ms']} | {r['after_ms']} | {r['ratio']} | {r['n']} |"
          for r in rows),
    ]  # fmt: skip
    print("\n".join(lines))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_shell_sandbox.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "bench_shell_sandbox.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        print(json.dumps(asyncio.run(_child(sys.argv[2], sys.argv[3]))))
    else:
        default = subprocess.run(
            ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        main(sys.argv[1] if len(sys.argv) > 1 else default)
