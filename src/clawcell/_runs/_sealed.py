"""Sealed durable records: parked runs, their written-back replies, and shared saved results.

A parked run's `meta` carries `seal`, the state-key MAC (`store/_seals.py`) over the session
id, the run id, the record (its `meta` without `seal` and `settled`) and the snapshot bytes.
Replies written back after the park (`meta.settled[requestId]`) each carry their own seal
over the session, run and request ids and the reply, since they are merged in by the store
after the park. `open_record` checks all of them before the snapshot is decompressed or
restored and before the record is parsed; anything that fails is a `SnapshotError`.

A shared saved result (`SharedResults`) carries a seal over its scope, id, JSON text and
network flag, so neither its content nor its provenance can be changed in the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from ..errors import SnapshotError
from ..store import ParkedRun, StateKeys, state_keys_for

__all__ = [
    "SEAL",
    "KeySource",
    "open_record",
    "open_result",
    "resolve_keys",
    "seal_record",
    "seal_reply",
    "seal_result",
]

KeySource = StateKeys | Callable[[], StateKeys] | None
"""State keys, or how to get them when first needed (`None`: the store's own)."""


def resolve_keys(source: KeySource, store: object) -> StateKeys:
    """The keys `source` stands for. Resolving late matters: a session that never seals or
    reads a record creates no development key file beside its database."""
    if isinstance(source, StateKeys):
        return source
    if source is not None:
        return source()
    return state_keys_for(store, durable=True)


SEAL: Final = "seal"
_SETTLED: Final = "settled"


def seal_record(
    keys: StateKeys, session_id: str, run_id: str, state: Mapping[str, Any], blob: bytes
) -> dict[str, Any]:
    """`state` with its `seal` over the run's identity, the record and the snapshot."""
    body = {k: v for k, v in state.items() if k not in (SEAL, _SETTLED)}
    seal = keys.seal("run", session_id, run_id, body, blob)
    return {**body, SEAL: seal}


def seal_reply(
    keys: StateKeys, session_id: str, run_id: str, request_id: str, reply: Mapping[str, Any]
) -> dict[str, Any]:
    """A written-back reply with its own seal."""
    body = dict(reply)
    seal = keys.seal("reply", session_id, run_id, request_id, body)
    return {**body, SEAL: seal}


def open_record(keys: StateKeys, session_id: str, run: ParkedRun) -> dict[str, Any]:
    """The run's `meta` without seals, once every seal in it holds for this session and run.

    Raises:
        SnapshotError: a missing or failing seal (forged, moved from another run or session,
            or damaged), or a `meta` that is not an object.
    """
    meta = _object(run.meta, f"run {run.run_id!r}: meta")
    body = {k: v for k, v in meta.items() if k not in (SEAL, _SETTLED)}
    if not keys.verify(meta.get(SEAL), "run", session_id, run.run_id, body, run.blob):
        raise SnapshotError(
            f"parked run {run.run_id!r} fails its state-key check (forged, moved from another "
            "run or session, written under another key, or damaged); it was discarded."
        )
    settled: dict[str, Any] = {}
    for request_id, sealed in _object(meta.get(_SETTLED, {}), "settled").items():
        reply = dict(_object(sealed, f"settled reply {request_id!r}"))
        seal = reply.pop(SEAL, None)
        parts = ("reply", session_id, run.run_id, request_id, reply)
        if not keys.verify(seal, *parts):
            raise SnapshotError(
                f"a reply written back to parked run {run.run_id!r} ({request_id!r}) fails its "
                "state-key check; the run was discarded."
            )
        settled[request_id] = reply
    return {**body, _SETTLED: settled} if settled else body


def seal_result(keys: StateKeys, scope: str, result_id: str, text: str, network: bool) -> str:
    """The stored text of a shared saved result."""
    seal = keys.seal("result", scope, result_id, text, "1" if network else "0")
    return json.dumps({"json": text, "networkContent": network, SEAL: seal})


def open_result(
    keys: StateKeys, scope: str, result_id: str, stored: str
) -> tuple[str, bool] | None:
    """`(json, networkContent)` of a stored result whose seal holds, else `None`."""
    try:
        data: object = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    fields = cast(dict[str, object], data)
    text, network = fields.get("json"), fields.get("networkContent")
    if not isinstance(text, str) or not isinstance(network, bool):
        return None
    flag = "1" if network else "0"
    if not keys.verify(fields.get(SEAL), "result", scope, result_id, text, flag):
        return None
    return text, network


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SnapshotError(f"parked run record is damaged: {what} is not an object.")
    return cast(Mapping[str, Any], value)
