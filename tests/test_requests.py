"""The host-side ledger of pending bridge requests (`clawcell._requests`)."""

from __future__ import annotations

import gc
import json

import pytest

from clawcell import _requests as requests  # pyright: ignore[reportPrivateUsage]
from clawcell._requests import DEPTH_MESSAGE, RequestLedger, host_cost


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
