"""The hostile corpus by family: each case ends in its recorded envelope, in guest-thread and
loop-thread mode alike, and a clean probe cell on the same guests afterwards sees nothing of it
(globals, intrinsics, output, tools and timers all as in a fresh runtime); the probes have a
roomy budget of their own (`test_hostile_cells.probed`), only the case has its tight one.

The recorded envelopes live in `data/`; `_traps.py` and `_corpus.py` hold the cells.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime import V8Executor
from tests.conftest import echo_tool, with_mode
from tests.hostile import _corpus as corpus
from tests.hostile._traps import SINKS, TRAPS, trap_code
from tests.hostile.test_hostile_cells import (
    _probe,  # pyright: ignore[reportPrivateUsage]
    probed,
    v8_pristine,
)

DATA = Path(__file__).with_name("data")
SERIALIZATION: dict[str, dict[str, Any]] = json.loads((DATA / "serialization.json").read_text())
RECORDED: dict[str, dict[str, Any]] = json.loads((DATA / "corpus.json").read_text())
_RESULT_ID = re.compile(r"result_[0-9a-f-]{36}")

TIGHT = Limits(timeout_ms=250)
NATIVE = Limits(timeout_ms=250, memory_limit_bytes=256 * 1024 * 1024)
ROOMY = Limits(timeout_ms=60_000)
EXECUTORS = ["quickjs", "v8"]


async def _big(tool_input: dict[str, Any]) -> Any:
    return "x" * int(tool_input["n"])


def _tools() -> list[Tool]:
    return [echo_tool(), Tool(name="big", execute=_big)]


def _summary(envelope: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {"status": envelope["status"], "output": envelope["output"]}
    if envelope["status"] == "completed":
        summary["value"] = envelope["value"]
    elif envelope["status"] == "failed":
        summary["code"] = envelope["code"]
        summary["error"] = envelope["error"]
        if "phase" in envelope or "failurePhase" in envelope:
            summary["phase"] = envelope["failurePhase"]
    return json.loads(_RESULT_ID.sub("result_<id>", json.dumps(summary)))


def _expect(recorded: dict[str, Any]) -> dict[str, Any]:
    return json.loads(_RESULT_ID.sub("result_<id>", json.dumps(recorded)))


# Cases whose V8 envelope differs beyond an error's words (docs/divergences.md, "The V8
# executor"), with V8's (status, code): V8's `JSON.stringify` defines array elements, so a
# setter on `Array.prototype[n]` never runs; its engine texts change the output's own bytes
# (the BigInt message, a truncation one byte off); its stack is deeper.
_V8_OUTCOME: dict[str, tuple[str, str | None]] = {
    "tampering-array_prototype_index_setter": ("completed", None),
    "tampering-array_prototype_index_setters": ("completed", None),
    "tampering-object_prototype_descriptor_keys": ("completed", None),
    "tampering-weak_map_prototype": ("completed", None),
    "tampering-object_define_property_replaced": ("completed", None),
    "output-output_then_throw": ("failed", "internal_error"),
    "output-error_with_many_frames": ("failed", "internal_error"),
}


def _same(summary: dict[str, Any], expected: dict[str, Any], executor: str, key: str = "") -> bool:
    """The recorded outcome; on V8 an error or caught text may be in V8's words, with the
    same error class or prefix (`v8-engine-text` in docs/divergences.md)."""
    if executor == "v8" and key in _V8_OUTCOME:
        return (summary["status"], summary.get("code")) == _V8_OUTCOME[key]
    if executor == "quickjs" or summary == expected:
        return summary == expected
    for field in set(summary) | set(expected):
        got, want = summary.get(field), expected.get(field)
        if got == want:
            continue
        if field not in ("error", "value") or not isinstance(got, str) or not isinstance(want, str):
            return False
        if got.split(":", 1)[0] != want.split(":", 1)[0]:
            return False
    return True


def case_limits(limits: Limits, code: str) -> Limits:
    """`limits` for a case: a cell that is not meant to reach its deadline gets 10 s, on
    either executor, since a loaded machine (or a coverage run) can slow a cell that takes
    30 ms alone past a 250 ms budget, and on V8 each bridge round trip also crosses a process
    boundary; the recorded outcome, not the budget, is what the case checks."""
    if code in corpus.NATIVE_FLOODS.values() or "for (;;)" in code or "while (true)" in code:
        return limits
    return dataclasses.replace(limits, timeout_ms=max(limits.timeout_ms, 10_000))


def run_case(
    code: str, limits: Limits, *, guest_thread: bool = True, executor: str = "quickjs"
) -> dict[str, Any]:
    """The case's envelope summary on `executor`, after checking that probes before and
    after agree."""
    limits = case_limits(limits, code)
    if executor == "v8":
        return _run_v8(code, limits)

    before, envelope, after = probed(code, tools=_tools(), limits=limits, guest_thread=guest_thread)
    assert after == before
    return _summary(envelope)


def _run_v8(code: str, limits: Limits) -> dict[str, Any]:
    """On V8 the probes run with a roomy budget, the one after the case in a runtime that
    shares the case's executor (its pool and warm workers), so a loaded machine cannot time
    them out; the one before is a fresh runtime's, the same for every case (`v8_pristine`)."""
    before = v8_pristine(_tools(), ROOMY)
    executor = V8Executor(spares=1)

    async def probe(mode: CodeMode) -> Any:
        return await _probe(mode)

    async def case(mode: CodeMode) -> dict[str, Any]:
        return await mode.exec(code)

    try:
        envelope = with_mode(case, tools=_tools(), limits=limits, executor=executor)
        after = with_mode(probe, tools=_tools(), limits=ROOMY, executor=executor)
    finally:
        executor.close()
    assert after == before
    return _summary(envelope)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("sink", list(SINKS))
