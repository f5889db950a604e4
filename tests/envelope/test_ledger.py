"""The shared output budget: markers, the prefix fitter, the split, incremental delivery, model fit.

Recorded envelopes of the shipped release are reproduced by feeding the ledger the output item
JSON texts the recorded cells emit (`text(x)` emits `{"type":"text","text":x}`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawcell._jsjson import dumps, json_string_bytes, to_well_formed, utf8_len
from clawcell.envelope import ModelBudget, OutputLedger, Projection
from clawcell.envelope._budget import MODEL_BUDGET_MESSAGE
from clawcell.envelope._fitting import TRUNCATION_GUIDANCE, JsonSource, fit_error, truncation_marker
from clawcell.errors import ClawcellError


def _cases() -> dict[str, dict[str, Any]]:
    path = Path(__file__).resolve().parent.parent / "conformance" / "code_mode" / "cases.json"
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return {case["id"]: case for case in cases}


CASES = _cases()


def text_item(text: str) -> str:
    return dumps({"type": "text", "text": text})


def json_item(value: Any) -> str:
    return dumps({"type": "json", "value": value})


def repeated(text: str) -> str:
    return text * 40


def frame_bytes(p: Projection) -> int:
    """The budget property's left side: output (0 when empty) + value + error JSON bytes."""
    size = utf8_len(dumps(p.output)) if p.output else 0
    size += utf8_len(dumps(p.value)) if p.has_value else 0
    return size + (json_string_bytes(p.error) if p.error is not None else 0)


def deliver(ledger: OutputLedger, **channels: Any) -> Projection:
    projection = ledger.project(**channels)
    ledger.commit(projection)
    return projection


# --- the JSON-prefix fitter ------------------------------------------------------------------


def test_the_spec_error_example_with_limit_72() -> None:
    unit = 'a"\\\n\r\t\b\f\x00\x01é中🌍\ud800z'
    fitted = fit_error(unit * 8, 72)
    assert fitted == unit.replace("\ud800", "\ufffd") + 'a"\\\n\r\t' + " [error truncated]"
    assert json_string_bytes(fitted) == 71


def test_an_error_that_fits_is_kept_with_its_lone_surrogates() -> None:
    ledger = OutputLedger(1024)
    assert deliver(ledger, error="bad \ud800").error == "bad \ud800"


def test_a_marker_prefix_never_splits_a_character() -> None:
    source = JsonSource.capture(dumps("🦞" * 100))
    for limit in range(120, 300):  # a marker with an empty prefix takes 106 bytes
        marker, size = truncation_marker(source, limit)
        assert size <= limit
        assert source.text.startswith(marker["prefix"])
        assert marker["omittedBytes"] == 402 - utf8_len(marker["prefix"])
        assert size == utf8_len(dumps(marker))


def test_marker_keys_are_in_protocol_order() -> None:
    marker, _ = truncation_marker(JsonSource.capture('"' + "x" * 500 + '"'), 200)
    assert list(marker) == ["truncated", "omittedBytes", "guidance", "prefix"]
    assert marker["guidance"] == TRUNCATION_GUIDANCE


# --- recorded envelopes ----------------------------------------------------------------------

_ERROR_FRAME = "\n    at <anonymous> (openclaw-code-mode:user.js:1:30)\n"

_SINGLE_RESPONSE_CASES = {
    "truncate/multibyte-1500": (1500, [text_item("é中" * 1000)], "2", None),
    "truncate/escapes-1024": (1024, [text_item('"\\\n\t\x01' * 500)], "4", None),
    "truncate/output-and-value-share-budget": (
        1024,
        [text_item("o" * 800)],
        dumps("v" * 800),
        None,
    ),
    "truncate/many-small-items": (
        2048,
        [text_item(f"item {i}") for i in range(300)],
        dumps("done"),
        None,
    ),
    "truncate/error-1024": (
        1024,
        [text_item("before")],
        None,
        "Error: " + "e" * 5000 + _ERROR_FRAME,
    ),
}


