"""Sealed durable records (`_runs/_sealed.py`): a parked run's record, its written-back replies
and a shared saved result open only for the session, run and content they were sealed for.
What a writer of the database can try end to end is in `tests/hostile/test_hostile_trust.py`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawcell import SnapshotError
from clawcell._runs._sealed import open_record, open_result, seal_record, seal_reply, seal_result
from clawcell.store import ParkedRun, StateKeys

KEYS = StateKeys(keys={"k1": b"k" * 32}, active="k1")
STATE: dict[str, Any] = {"version": 2, "cell": {"pending": []}}
BLOB = b"snapshot bytes"


def _run(meta: Any, *, run_id: str = "cm_1", blob: bytes = BLOB) -> ParkedRun:
    return ParkedRun(run_id=run_id, blob=blob, meta=meta, saved_at=0.0)


def test_a_sealed_record_opens_as_its_state_without_the_seal() -> None:
    meta = seal_record(KEYS, "s", "cm_1", STATE, BLOB)
    assert "seal" in meta
    assert open_record(KEYS, "s", _run(meta)) == STATE


@pytest.mark.parametrize(
    ("session_id", "run", "keys"),
    [
        ("other", _run(seal_record(KEYS, "s", "cm_1", STATE, BLOB)), KEYS),
        ("s", _run(seal_record(KEYS, "s", "cm_1", STATE, BLOB), run_id="cm_2"), KEYS),
        ("s", _run(seal_record(KEYS, "s", "cm_1", STATE, BLOB), blob=b"other bytes"), KEYS),
        ("s", _run({**seal_record(KEYS, "s", "cm_1", STATE, BLOB), "version": 3}), KEYS),
        ("s", _run(dict(STATE)), KEYS),
        (
            "s",
            _run(seal_record(KEYS, "s", "cm_1", STATE, BLOB)),
            StateKeys(keys={"k2": b"o" * 32}, active="k2"),
        ),
    ],
    ids=["other-session", "other-run", "other-snapshot", "changed-state", "unsealed", "other-key"],
)
def test_a_record_that_fails_its_seal_is_a_snapshot_error(
    session_id: str, run: ParkedRun, keys: StateKeys
) -> None:
    with pytest.raises(SnapshotError, match=r"fails its state-key check"):
        open_record(keys, session_id, run)


def test_written_back_replies_open_with_the_record_and_are_checked_one_by_one() -> None:
    reply = {"ok": True, "payload": "42"}
    meta = {
        **seal_record(KEYS, "s", "cm_1", STATE, BLOB),
        "settled": {"r1": seal_reply(KEYS, "s", "cm_1", "r1", reply)},
    }
    assert open_record(KEYS, "s", _run(meta)) == {**STATE, "settled": {"r1": reply}}

    moved = {**meta, "settled": {"r2": meta["settled"]["r1"]}}  # sealed for another request
    with pytest.raises(SnapshotError, match=r"\('r2'\) fails its state-key check"):
        open_record(KEYS, "s", _run(moved))


def test_a_meta_that_is_not_an_object_is_a_damaged_record() -> None:
    with pytest.raises(SnapshotError, match=r"^parked run record is damaged: run 'cm_1': meta"):
        open_record(KEYS, "s", _run([1, 2]))


def test_a_sealed_result_opens_only_for_its_scope_id_text_and_network_flag() -> None:
    stored = seal_result(KEYS, "scope", "res_1", '{"rows":[1]}', True)
    assert open_result(KEYS, "scope", "res_1", stored) == ('{"rows":[1]}', True)
    assert open_result(KEYS, "other", "res_1", stored) is None
    assert open_result(KEYS, "scope", "res_2", stored) is None
    fields = json.loads(stored)
    for changed in ({"json": "{}"}, {"networkContent": False}, {"seal": None}):
        assert open_result(KEYS, "scope", "res_1", json.dumps({**fields, **changed})) is None


@pytest.mark.parametrize("stored", ["not json", "[1]", '{"json": 1, "networkContent": true}'])
def test_a_stored_result_that_is_not_a_sealed_object_is_not_opened(stored: str) -> None:
    assert open_result(KEYS, "scope", "res_1", stored) is None