@pytest.mark.parametrize("trap", list(TRAPS))
def test_serialization_trap_ends_in_its_recorded_envelope(
    trap: str, sink: str, executor: str
) -> None:
    recorded = SERIALIZATION[f"{trap}-{sink}"]
    summary = run_case(trap_code(trap, sink), TIGHT, executor=executor)
    summary.pop("phase", None)
    assert _same(summary, _expect(recorded), executor), summary


MODES = [
    pytest.param(True, "quickjs", id="guest_thread"),
    pytest.param(False, "quickjs", id="loop_thread"),
    pytest.param(True, "v8", id="v8"),
]


@pytest.mark.parametrize(("guest_thread", "executor"), MODES)
@pytest.mark.parametrize("name", list(corpus.NATIVE_FLOODS))
def test_native_code_flood_times_out(name: str, guest_thread: bool, executor: str) -> None:
    code = corpus.NATIVE_FLOODS[name]
    summary = run_case(code, NATIVE, guest_thread=guest_thread, executor=executor)
    assert _same(summary, _expect(RECORDED[f"native-{name}"]), executor), summary


@pytest.mark.parametrize(("guest_thread", "executor"), MODES)
@pytest.mark.parametrize("name", list(corpus.TAMPERING))
def test_controller_tampering_ends_in_its_recorded_envelope(
    name: str, guest_thread: bool, executor: str
) -> None:
    code = corpus.TAMPERING[name]
    summary = run_case(code, TIGHT, guest_thread=guest_thread, executor=executor)
    key = f"tampering-{name}"
    assert _same(summary, _expect(RECORDED[key]), executor, key), summary


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("name", list(corpus.OUTPUT_FLOODS))
def test_output_flood_is_bounded(name: str, executor: str) -> None:
    limits = TIGHT if name == "output_then_timeout" else ROOMY
    summary = run_case(corpus.OUTPUT_FLOODS[name], limits, executor=executor)
    key = f"output-{name}"
    assert _same(summary, _expect(RECORDED[key]), executor, key), summary
    # The model never sees more than the output budget (plus the envelope's own keys).
    size = len(json.dumps(summary, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    assert size < 2 * ROOMY.max_output_bytes


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("name", list(corpus.CAPS))
def test_queue_and_inbox_caps_hold(name: str, executor: str) -> None:
    summary = run_case(corpus.CAPS[name], ROOMY, executor=executor)
    assert _same(summary, _expect(RECORDED[f"caps-{name}"]), executor), summary
