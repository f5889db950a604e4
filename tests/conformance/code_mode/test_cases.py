"""Every recorded Code Mode case, run through `CodeMode.call_tool`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from .harness import load_cases, matches, run_case

# Cases that need a later issue; strict xfail, so they must start passing when it lands.
_LATER: dict[str, str] = {}
# On the V8 executor, error text in V8's words (`v8-engine-text` in docs/divergences.md): the
# error class must still be the recorded one.
_V8_ERROR: dict[str, str] = {"spec-E18/type-error-line-2": "TypeError: .*"}


def _params() -> list[Any]:
    params: list[Any] = []
    for case in load_cases():
        marks: list[pytest.MarkDecorator] = []
        if case["id"] in _LATER:
            marks.append(pytest.mark.xfail(strict=True, reason=_LATER[case["id"]]))
        params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


@pytest.mark.parametrize(
    ("guest_thread", "executor"),
    [(True, "quickjs"), (False, "quickjs"), (True, "v8")],
    ids=["worker-thread", "loop-thread", "v8"],
)
@pytest.mark.parametrize("case", _params())
def test_recorded_case(case: dict[str, Any], guest_thread: bool, executor: str) -> None:
    actual = asyncio.run(run_case(case, guest_thread=guest_thread, executor=executor))
    assert len(actual) == len(case["expected"])
    for step, (recorded, got) in enumerate(zip(case["expected"], actual, strict=True)):
        expected = recorded
        if executor == "v8" and case["id"] in _V8_ERROR:
            expected = {**recorded, "error": {"$regex": _V8_ERROR[case["id"]]}}
        assert matches(expected, got, case["match"]), (
            f"step {step} differs\nexpected: {json.dumps(expected)[:3000]}\n"
            f"actual:   {json.dumps(got)[:3000]}"
        )