@pytest.mark.parametrize("case_id", sorted(_SINGLE_RESPONSE_CASES))
def test_recorded_truncation_cases_are_reproduced(case_id: str) -> None:
    max_bytes, items, value, error = _SINGLE_RESPONSE_CASES[case_id]
    ledger = OutputLedger(max_bytes)
    for item in items:
        ledger.append(item)
    projection = deliver(ledger, value_json=value, error=error)
    expected = CASES[case_id]["expected"][0]
    assert projection.output == expected["output"]
    assert (projection.value if projection.has_value else None) == expected.get("value")
    assert projection.error == expected.get("error")


def test_e28_yielded_output_is_not_repeated_and_the_late_error_is_bounded() -> None:
    exec_expected, wait_expected = CASES["spec-E28/yield-then-oversized-error"]["expected"]
    ledger = OutputLedger(1024)
    ledger.append(text_item("already delivered"))
    assert deliver(ledger).output == exec_expected["output"]
    waited = deliver(ledger, error="Error: " + "x" * 10000 + _ERROR_FRAME)
    assert (waited.output, waited.error) == ([], wait_expected["error"])


def test_e28_an_oversized_return_after_a_yield_becomes_a_value_marker() -> None:
    ledger = OutputLedger(1024)
    ledger.append(text_item("already delivered"))
    deliver(ledger)
    original = dumps("x" * 10000)
    waited = deliver(ledger, value_json=original)
    assert waited.output == []
    assert waited.value_truncated
    prefix = waited.value["prefix"]
    assert original.startswith(prefix) and prefix.startswith('"xxxx')
    assert waited.value["omittedBytes"] == 10002 - utf8_len(prefix)
    assert frame_bytes(waited) <= 1024


def test_e30_a_parked_cell_sends_its_summary_once() -> None:
    exec_expected, wait_expected = CASES["spec-E30/pending-tool-at-deadline"]["expected"]
    ledger = OutputLedger(1024)
    ledger.append(text_item("before timeout" * 200))
    assert deliver(ledger).output == exec_expected["output"]
    assert deliver(ledger).output == wait_expected["output"] == []


def test_yield_then_failure_delivers_only_the_error() -> None:
    exec_expected, wait_expected = CASES["yield/failure-after-wait"]["expected"]
    ledger = OutputLedger(65536)
    ledger.append(text_item("x"))
    assert deliver(ledger).output == exec_expected["output"]
    assert deliver(ledger, error="Error: shipping backend unavailable").output == []
    assert wait_expected["output"] == []


def test_e50_the_cumulative_summary_is_resent_only_when_it_changes() -> None:
    limit = 1024
    ledger = OutputLedger(limit)
    first, second = text_item("a" * 600), text_item("b" * 600)
    ledger.append(first)
    frames = [deliver(ledger)]
    frames.append(deliver(ledger))  # first wait: nothing new
    ledger.append(second)
    frames.append(deliver(ledger))  # second wait: [A, B] no longer fits
    frames.append(deliver(ledger))  # unchanged summary is not re-sent
    frames.append(deliver(ledger, value_json="true"))  # the value's share changes the summary
    assert frames[0].output == [json.loads(first)]
    assert frames[1].output == [] and frames[3].output == []
    summary, final = frames[2].output[0], frames[4].output[0]
    whole = f"[{first},{second}]"
    for marker in (summary, final):
        assert whole.startswith(marker["prefix"])
        assert marker["omittedBytes"] == utf8_len(whole) - utf8_len(marker["prefix"])
    assert len(final["prefix"]) < len(summary["prefix"])
    assert final is not summary and frames[4].value is True
    assert all(frame_bytes(frame) <= limit for frame in frames)


def test_a_summary_followed_by_fitting_entries_delivers_all_entries() -> None:
    ledger = OutputLedger(1024)
    item = text_item("z" * 300)
    ledger.append(item)
    ledger.append(item)
    assert deliver(ledger, value_json=dumps("v" * 600)).output[0]["truncated"] is True
    assert deliver(ledger).output == [json.loads(item)] * 2


