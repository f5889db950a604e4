"""The host-side ledger of pending bridge requests (`clawcell._cell._requests`)."""

from __future__ import annotations

import gc
import json
from typing import cast

import pytest

from clawcell._cell import _requests as requests  # pyright: ignore[reportPrivateUsage]
from clawcell._cell._requests import DEPTH_MESSAGE, RequestLedger, host_cost


def test_a_released_request_gives_its_bytes_back() -> None:
    ledger = RequestLedger(1300)
    text = json.dumps(["echo", {"s": "x" * 400}])
    assert ledger.admit("a", text) == ["echo", {"s": "x" * 400}]
    assert ledger.held == host_cost(text)
    assert isinstance(ledger.admit("b", text), list)
    assert isinstance(ledger.admit("c", text), str)  # over the cell's 1300 bytes
    ledger.release("a")
    assert isinstance(ledger.admit("c", text), list)
    ledger.release_all()
    assert ledger.held == 0


def test_a_report_is_admitted_as_its_requests_one_by_one() -> None:
    # Over the cell's 1300 bytes at the third request, one too deep, one not a list: the
    # report's admission (one lock) answers and holds what `admit` in order would.
    small = json.dumps(["echo", {"s": "x" * 400}])
    deep = "[" * 200 + "]" * 200
    report = [
        ["a", "callValue", small],
        ["b", "callValue", deep],
        ["c", "callValue", small],
        ["d", "sleep", "5"],
        ["e", "callValue", small],
    ]
    one_by_one = RequestLedger(1300)
    expected = [(rid, method, one_by_one.admit(rid, text)) for rid, method, text in report]
    ledger = RequestLedger(1300)
    admitted, refused = ledger.admit_all([list(request) for request in report])
    assert admitted == [r for r in expected if not isinstance(r[2], str)]
    assert refused == [r for r in expected if isinstance(r[2], str)]
    assert [rid for rid, _, _ in refused] == ["b", "e"]
    assert ledger.held == one_by_one.held == 2 * host_cost(small) + host_cost("5")
    ledger.release_many(["a", "c", "d", "b", "missing"])
    assert ledger.held == 0


def test_a_dropped_ledger_gives_the_process_allowance_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gc.collect()
    held = requests._process.held  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(requests, "PROCESS_PENDING_BYTES", held + 2000)
    text = json.dumps(["echo", {"s": "x" * 1500}])
    lost = RequestLedger(10_000)
    assert isinstance(lost.admit("a", text), list)
    assert isinstance(RequestLedger(10_000).admit("b", text), str)
    del lost
    gc.collect()
    assert isinstance(RequestLedger(10_000).admit("b", text), list)


def test_the_depth_cap_is_exact() -> None:
    ledger = RequestLedger(10**9)
    inside = "[" * 128 + "]" * 128
    assert ledger.admit("a", inside) != DEPTH_MESSAGE
    assert ledger.admit("b", "[" + inside + "]") == DEPTH_MESSAGE
    assert ledger.admit("c", "[" * 5000 + "]" * 5000) == DEPTH_MESSAGE


def _depth(value: object) -> int:
    if isinstance(value, list):
        items: list[object] = list(cast(list[object], value))
    elif isinstance(value, dict):
        items = list(cast(dict[str, object], value).values())
    else:
        return 0
    return 1 + max((_depth(v) for v in items), default=0)


SHAPES: list[object] = [
    [],
    [[[]]],
    [{"a]": [1, "[[{", {"b": '\\"]'}]}, []],
    [{"k[": {"k{": {"k": ['"', "\\", "]]]"]}}}],
    [[[[[[[["x"]]]]]]], {}],
]


@pytest.mark.parametrize("value", SHAPES)
def test_the_text_depth_check_agrees_with_the_parsed_depth(value: object) -> None:
    text = json.dumps(value)
    for limit in range(1, 10):
        assert requests._nests_deeper_than(text, limit) == (_depth(value) > limit)  # pyright: ignore[reportPrivateUsage]


def test_arguments_too_deep_are_refused_without_being_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_parse(text: str) -> object:
        raise AssertionError("parsed")

    monkeypatch.setattr(requests, "parse_json_text", no_parse)
    deep = '["echo",{"o":' + "[" * 3000 + "]" * 3000 + "}]"
    assert RequestLedger(1 << 20).admit("a", deep) == DEPTH_MESSAGE


def test_null_true_and_false_elements_cost_their_list_slot_and_not_a_node() -> None:
    # Large arguments only: below 64 KB the plain estimate is used (no extra scans per call).
    holes = json.dumps([None] * 20_000, separators=(",", ":"))
    flags = json.dumps([True, False] * 10_000, separators=(",", ":"))
    numbers = json.dumps([7] * 20_000, separators=(",", ":"))
    assert host_cost(holes) < 250_000
    assert host_cost(numbers) > 1_000_000
    assert host_cost(flags) < 250_000
    small = json.dumps([None] * 1000, separators=(",", ":"))
    assert host_cost(small) == len(small) + 64 * small.count(",") + 64


@pytest.mark.parametrize("word", ["null", "true", "false"])
def test_words_inside_a_string_never_bring_the_cost_below_the_text(word: str) -> None:
    for mark in ",[":
        text = json.dumps(["echo", {"s": (mark + word) * 50_000}])
        assert host_cost(text) >= len(text)
