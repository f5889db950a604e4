"""`clawcell.reply` beside the original on the shared rich-output corpus (a script, not a test).

Run: `.venv/bin/python bench/bench_reply.py [--original ro.json | --run-original]`. Mirrors
`shared/oracle/bench-rich-output.mjs` case for case: the same five calls, on `mixed-1mb.txt`
(2 warm-up + 7 timed calls, MB/s of the median) and on the 10,000 `short-replies.jsonl` (2
warm-up + 10 timed passes, µs per reply of the median pass), with the same result summaries
(which must agree with the original's). The original's figures come from that script's
`--json` output, or from running it (`--run-original`, needs `node` and `OPENCLAW_DIR`); run
both in one session, since the machine is shared. Prints a table and writes
`bench/results/reply.json` and `.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clawcell import reply

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT.parent / "shared" / "oracle"
RESULTS = ROOT / "bench" / "results"
Json = Any


def _count(value: Json) -> int:
    return len(value) if value else 0


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _media_summary(r: Json) -> dict[str, int]:
    return {
        "media": _count(r.get("mediaUrls")),
        "segments": _count(r.get("segments")),
        "textBytes": _bytes(r["text"]),
        "audio": 1 if r.get("audioAsVoice") else 0,
    }


# (id, label, call, summary): the cases of bench-rich-output.mjs.
CASES: list[tuple[str, str, Callable[[str], Json], Callable[[Json], dict[str, int]]]] = [
    ("split", "split_media_from_output", reply.split_media_from_output, _media_summary),
    (
        "splitImg",
        "split_media_from_output(extract_markdown_images)",
        lambda t: reply.split_media_from_output(t, extract_markdown_images=True),
        _media_summary,
    ),
    (
        "inline",
        "parse_inline_directives",
        lambda t: reply.parse_inline_directives(t, current_message_id="msg-current"),
        lambda r: {
            "replyTag": 1 if r["hasReplyTag"] else 0,
            "replyCurrent": 1 if r["replyToCurrent"] else 0,
            "audio": 1 if r["hasAudioTag"] else 0,
            "textBytes": _bytes(r["text"]),
        },
    ),
    (
        "embed",
        "extract_canvas_shortcodes",
        reply.extract_canvas_shortcodes,
        lambda r: {"previews": _count(r["previews"]), "textBytes": _bytes(r["text"])},
    ),
    (
        "reply",
        "parse_reply_directives",
        lambda t: reply.parse_reply_directives(t, current_message_id="msg-current"),
        lambda r: {
            "media": _count(r.get("mediaUrls")),
            "replyTo": 1 if r.get("replyToId") else 0,
            "audio": 1 if r.get("audioAsVoice") else 0,
            "textBytes": _bytes(r["text"]),
        },
    ),
]


def _corpus(directory: Path) -> tuple[str, list[str]]:
    mixed, short = directory / "mixed-1mb.txt", directory / "short-replies.jsonl"
    if not mixed.is_file() or not short.is_file():
        sys.exit(f"benchmark corpus not found in {directory}; pass --corpus DIR")
    lines = short.read_text(encoding="utf-8").splitlines()
    return mixed.read_text(encoding="utf-8"), [json.loads(line)["text"] for line in lines]


def _add(total: dict[str, int], summary: dict[str, int]) -> dict[str, int]:
    for key, value in summary.items():
        total[key] = total.get(key, 0) + value
    return total


def _measure(
    case: tuple[str, str, Callable[[str], Json], Any], mixed: str, replies: list[str]
) -> dict[str, Any]:
    _, _, call, summarize = case
    for _ in range(2):
        call(mixed)
    big: list[float] = []
    last: Json = None
    for _ in range(7):
        start = time.perf_counter()
        last = call(mixed)
        big.append(time.perf_counter() - start)
    out: list[Json] = [None] * len(replies)

    def one_pass() -> None:
        for index, text in enumerate(replies):
            out[index] = call(text)

    for _ in range(2):
        one_pass()
    small: list[float] = []
    for _ in range(10):
        start = time.perf_counter()
        one_pass()
        small.append(time.perf_counter() - start)
    summary: dict[str, int] = {}
    for result in out:
        _add(summary, summarize(result))
    return {
        "mbPerSecMedian": round(_bytes(mixed) / 1e6 / statistics.median(big), 2),
        "usPerReplyMedian": round(statistics.median(small) * 1e6 / len(replies), 2),
        "usPerReplyMin": round(min(small) * 1e6 / len(replies), 2),
        "summaryMixed": summarize(last),
        "summaryShort": summary,
    }


def _original(args: argparse.Namespace) -> Json:
    if args.original:
        return json.loads(Path(args.original).read_text(encoding="utf-8"))
    if not args.run_original:
        return None
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "ro.json"
        script = ORACLE / "bench-rich-output.mjs"
        command = ["node", str(script), "--json", str(out), "--corpus-dir", str(args.corpus)]
        subprocess.run(command, check=True, env=os.environ.copy())
        return json.loads(out.read_text(encoding="utf-8"))


def _original_row(original: Json, case_id: str) -> dict[str, Any]:
    row: dict[str, Any] = {}
    results: list[dict[str, Any]] = original["results"] if original else []
    for result in results:
        if result["id"] == case_id and result["corpus"] == "mixed-1mb":
            row["mbPerSecMedian"] = round(result["mbPerSecMedian"], 2)
            row["summaryMixed"] = result["summary"]
        if result["id"] == case_id and result["corpus"] == "short-replies":
            row["usPerReplyMedian"] = round(result["usPerReplyMedian"], 2)
            row["usPerReplyMin"] = round(result["min"] * 1000 / result["replies"], 2)
            row["summaryShort"] = result["summary"]
    return row


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return round(numerator / denominator, 1) if numerator and denominator else None


def main() -> None:
    """Measure, print the table and write the result files."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=ORACLE / "corpus")
    parser.add_argument("--original", help="bench-rich-output.mjs --json output to compare with")
    parser.add_argument("--run-original", action="store_true", help="run the original first")
    args = parser.parse_args()
    original = _original(args)
    mixed, replies = _corpus(args.corpus)
    rows: list[dict[str, Any]] = []
    for case in CASES:
        ours = _measure(case, mixed, replies)
        theirs = _original_row(original, case[0])
        rows.append(
            {
                "case": case[0],
                "function": case[1],
                "clawcell": ours,
                "original": theirs,
                "speedupMixed": _ratio(ours["mbPerSecMedian"], theirs.get("mbPerSecMedian")),
                "speedupShort": _ratio(theirs.get("usPerReplyMedian"), ours["usPerReplyMedian"]),
                "sameSummaries": bool(theirs)
                and theirs.get("summaryShort") == ours["summaryShort"]
                and theirs.get("summaryMixed") == ours["summaryMixed"],
            }
        )
    table = _table(rows)
    print(table)
    meta = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "loadAverage1m": round(os.getloadavg()[0], 2),
        "original": None
        if original is None
        else {
            "openclawVersion": original["openclawVersion"],
            "node": original["node"],
            "loadavgStart": original["loadavgStart"],
        },
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    document = {"meta": meta, "rows": rows}
    (RESULTS / "reply.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    note = (
        "Medians, wall clock, run side by side with the original on a shared 2-CPU machine "
        f"(1-minute load average {meta['loadAverage1m']}). Speed-ups are clawcell over the "
        "original; summaries are the result counts both sides must agree on.\n"
    )
    (RESULTS / "reply.md").write_text(f"# clawcell.reply benchmark\n\n{note}\n{table}\n")


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| case | clawcell MB/s | original MB/s | x | clawcell µs/reply "
        "| original µs/reply | x | same results |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        ours, theirs = row["clawcell"], row["original"]
        lines.append(
            f"| `{row['function']}` | {ours['mbPerSecMedian']} "
            f"| {theirs.get('mbPerSecMedian', '–')} "
            f"| {row['speedupMixed'] or '–'} | {ours['usPerReplyMedian']} "
            f"| {theirs.get('usPerReplyMedian', '–')} | {row['speedupShort'] or '–'} "
            f"| {'yes' if row['sameSummaries'] else 'no'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