def test_lost_prefixes_keep_counting_later_items() -> None:
    ledger = OutputLedger(1024)
    items = [text_item(f"line {i} " + "é" * 40) for i in range(200)]
    for item in items:
        ledger.append(item)
    whole = "[" + ",".join(items) + "]"
    assert ledger.output_bytes == utf8_len(whole)
    (marker,) = deliver(ledger).output
    assert whole.startswith(marker["prefix"])
    assert marker["omittedBytes"] == utf8_len(whole) - utf8_len(marker["prefix"])


# --- model result budget ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tokens", "max_chars", "max_context_chars"),
    [
        (1000, 1200, 1024),
        (4096, 4912, 4096),
        (100_000, 32_000, 100_000),
        (250_000, 64_000, 250_000),
    ],
)
def test_model_budget_follows_the_context_size(
    tokens: int, max_chars: int, max_context_chars: int
) -> None:
    assert ModelBudget.for_context(tokens) == ModelBudget(
        max_chars=max_chars, max_context_chars=max_context_chars
    )


def test_model_budget_measures_javascript_length() -> None:
    budget = ModelBudget(max_chars=10, max_context_chars=20)
    assert budget.accepts("🦞" * 5) and not budget.accepts("🦞" * 6)


def test_e34_the_whole_envelope_is_fitted_to_a_4096_token_model() -> None:
    case = CASES["spec-E34/retention-model-budget"]
    expected = case["expected"][0]
    # The recorded `counterScope` is opaque; a 24-character scope reproduces the record
    # (the bisection's result depends on the envelope's length).
    telemetry = {**expected["telemetry"], "counterScope": "s" * 24}
    budget = ModelBudget.for_context(case["contextTokenBudget"])

    def render(p: Projection) -> str:
        envelope = {"status": "completed", "replaySafe": False, "telemetry": telemetry}
        return dumps({**envelope, "output": p.output, "value": p.value})

    value = dumps({"rows": [{"id": i, "payload": "🦞" * 10} for i in range(180)]})
    ledger = OutputLedger(case["config"]["maxOutputBytes"])
    guidance = "Not retained: result exceeds the data allowance. Return less data."
    fitted = ledger.fit(
        value_json=value, accept=lambda p: budget.accepts(render(p)), value_guidance=guidance
    )
    assert (fitted.output, fitted.value) == (expected["output"], expected["value"])
    assert budget.accepts(render(fitted))


def test_a_status_that_cannot_fit_the_model_is_an_error() -> None:
    ledger = OutputLedger(1024)
    with pytest.raises(ClawcellError) as caught:
        ledger.fit(value_json="1", accept=lambda p: False)
    assert (caught.value.message, caught.value.code) == (
        MODEL_BUDGET_MESSAGE,
        "output_limit_exceeded",
    )


def test_fit_without_a_model_budget_is_a_plain_projection() -> None:
    ledger = OutputLedger(1024)
    ledger.append(text_item("hi"))
    fitted = ledger.fit(value_json="[1,2]")
    assert (fitted.output, fitted.value, fitted.budget) == (
        [{"type": "text", "text": "hi"}],
        [1, 2],
        1024,
    )


# --- properties ------------------------------------------------------------------------------

_texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=300)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | _texts,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_texts, inner, max_size=6),
    max_leaves=40,
)
_items = st.lists(
    st.builds(text_item, _texts) | st.builds(json_item, _values),
    max_size=30,
)


def _is_summary(projection: Projection) -> bool:
    return bool(projection.output) and "truncated" in projection.output[0]


def _check_marker(marker: dict[str, Any], original: str) -> None:
    prefix = marker["prefix"]
    prefix.encode("utf-8")  # valid UTF-8: no lone surrogate survives in a cut prefix
    assert to_well_formed(original).startswith(prefix)
    assert marker["omittedBytes"] == utf8_len(original) - utf8_len(prefix)


