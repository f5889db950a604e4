"""The per-command cost of the process bound on a root host (issue 35), paired against `main`.

Run: `.venv/bin/python bench/bench_shell_bound.py [REV]` as root. REV (default: `main`) is the
"before" source, unpacked with `git archive`. Two hosts are played in each round:

* `no cgroup`: `Cgroups.find` patched to find nothing (a read-only `/sys/fs/cgroup`). Before:
  commands run with no process bound; after: each starts bubblewrap as a leased uid (the
  idmapped workspace mount, the uid's `kill(-1)` sweep and the wait for its processes).
* `pids cgroup`: this host's pids cgroup, the same mechanism before and after (a control).

Each round runs one child process per (version, host), in alternating order; each child times
`CALLS` calls of `exec({command: "true"})` in bubblewrap after two warm-ups. A last table
times `UidRange.lease` + `release` alone. Medians, after/before ratios and the load average
go to `bench/results/bench_shell_bound.json` and `.md`.
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
import time
from pathlib import Path

from _common import timed_true_commands

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
ROUNDS = 8
CALLS = 10
HOSTS = ("no cgroup", "pids cgroup")


def _before(rev: str, into: Path) -> Path:
    """`rev`'s `src` unpacked into `into` (with the generated acorn bundle git leaves out)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
    ).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(into, filter="data")
    vendor = "src/clawcell/runtime/vendor/acorn.js"
    (into / vendor).parent.mkdir(parents=True, exist_ok=True)
    (into / vendor).write_bytes((ROOT / vendor).read_bytes())
    return into / "src"


def _no_cgroups() -> None:
    return None


async def _child(host: str, workspace: str) -> list[float]:
    from clawcell.tools import ShellSettings, shell
    from clawcell.tools._shell._cgroup import Cgroups

    if host == "no cgroup":
        Cgroups.find = _no_cgroups  # type: ignore[method-assign]
    tools = shell(workspace, settings=ShellSettings(approval="never", sandbox="required"))
    return await timed_true_commands(tools, CALLS)


def _lease_child(workspace: str) -> list[float]:
    from clawcell.tools._shell._uid_leases import UidRange

    uids = UidRange()
    samples: list[float] = []
    for index in range(CALLS + 2):
        start = time.perf_counter()
        uids.lease(Path(workspace)).release()
        if index >= 2:
            samples.append(time.perf_counter() - start)
    return samples


def _run_child(src: Path, host: str, workspace: str) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, __file__, "--child", host, workspace]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return [float(x) for x in json.loads(done.stdout.splitlines()[-1])]


def main(rev: str) -> None:
    load_before = os.getloadavg()
    samples: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        sources = {"before": _before(rev, Path(scratch) / "before"), "after": ROOT / "src"}
        workspace = Path(scratch) / "ws"
        workspace.mkdir()
        for round_ in range(ROUNDS):
            order = list(sources) if round_ % 2 == 0 else list(reversed(sources))
            for host in HOSTS:
                for version in order:
                    got = _run_child(sources[version], host, str(workspace))
                    samples.setdefault((version, host), []).extend(got)
            lease = _run_child(sources["after"], "lease", str(workspace))
            samples.setdefault(("after", "lease"), []).extend(lease)
    load_after = os.getloadavg()
    rows: list[dict[str, object]] = []
    for host in HOSTS:
        before = statistics.median(samples[("before", host)]) * 1000
        after = statistics.median(samples[("after", host)]) * 1000
        calls = len(samples[("after", host)])
        rows.append({"host": host, "before_ms": round(before, 2), "after_ms": round(after, 2),
                     "ratio": round(after / before, 2), "n": calls})  # fmt: skip
    lease_ms = statistics.median(samples[("after", "lease")]) * 1000
    result = {"rev_before": rev, "rounds": ROUNDS, "calls_per_child": CALLS,
              "loadavg_before": load_before, "loadavg_after": load_after, "rows": rows,
              "lease_release_ms": round(lease_ms, 2)}  # fmt: skip
    lines = [
        f"`exec` of `true` in bubblewrap as root: {ROUNDS} alternated rounds x {CALLS} calls per "
        f"version and host; before = `{rev}`; load average {load_before[0]:.1f} → "
        f"{load_after[0]:.1f}.",
        "",
        "| host | before (median ms) | after (median ms) | after/before | calls |",
        "|---|---|---|---|---|",
        *(f"| {r['host']} | {r['before_ms']} | {r['after_ms']} | {r['ratio']} | {r['n']} |"
          for r in rows),
        "",
        f"`UidRange.lease` + `release` alone (mount, sweep, unmount): median {lease_ms:.2f} ms "
        f"over {len(samples[('after', 'lease')])} calls.",
    ]  # fmt: skip
    print("\n".join(lines))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_shell_bound.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "bench_shell_bound.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        if sys.argv[2] == "lease":
            print(json.dumps(_lease_child(sys.argv[3])))
        else:
            print(json.dumps(asyncio.run(_child(sys.argv[2], sys.argv[3]))))
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "main")
