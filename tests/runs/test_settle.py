"""A leg's outcome settled into its envelope (`_runs/_settle.py`): each status keeps the output
the leg wrote, a completed cell's `undefined` is `null`, and a waiting one names its run."""

from __future__ import annotations

from tests.conftest import exec_one, failure


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
