"""`clawcell repl`, driven by piped input: cells separated by empty lines, saved results and
store values kept between cells, readable envelopes, `.wait` and the other commands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from clawcell.cli._repl import HELP, format_envelope

ROOT = Path(__file__).resolve().parents[2]

SESSION = """\
const saved = await results.save({ rows: [1, 2, 3] });
await store("ref", saved.id);
text("saved");
return saved.bytes > 0;

const loaded = await results.load(await load("ref"));
return loaded.rows.reduce((a, b) => a + b, 0);

await yield_control();
return await double({ n: 5 });

.wait
throw new Error("boom");

.tools
.nope
.exit
return "never run";
"""


def _repl(text: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawcell", "repl", *args],
        input=text,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_piped_session_keeps_results_and_store_between_cells() -> None:
    done = _repl(SESSION, "--tools", "tests.cli.test_main:TOOLS")
    assert done.returncode == 0, done.stderr
    out = re.sub(r"cm_[0-9a-f-]+", "cm_ID", done.stdout)
    assert out == (
        "-- completed\nsaved\n=> true\n"
        "-- completed\n=> 6\n"
        "-- waiting: cm_ID (type .wait to continue)\n"
        '-- completed\n=> {\n  "twice": 10\n}\n'
        "-- failed: internal_error in guest\n"
        "!! Error: boom\n    at <anonymous> (openclaw-code-mode:user.js:1:11)\n\n"
        "Enabled async tool globals (descriptions are intentionally deferred):\n"
        "Each line is `callableName input -> output`; `-> ?` means unknown output.\n"
        "- double {} -> ?\n\n"
        "Call these globals directly; use catalog.search(query) when lookup is ambiguous.\n"
        f"unknown command '.nope'. {HELP}\n"
    )


def test_a_rejected_call_is_shown_and_the_session_goes_on() -> None:
    done = _repl(".wait cm_missing\nreturn 'still here';\n")
    assert done.stdout == (
        "error (invalid_input): code mode run is unavailable or expired.\n"
        '-- completed\n=> "still here"\n'
    )


@pytest.mark.parametrize(
    ("envelope", "text"),
    [
        pytest.param(
            {"status": "completed", "output": [{"type": "json", "value": {"a": 1}}], "value": None},
            '-- completed\n{\n  "a": 1\n}',
            id="json_output_no_value",
        ),
        pytest.param(
            {
                "status": "failed",
                "code": "timeout",
                "failurePhase": "guest",
                "error": "code mode timeout exceeded",
                "output": [],
            },
            "-- failed: timeout in guest\n!! code mode timeout exceeded",
            id="failed",
        ),
        pytest.param(
            {"status": "completed", "output": [], "value": 1, "warnings": ["not saved"]},
            "-- completed\n=> 1\nwarning: not saved",
            id="warning",
        ),
    ],
)
def test_envelopes_are_formatted_for_people(envelope: dict[str, object], text: str) -> None:
    assert format_envelope(envelope) == text
