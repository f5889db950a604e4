"""`ApprovalAnswer`: the one value a person's decision travels in, checked in one place.

Every face builds it (the UI's cards through `from_json`, `clawcell mcp serve`, a program
through `CodeMode.decide`), so a bad field gets the same message wherever it came from, and
nothing is recorded.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from clawcell import CodeMode, InputError, Limits, Tool
from clawcell.approvals import ApprovalAnswer

LIMITS = Limits(timeout_ms=60_000)
_ID_RULE = (
    ": ids are 1 to 200 letters, digits, `_`, `.`, `:` or `-`, as the waiting envelope gives them."
)

# (fields over a valid answer, the message); `run_id`/`approval_id` replace the real ids.
BAD: list[tuple[dict[str, Any], str]] = [
    ({"decision": "maybe"}, "`decision` must be 'approve' or 'deny', got 'maybe'."),
    ({"decision": None}, "`decision` must be 'approve' or 'deny', got None."),
    ({"note": 5}, "`note` must be a string, got 5."),
    ({"note": "x" * 2001}, "`note` has 2001 characters; shorten it to at most 2000."),
    ({"remember": "yes"}, "`remember` must be true or false, got 'yes'."),
    ({"remember": 1}, "`remember` must be true or false, got 1."),
    ({"by": "b" * 201}, f"`by` must be a string of at most 200 characters, got {'b' * 201!r:.80}."),
    ({"by": None}, "`by` must be a string of at most 200 characters, got None."),
    ({"run_id": "cm<1"}, "run id 'cm<1' is not allowed" + _ID_RULE),
    ({"run_id": ""}, "run id '' is not allowed" + _ID_RULE),
    ({"approval_id": "ap 1"}, "approval id 'ap 1' is not allowed" + _ID_RULE),
    ({"approval_id": "a" * 201}, f"approval id {'a' * 201!r:.80} is not allowed" + _ID_RULE),
]
IDS = ["decision", "no_decision", "note_type", "note_long", "remember_text", "remember_int",
       "by_long", "by_type", "run_id", "run_id_empty", "approval_id", "approval_long"]  # fmt: skip


def _paying() -> tuple[Tool, list[int]]:
    paid: list[int] = []

    def pay(params: dict[str, Any]) -> dict[str, Any]:
        paid.append(params["amount"])
        return {"paid": params["amount"]}

    return Tool(name="pay", execute=pay, approval="always"), paid


@pytest.mark.parametrize(("fields", "message"), BAD, ids=IDS)
def test_code_mode_refuses_a_bad_answer_with_what_is_wrong_and_records_nothing(
    fields: dict[str, Any], message: str
) -> None:
    tool, paid = _paying()

    async def body() -> tuple[str, list[Any], list[Any]]:
        async with CodeMode([tool], limits=LIMITS) as mode:
            parked = await mode.exec("return await pay({ amount: 5 })")
            ids = {"run_id": parked["runId"], "approval_id": parked["pendingApprovals"][0]["id"]}
            given: dict[str, Any] = {**ids, "decision": "approve", **fields}
            with pytest.raises(InputError) as caught:
                await mode.decide(
                    given.pop("run_id"), given.pop("approval_id"), given.pop("decision"), **given
                )
            return (
                caught.value.message,
                await mode.approval_audit(),
                await mode.pending_approvals(parked["runId"]),
            )

    refused, audit, pending = asyncio.run(body())
    assert refused == message
    assert audit == [] and len(pending) == 1 and paid == []


@pytest.mark.parametrize(("fields", "message"), BAD, ids=IDS)
def test_the_value_and_its_wire_form_refuse_with_the_same_words(
    fields: dict[str, Any], message: str
) -> None:
    given: dict[str, Any] = {"run_id": "cm_1", "approval_id": "ap_1", "decision": "deny"}
    given |= fields
    with pytest.raises(InputError) as made:
        ApprovalAnswer(**given)
    ids = {"run_id": given.pop("run_id"), "approval_id": given.pop("approval_id")}
    by = given.pop("by", "control-ui")
    with pytest.raises(InputError) as posted:
        ApprovalAnswer.from_json(given, **ids, by=by)
    assert made.value.message == posted.value.message == message


def test_the_wire_form_reads_a_card_body_and_defaults_what_it_leaves_out() -> None:
    full = {"decision": "deny", "note": "not now", "remember": True, "extra": 1}
    read = ApprovalAnswer.from_json(full, run_id="cm_1", approval_id="ap_1", by="control-ui")
    assert read == ApprovalAnswer(
        run_id="cm_1", approval_id="ap_1", decision="deny", note="not now", remember=True,
        by="control-ui",
    )  # fmt: skip
    bare = ApprovalAnswer.from_json({"decision": "approve"}, run_id="cm_1", approval_id="ap_1",
                                    by="")  # fmt: skip
    assert (bare.note, bare.remember, bare.by) == ("", False, "")
    assert ApprovalAnswer.from_json({"decision": "approve", "remember": None}, run_id="cm_1",
                                    approval_id="ap_1", by="").remember is False  # fmt: skip


def test_an_answer_is_a_frozen_keyword_only_value() -> None:
    answer = ApprovalAnswer(run_id="cm_1", approval_id="ap_1", decision="approve")
    # what the test checks is that the type checker's complaint holds at run time too
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.note = "changed"  # pyright: ignore[reportAttributeAccessIssue]
    # as above: positional fields are refused
    with pytest.raises(TypeError):
        ApprovalAnswer("cm_1", "ap_1", "approve")  # pyright: ignore[reportCallIssue]


def test_code_mode_records_an_answer_handed_to_it_whole() -> None:
    tool, paid = _paying()

    async def body() -> tuple[Any, dict[str, Any], list[Any]]:
        async with CodeMode([tool], limits=LIMITS) as mode:
            parked = await mode.exec("return await pay({ amount: 7 })")
            answer = ApprovalAnswer(
                run_id=parked["runId"],
                approval_id=parked["pendingApprovals"][0]["id"],
                decision="approve",
                note="ok",
                remember=True,
                by="ana",
            )
            record = await mode.answer(answer)
            return record, await mode.wait(parked["runId"]), await mode.approval_audit()

    record, done, audit = asyncio.run(body())
    assert (record.decision, record.note, record.remember, record.by, record.tool) == (
        "approve", "ok", "session", "ana", "pay",
    )  # fmt: skip
    assert [d.to_json() for d in audit] == [record.to_json()]
    assert (done["status"], done["value"], paid) == ("completed", {"paid": 7}, [7])
