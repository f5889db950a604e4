"""The output-limit rule of the turn loop, for any model (`stop_reason="length"`)."""

from __future__ import annotations

from clawcell.agent import ModelResponse, ReplyEvent, ScriptedModel, TextDelta, exec_call
from tests.agent._sessions import run_session
from tests.conftest import run

CUT_MARKER = "\n\n[cut off: the answer reached the model's output limit]"


def test_no_call_of_a_cut_response_runs_and_each_is_answered_with_why() -> None:
    cut = ModelResponse(
        tool_calls=(exec_call("return 1", id="a"), exec_call("return 2", id="b")),
        stop_reason="length",
    )
    model = ScriptedModel([cut, exec_call("return 3", id="c"), "three"])
    (one,), transcript = run(run_session(model, ["go"]))
    assert one.reply == "three"
    assert [e.type for e in one.events].count("cell_started") == 1
    results = [m for m in transcript if m["role"] == "toolResult"]
    assert [(r["toolCallId"], r["isError"]) for r in results] == [
        ("a", True),
        ("b", True),
        ("c", False),
    ]
    assert results[0]["content"][0]["text"] == (
        "not run: your response reached its output limit (stop reason `length`) before this "
        "call was complete, so no call of that response was run. Send the call again with "
        "shorter code, or split the work over several cells."
    )
    assert transcript[1]["stopReason"] == "length"


def test_a_cut_answer_is_delivered_with_the_marker_in_every_place_it_is_shown() -> None:
    model = ScriptedModel([ModelResponse(text="Half an", stop_reason="length"), "next"])
    (one, two), transcript = run(run_session(model, ["go", "again"]))
    deltas = "".join(e.text for e in one.events if isinstance(e, TextDelta))
    reply = next(e for e in one.events if isinstance(e, ReplyEvent))
    assert deltas == one.reply == "Half an" + CUT_MARKER
    assert (reply.stop_reason, reply.to_dict()["stopReason"]) == ("length", "length")
    assert transcript[1]["content"] == [{"type": "text", "text": "Half an" + CUT_MARKER}]
    assert transcript[1]["stopReason"] == "length"
    assert next(e for e in two.events if isinstance(e, ReplyEvent)).stop_reason == "stop"
