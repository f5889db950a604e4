"""How a leg ended (`_cell/_outcome.py`): the outcomes the host decides by itself."""

from __future__ import annotations

from clawcell._cell._outcome import LegOutcome, failed_outcome


def test_a_host_decided_failure_ran_and_carries_its_code_phase_and_message() -> None:
    assert failed_outcome("timeout", "host", "too slow") == LegOutcome(
        status="failed", code="timeout", phase="host", error="too slow", ran=True
    )


def test_code_that_does_not_parse_is_an_input_failure_of_a_leg_that_never_ran() -> None:
    outcome = LegOutcome.not_parsed("Unexpected token")
    assert (outcome.status, outcome.code, outcome.phase, outcome.error, outcome.ran) == (
        "failed",
        "invalid_input",
        "input",
        "Unexpected token",
        False,
    )
