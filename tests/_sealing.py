"""Test helper: write a parked run the way a worker holding the state key would (resealed).

Tests of the record parser and the snapshot loader tamper with a record and then need it to
pass the state-key check, to reach the code they test (the check itself is tested in
`tests/hostile/test_hostile_trust.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clawcell._runs._sealed import seal_record
from clawcell.store import SessionStore, state_keys_for


def resealed(
    store: SessionStore, session_id: str, run_id: str, blob: bytes, meta: Mapping[str, Any]
) -> dict[str, Any]:
    """`meta` sealed for `blob` with the key the store's runtimes use."""
    keys = state_keys_for(store, durable=True)
    return seal_record(keys, session_id, run_id, meta, blob)


async def save_sealed(
    store: SessionStore, session_id: str, run_id: str, blob: bytes, meta: Mapping[str, Any]
) -> None:
    """Save a (tampered) run as a key holder would."""
    await store.save_run(session_id, run_id, blob, resealed(store, session_id, run_id, blob, meta))
