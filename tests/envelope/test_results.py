"""Saved results: descriptors, the store's limits and messages, and automatic retention.

Recorded values come from the conformance cases (`tests/conformance/code_mode/cases.json`):
each case's guest code builds a value in JavaScript; the tests rebuild the same JSON text in
Python and compare the descriptor (all but the random `id`) and the messages with the record.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawcell._jsjson import dumps, utf8_len, utf16_len
from clawcell.envelope import (
    SCOPE_MESSAGE,
    UNAVAILABLE_MESSAGE,
    ResultReference,
    ResultsStore,
    describe,
)
from clawcell.envelope._descriptor import (
    MAX_REFERENCE_BYTES,
    _shape_and_preview,  # pyright: ignore[reportPrivateUsage]
    fit_reference,
)
from clawcell.envelope._fitting import JsonSource
from clawcell.envelope._results import CAPACITY_MESSAGE, CATALOG_CLOSED_MESSAGE, INVALID_ID_MESSAGE
from clawcell.envelope._retention import (
    NOT_RETAINED_CAPACITY,
    NOT_RETAINED_CATALOG,
    NOT_RETAINED_DATA_ALLOWANCE,
    NOT_RETAINED_OUTPUT_BUDGET,
    NOT_RETAINED_RESTART_SAFE,
    RETAINED_GUIDANCE,
    minimal_reference_marker_bytes,
    reference_marker,
    reference_marker_bytes,
    retain_oversized_value,
)
from clawcell.errors import ConfigurationError, InputError

CASES_FILE = Path(__file__).parent.parent / "conformance" / "code_mode" / "cases.json"
CASES: dict[str, dict[str, Any]] = {
    case["id"]: case for case in json.loads(CASES_FILE.read_text("utf-8"))
}
_ID = re.compile(r"result_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
LOBSTER = "\U0001f99e"


def expected_value(case_id: str, step: int = 0) -> Any:
    return CASES[case_id]["expected"][step]["value"]


def without_id(reference: Any) -> dict[str, Any]:
    return {key: value for key, value in reference.items() if key != "id"}


# --- values rebuilt from the cases' guest code ----------------------------------------------


def e36_value() -> Any:
    rows: list[Any] = [{"id": i, "amount": 4} for i in range(180)]
    rows[90] = "pending"
    rows[179] = None
    return {
        "content": [{"type": "text", "text": "metadata" * 1000}],
        "structuredContent": {"rows": rows},
        "isError": False,
        "status": "partial",
    }


def batch_value() -> Any:
    rows = [{"i": i, "tag": f"t{i % 7}"} for i in range(5000)]
    return {"total": 5000, "ok": True, "name": "batch", "rows": rows}


RECORDED_DESCRIPTORS = [
    pytest.param(
        dumps(LOBSTER * 255),
        expected_value("spec-E31-E32/results-capacity"),
        id="E31-lobster-string",
    ),
    pytest.param(
        dumps(e36_value()),
        expected_value("spec-E36/sampled-preview-heterogeneous"),
        id="E36-heterogeneous-array",
    ),
    pytest.param(
        dumps({"a": [1, 2, 3], "b": "text"}),
        expected_value("results/save-load-delete")["ref"],
        id="small-object-inline-preview",
    ),
    *(
        pytest.param(text, expected_value("results/save-undefined-and-null")[index], id=name)
        for index, (text, name) in enumerate(
            [
                ("null", "undefined-as-null"),
                ("null", "null"),
                ("[]", "empty-array"),
                ("{}", "empty"),
            ]
        )
    ),
]


@pytest.mark.parametrize(("json_text", "recorded"), RECORDED_DESCRIPTORS)
def test_descriptor_equals_the_recorded_one(json_text: str, recorded: Any) -> None:
    reference = describe(json_text)

    assert _ID.fullmatch(reference["id"])
    assert without_id(reference) == without_id(recorded)


def test_auto_saved_value_equals_the_recorded_reference_marker() -> None:
    recorded = expected_value("results/auto-saved-object-preview")
    reference = describe(dumps(batch_value()))

    marker = reference_marker(reference, 65_536)

    assert marker is not None
    assert marker["reference"] is reference
    assert {**marker, "reference": without_id(reference)} == {
        **recorded,
        "reference": without_id(recorded["reference"]),
    }
    assert marker["guidance"] == RETAINED_GUIDANCE


def test_saved_results_keep_the_recorded_capacity_behaviour() -> None:
    # spec-E31-E32: a 1022-byte save fills a 1024-byte allowance.
    overflow_message = expected_value("spec-E31-E32/results-capacity", 1)["overflow"]
    store = ResultsStore(allowance_bytes=1024)
    first = store.save(dumps(LOBSTER * 255))

    with pytest.raises(InputError) as overflow:
        store.save("123")
    loaded = json.loads(store.load(first["id"]))
    assert store.delete(first["id"]) is True
    replacement = store.save(dumps(LOBSTER * 255))

    assert overflow.value.message == overflow_message == CAPACITY_MESSAGE
    assert overflow.value.code == "invalid_input"
    assert utf16_len(loaded) == 510
    assert replacement["bytes"] == 1022
    with pytest.raises(InputError, match=re.escape(UNAVAILABLE_MESSAGE)):
        store.load(first["id"])


def test_load_and_delete_errors_equal_the_recorded_messages() -> None:
    recorded = expected_value("results/save-load-delete")["errors"]
    store = ResultsStore(allowance_bytes=10_485_760)
    reference = store.save(dumps({"a": [1, 2, 3], "b": "text"}))
    store.delete(reference["id"])

    def message(action: Any, *args: object) -> str:
        with pytest.raises(InputError) as caught:
            action(*args)
        return caught.value.message

    assert {
        "afterDelete": message(store.load, reference["id"]),
        "empty": message(store.load, ""),
        "number": message(store.load, 42),
        "deleteMissing": message(store.delete, "result_missing"),
    } == recorded
    assert recorded["empty"] == INVALID_ID_MESSAGE


def test_sixty_five_entries_are_refused_without_eviction() -> None:
    store = ResultsStore(allowance_bytes=10_485_760)
    ids = [store.save(str(i))["id"] for i in range(64)]

    with pytest.raises(InputError, match=re.escape(CAPACITY_MESSAGE)):
        store.save("64")

    assert [store.load(i) for i in ids] == [str(i) for i in range(64)]
    assert len(store) == 64


def test_a_value_larger_than_the_allowance_is_refused_with_the_capacity_message() -> None:
    store = ResultsStore(allowance_bytes=1024)

    with pytest.raises(InputError, match=re.escape(CAPACITY_MESSAGE)):
        store.save(dumps("x" * 1023))

    assert len(store) == 0
    assert store.used_bytes == 0


def test_save_of_undefined_stores_null() -> None:
    store = ResultsStore(allowance_bytes=1024)

    reference = store.save(None)

    assert store.load(reference["id"]) == "null"
    assert reference["bytes"] == 4


def test_entries_keep_their_network_provenance() -> None:
    store = ResultsStore(allowance_bytes=1024)

    flagged = store.save("[1]", network_content=True)
    plain = store.save("[2]")

    assert store.get(flagged["id"]).network_content is True
    assert store.get(plain["id"]).network_content is False


def test_a_closed_store_reports_the_catalog_change() -> None:
    store = ResultsStore(allowance_bytes=1024)
    reference = store.save("1")

    store.close()
    store.close()

    for action in (lambda: store.load(reference["id"]), lambda: store.save("2")):
        with pytest.raises(InputError, match=re.escape(CATALOG_CLOSED_MESSAGE)):
            action()
    assert retain_oversized_value(store, JsonSource.capture("[1]"), _never) == (
        NOT_RETAINED_CATALOG
    )


def test_a_caller_from_another_run_is_refused() -> None:
    store = ResultsStore(allowance_bytes=1024, scope="run-a")

    store.check_scope("run-a")
    with pytest.raises(InputError, match=re.escape(SCOPE_MESSAGE)):
        store.check_scope("run-b")


@pytest.mark.parametrize("allowance", [0, -1, True])
def test_a_non_positive_allowance_is_a_configuration_error(allowance: int) -> None:
    with pytest.raises(ConfigurationError, match="allowance_bytes"):
        ResultsStore(allowance_bytes=allowance)


# --- automatic retention (§6.5) --------------------------------------------------------------


def test_retention_refused_when_the_store_is_full_keeps_old_references() -> None:
    # spec-E33: 64 saved scalars fill the store; the oversized array is not retained.
    recorded = expected_value("spec-E33/store-full-no-auto-retention", 1)["guidance"]
    store = ResultsStore(allowance_bytes=10_485_760)
    ids = [store.save(str(i))["id"] for i in range(64)]
    rows = [{"id": i, "description": "data" * 10} for i in range(180)]

    outcome = retain_oversized_value(store, JsonSource.capture(dumps(rows)), lambda _: True)

    assert outcome == recorded == NOT_RETAINED_CAPACITY
    assert store.load(ids[0]) == "0"


def test_retention_of_a_value_over_the_data_allowance_is_refused() -> None:
    # spec-E34: maxSnapshotBytes 1024 makes the allowance 1024 bytes.
    recorded = expected_value("spec-E34/retention-model-budget")["guidance"]
    rows = [{"id": i, "payload": LOBSTER * 10} for i in range(180)]
    store = ResultsStore(allowance_bytes=1024)

    outcome = retain_oversized_value(store, JsonSource.capture(dumps({"rows": rows})), _never)

    assert outcome == recorded == NOT_RETAINED_DATA_ALLOWANCE
    assert len(store) == 0


def test_a_value_the_worker_kept_only_in_part_exceeds_the_data_allowance() -> None:
    store = ResultsStore(allowance_bytes=10_000)
    source = JsonSource.capture(dumps(list(range(5000))), max_bytes=1024)

    assert retain_oversized_value(store, source, _never) == NOT_RETAINED_DATA_ALLOWANCE
    assert len(store) == 0


def test_restart_safe_cells_never_retain() -> None:
    store = ResultsStore(allowance_bytes=10_000)

    outcome = retain_oversized_value(
        store, JsonSource.capture("[1,2]"), _never, mode="restart_safe"
    )

    assert outcome == NOT_RETAINED_RESTART_SAFE
    assert "restart-safe" in outcome
    assert len(store) == 0


@pytest.mark.parametrize(
    ("text", "mode"),
    [("[1]", "headless"), ('"long string"', "interactive"), ("12345", "interactive")],
    ids=["headless", "string", "number"],
)
def test_ineligible_values_keep_the_ordinary_marker(text: str, mode: Any) -> None:
    store = ResultsStore(allowance_bytes=10_000)

    assert retain_oversized_value(store, JsonSource.capture(text), _never, mode=mode) is None
    assert len(store) == 0


def test_without_a_store_the_catalog_reason_is_given() -> None:
    assert retain_oversized_value(None, JsonSource.capture("{}"), _never) == NOT_RETAINED_CATALOG


def test_a_delivered_reference_stays_saved() -> None:
    store = ResultsStore(allowance_bytes=10_000_000)
    text = dumps(batch_value())
    offered: list[ResultReference] = []

    def deliver(reference: ResultReference) -> bool:
        offered.append(reference)
        return True

    outcome = retain_oversized_value(store, JsonSource.capture(text), deliver)

    assert outcome is offered[0]
    assert isinstance(outcome, dict)
    assert store.load(outcome["id"]) == text


def test_an_undelivered_reference_is_released_and_consumes_no_capacity() -> None:
    # spec E38: the reference cannot fit the model budget; 64 later saves still succeed.
    store = ResultsStore(allowance_bytes=10_000_000)
    rows = [{"id": i, "amount": 4} for i in range(180)]

    outcome = retain_oversized_value(store, JsonSource.capture(dumps(rows)), _never)

    assert outcome == NOT_RETAINED_OUTPUT_BUDGET
    assert (len(store), store.used_bytes) == (0, 0)
    for i in range(64):
        store.save(str(i))


def test_a_failing_delivery_releases_the_save() -> None:
    store = ResultsStore(allowance_bytes=10_000)

    def deliver(_: ResultReference) -> bool:
        raise RuntimeError("projection failed")

    with pytest.raises(RuntimeError, match="projection failed"):
        retain_oversized_value(store, JsonSource.capture("[1,2,3]"), deliver)
    assert len(store) == 0


def test_discarding_an_admitted_value_is_idempotent() -> None:
    store = ResultsStore(allowance_bytes=10_000)
    reference = store.admit("[1,2,3]")
    assert not isinstance(reference, str)

    store.discard(reference["id"])
    store.discard(reference["id"])

    assert (len(store), store.used_bytes) == (0, 0)


@pytest.mark.parametrize(
    ("allowance", "saved", "refusal"),
    [(4, 0, "data_allowance"), (10, 1, "capacity")],
    ids=["over-allowance", "full"],
)
def test_admit_names_why_a_value_was_not_saved(allowance: int, saved: int, refusal: str) -> None:
    store = ResultsStore(allowance_bytes=allowance, max_entries=1)
    for _ in range(saved):
        store.save("1")

    assert store.admit("[1,2,3]") == refusal
    assert len(store) == saved


def test_reference_marker_shrinks_shape_and_preview_but_keeps_identity() -> None:
    reference = describe(dumps(e36_value()))
    full = reference_marker_bytes(reference)
    minimal = minimal_reference_marker_bytes(reference)

    for limit in (full, full - 1, (full + minimal) // 2, minimal):
        marker = reference_marker(reference, limit)
        assert marker is not None
        assert utf8_len(dumps(marker)) <= limit
        fitted = marker["reference"]
        assert (fitted["id"], fitted["bytes"], fitted["count"]) == (
            reference["id"],
            reference["bytes"],
            reference["count"],
        )
        assert reference["shape"].startswith(fitted["shape"])
        assert reference["preview"].startswith(fitted["preview"])
    assert reference_marker(reference, minimal - 1) is None


def test_fit_reference_keeps_a_fitting_reference_unchanged() -> None:
    reference = describe("[1,2,3]")

    assert fit_reference(reference, MAX_REFERENCE_BYTES) is reference


# --- descriptor properties and traversal limits ---------------------------------------------


def test_deep_and_long_key_values_are_described_as_limited() -> None:
    # spec E37: a 10,000-character key and a 20-level chain.
    root: dict[str, Any] = {"x" * 10_000: [77]}
    node = root
    for _ in range(20):
        node["deep"] = {}
        node = node["deep"]
    node["hidden"] = [99]

    reference = describe(dumps(root))

    assert reference["shape"].startswith("limited traversal")
    assert '"traversalLimited":true' in reference["preview"]
    assert reference["previewTruncated"] is True
    assert utf8_len(dumps(reference)) <= MAX_REFERENCE_BYTES


def test_keys_are_visited_in_javascript_order() -> None:
    reference = describe('{"b":[1],"10":[2,3],"2":[4,5]}')

    assert reference["shape"] == (
        '$["10"]: 2 items, sampled 2/2: number; $["2"]: 2 items, sampled 2/2: number; '
        "$.b: 1 items, sampled 1/1: number"
    )


def test_only_the_eight_longest_arrays_are_described() -> None:
    value = {f"k{i}": list(range(i)) for i in range(1, 11)}

    shape = describe(dumps(value))["shape"]

    assert shape.startswith("limited traversal; $.k10: 10 items")
    assert "$.k3:" in shape
    assert "$.k2:" not in shape


def test_long_strings_and_keys_are_sampled_with_an_ellipsis() -> None:
    value = {"k" * 50: "é" * 100, "pad": "x" * 300}

    preview = json.loads(describe(dumps(value))["preview"])

    assert preview == {
        "sampled": True,
        "traversalLimited": False,
        "value": {"k" * 40 + "…": "é" * 24 + "…", "pad": "x" * 48 + "…"},
    }


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=())),
    lambda children: (
        st.lists(children, max_size=12)
        | st.dictionaries(st.text(st.characters(exclude_categories=()), max_size=300), children)
    ),
    max_leaves=60,
)


def describe_unfitted(text: str) -> dict[str, Any]:
    """The descriptor before the 768-byte fitting (same id length as a real one)."""
    shape, preview = _shape_and_preview(json.loads(text), text, utf8_len(text))  # pyright: ignore[reportPrivateUsage]
    return {
        "id": f"result_{'0' * 36}",
        "bytes": utf8_len(text),
        "count": 1,
        "shape": shape,
        "preview": preview,
        "previewTruncated": False,
    }


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_descriptor_fits_768_bytes_with_exact_bytes_and_count(value: Any) -> None:
    text = dumps(value)
    parsed = json.loads(text)

    reference = describe(text)

    assert utf8_len(dumps(reference)) <= MAX_REFERENCE_BYTES
    assert reference["bytes"] == utf8_len(text)
    assert reference["count"] == (len(parsed) if isinstance(parsed, list | dict) else 1)  # pyright: ignore[reportUnknownArgumentType]
    # A value over 256 bytes is always previewed by sample; a smaller one verbatim, unless
    # its shape (long escaped keys in array paths) forced the 768-byte fitting of §6.6.
    if utf8_len(text) > 256:
        assert reference["previewTruncated"] is True
    elif reference["previewTruncated"] is False:
        assert reference["preview"] == text
    else:
        assert utf8_len(dumps(describe_unfitted(text))) > MAX_REFERENCE_BYTES


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=400), min_size=1, max_size=40))
def test_long_values_are_fitted_and_still_fit_768_bytes(items: list[str]) -> None:
    text = dumps({"items": items, "more": [items, items]})

    reference = describe(text)

    assert utf8_len(dumps(reference)) <= MAX_REFERENCE_BYTES
    assert reference["bytes"] == utf8_len(text)


def _never(_: ResultReference) -> bool:
    return False


def test_save_with_the_parsed_value_gives_the_same_descriptor() -> None:
    store = ResultsStore(allowance_bytes=10_000_000)
    value = e36_value()

    with_value = store.save(dumps(value), value=value)
    parsed_again = store.save(dumps(value))

    assert without_id(with_value) == without_id(parsed_again)
