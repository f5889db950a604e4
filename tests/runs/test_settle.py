"""A leg's outcome settled into its envelope (`_runs/_settle.py`): each status keeps the output
the leg wrote, a completed cell's `undefined` is `null`, and a waiting one names its run."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import CodeMode
from tests.conftest import exec_one, failure, with_mode


def test_output_written_before_a_failure_is_in_the_failed_envelope() -> None:
    envelope = exec_one('text("before"); throw new Error("boom");')
    assert failure(envelope)[:2] == ("internal_error", "guest")
    assert envelope["output"] == [{"type": "text", "text": "before"}]


def test_a_cell_that_returns_nothing_completes_with_a_null_value() -> None:
    envelope = exec_one('text("a"); return;')
    assert envelope["status"] == "completed"
    assert (envelope["value"], envelope["output"]) == (None, [{"type": "text", "text": "a"}])


def test_a_waiting_envelope_names_its_run_reason_and_pending_calls_with_telemetry() -> None:
    envelope = exec_one('text("so far"); await yield_control("why"); return 1;')
    assert envelope["status"] == "waiting"
    assert envelope["runId"].startswith("cm_")
    assert envelope["reason"] == "yield"
    assert envelope["pendingToolCalls"] == [{"id": "bridge:yield:1", "method": "yield"}]
    assert envelope["output"] == [{"type": "text", "text": "so far"}]
    assert envelope["telemetry"]["catalogSize"] == 1


# -- the whole response (`OutputLedger.deliver_whole`) against the general fit ---------------

_LEGS: dict[str, tuple[str, dict[str, Any]]] = {
    "a small value": ("return 1;", {}),
    "output and a value": ('text("a"); text("b"); return {x: [1, 2]};', {}),
    "a yield, then the rest": ('text("a"); await yield_control(); text("b"); return 2;', {}),
    "output beyond the budget": ('text("x".repeat(1400)); return 3;', {"max_output_bytes": 1024}),
    "a value beyond the budget": ('return "y".repeat(1400);', {"max_output_bytes": 1024}),
    "both at the budget's edge": (
        'text("z".repeat(490)); return "v".repeat(500);',
        {"max_output_bytes": 1024},
    ),
    "just past the edge": (
        'text("z".repeat(500)); return "v".repeat(500);',
        {"max_output_bytes": 1024},
    ),
    "a model budget": ('text("m".repeat(3000)); return 4;', {"model_context_tokens": 1000}),
    "a restart-safe cell": ("return 5;", {"restart_safe": True}),
}


def _never_whole(_ledger: object, _value_json: str | None) -> None:
    return None


def _legs(code: str, options: dict[str, Any], *, whole: bool) -> list[dict[str, Any]]:
    from clawcell import Limits
    from clawcell.envelope import OutputLedger

    options = dict(options)
    restart_safe = options.pop("restart_safe", False)
    limits = Limits(timeout_ms=5_000, max_output_bytes=options.pop("max_output_bytes", 64_000))

    async def body(mode: CodeMode) -> list[dict[str, Any]]:
        first = await mode.call_tool("exec", {"code": code, "restartSafe": restart_safe})
        legs = [first]
        while legs[-1]["status"] == "waiting":
            legs.append(await mode.wait(legs[-1]["runId"]))
        for leg in legs:
            leg.pop("runId", None)
            leg["telemetry"].pop("counterScope")
        return legs

    patch = pytest.MonkeyPatch()
    if not whole:  # every leg takes the general fit
        patch.setattr(OutputLedger, "deliver_whole", _never_whole)
    try:
        return with_mode(body, limits=limits, **options)
    finally:
        patch.undo()


@pytest.mark.parametrize(("code", "options"), _LEGS.values(), ids=_LEGS.keys())
def test_a_leg_delivered_whole_is_the_envelope_the_general_fit_makes(
    code: str, options: dict[str, Any]
) -> None:
    assert _legs(code, options, whole=True) == _legs(code, options, whole=False)