@settings(max_examples=150, deadline=None)
@given(
    max_bytes=st.integers(1024, 4096),
    items=_items,
    value=st.none() | _values,
    error=st.none() | _texts | st.builds(repeated, _texts),
)
def test_every_response_stays_within_the_budget(
    max_bytes: int, items: list[str], value: Any, error: str | None
) -> None:
    ledger = OutputLedger(max_bytes)
    for item in items:
        ledger.append(item)
    value_json = None if value is None else dumps(value)
    projection = deliver(ledger, value_json=value_json, error=error)
    assert frame_bytes(projection) <= max_bytes
    if error is not None:
        assert projection.error is not None  # truncation never turns a failure into success
        assert projection.error == error or projection.error.endswith(" [error truncated]")
    if _is_summary(projection):
        _check_marker(projection.output[0], "[" + ",".join(items) + "]")
    elif items:
        assert projection.output == [json.loads(item) for item in items]
    if value_json is not None and projection.value_truncated:
        _check_marker(projection.value, value_json)
    elif value_json is not None:
        assert projection.value == json.loads(value_json)


@settings(max_examples=80, deadline=None)
@given(max_bytes=st.integers(1024, 2048), legs=st.lists(_items, min_size=1, max_size=4))
def test_waits_deliver_each_entry_once_and_stay_within_the_budget(
    max_bytes: int, legs: list[list[str]]
) -> None:
    ledger = OutputLedger(max_bytes)
    delivered: list[Any] = []
    for leg in legs:
        for item in leg:
            ledger.append(item)
        projection = deliver(ledger)
        assert frame_bytes(projection) <= max_bytes
        if _is_summary(projection):
            delivered = []
        else:
            delivered += projection.output
    everything = [item for leg in legs for item in leg]
    if delivered:
        assert delivered == [json.loads(item) for item in everything][-len(delivered) :]


# --- the whole response without a trial projection (`deliver_whole`) -------------------------

_LEG = st.tuples(
    st.lists(st.text(max_size=30), max_size=4),
    st.none() | st.integers() | st.text(max_size=40) | st.lists(st.integers(), max_size=8),
)


@settings(max_examples=300, deadline=None)
@given(maximum=st.integers(1, 240), legs=st.lists(_LEG, min_size=1, max_size=4))
def test_a_whole_response_is_what_fit_and_commit_deliver(
    maximum: int, legs: list[tuple[list[str], Any]]
) -> None:
    quick, general = OutputLedger(maximum), OutputLedger(maximum)
    for texts, value in legs:
        for text in texts:
            quick.append(text_item(text))
            general.append(text_item(text))
        value_json = None if value is None else dumps(value)
        summarised = len(quick.to_state()["receipt"]) == 2  # a marker was delivered before
        whole = quick.deliver_whole(value_json)
        fitted = general.fit(value_json=value_json)
        general.commit(fitted)
        size = general.output_bytes + (0 if value_json is None else utf8_len(value_json))
        if whole is None:
            assert size > maximum or summarised
            quick.commit(quick.fit(value_json=value_json))
        else:
            assert size <= maximum
            assert whole == fitted
        assert quick.to_state() == general.to_state()


def test_a_whole_response_after_a_summary_takes_the_general_path() -> None:
    ledger = OutputLedger(60)
    ledger.append(text_item("x" * 80))
    ledger.commit(ledger.fit())  # summarised: a marker was delivered
    assert ledger.deliver_whole("1") is None


def test_a_whole_response_repeats_no_delivered_entry() -> None:
    ledger = OutputLedger(1000)
    ledger.append(text_item("a"))
    first = ledger.deliver_whole(None)
    ledger.append(text_item("b"))
    second = ledger.deliver_whole("[1]")
    assert first is not None and second is not None
    assert first.output == [{"type": "text", "text": "a"}]
    shown = (second.output, second.value, second.has_value)
    assert shown == ([{"type": "text", "text": "b"}], [1], True)
    third = ledger.deliver_whole("null")
    assert third is not None and (third.output, third.value, third.has_value) == ([], None, True)
