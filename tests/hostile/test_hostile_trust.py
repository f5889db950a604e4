"""A writer of the store's database who does not hold the state key: forged, swapped, moved
and replayed run records, decisions and saved results, and the keys themselves. Each case
asserts the outcome (refused, discarded, nothing run) and that a clean call afterwards works.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, ConfigurationError, InputError, Limits, SnapshotError, Tool
from clawcell.store import ParkedRun, SQLiteStore, StateKeys, StoredValue, state_keys_for
from tests.conftest import echo_tool, run

LIMITS = Limits(timeout_ms=60_000)
SESSION = "trust"
PARK = "await echo({ n: 1 }); await yield_control('x'); return 'resumed';"
PAY = "try { return await pay({ amount: 5 }); } catch (e) { return { code: e.code }; }"
SAVE = "const saved = await results.save({ rows: [1, 2] }); return saved.id;"
LOAD = "try { return await results.load(ID); } catch (e) { return 'unavailable'; }"
KEY = base64.b64encode(b"k" * 32).decode()
OTHER_KEY = base64.b64encode(b"o" * 32).decode()


@pytest.fixture(autouse=True)
def _no_configured_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CLAWCELL_STATE_KEY", "CLAWCELL_STATE_KEY_FILE", "CLAWCELL_ENV"):
        monkeypatch.delenv(name, raising=False)


def _mode(store: SQLiteStore, session: str = SESSION, tools: list[Tool] | None = None) -> CodeMode:
    return CodeMode(tools or [echo_tool()], store=store, session_id=session, limits=LIMITS)


async def _park(path: Path, session: str = SESSION) -> str:
    async with SQLiteStore(path) as store, _mode(store, session) as mode:
        parked = await mode.exec(PARK)
    assert parked["status"] == "waiting", parked
    return parked["runId"]


async def _continue(path: Path, run_id: str, session: str = SESSION) -> tuple[str, str, Any]:
    """The first `wait`'s outcome, the second's, and a clean cell's value."""
    async with SQLiteStore(path) as store, _mode(store, session) as mode:
        outcomes: list[str] = []
        for _ in range(2):
            try:
                outcomes.append(str((await mode.wait(run_id))["status"]))
            except SnapshotError as exc:
                outcomes.append("snapshot: " + exc.message)
            except InputError as exc:
                outcomes.append("input: " + exc.message)
        clean = await mode.exec("return 40 + 2")
    return outcomes[0], outcomes[1], clean["value"]


def _rewrite(meta: dict[str, Any], blob: bytes, change: str) -> tuple[dict[str, Any], bytes]:
    seal = meta.get("seal", {})
    changes: dict[str, Callable[[], tuple[dict[str, Any], bytes]]] = {
        "expiry_extended": lambda: ({**meta, "expiresAt": meta["expiresAt"] + 1e6}, blob),
        "restart_safe_flipped": lambda: ({**meta, "restartSafe": True}, blob),
        "write_injected": lambda: ({**meta, "writes": {"k": ['"evil"', False]}}, blob),
        "approval_injected": lambda: (
            {
                **meta,
                "approvals": [
                    {
                        "id": "ap_x",
                        "requestId": "r",
                        "tool": "pay",
                        "reason": "",
                        "input": {},
                        "requestedAt": 1.0,
                    }
                ],
            },
            blob,
        ),
        "seal_removed": lambda: ({k: v for k, v in meta.items() if k != "seal"}, blob),
        "seal_unknown_kid": lambda: ({**meta, "seal": {**seal, "kid": "nobody"}}, blob),
        "seal_mac_garbage": lambda: ({**meta, "seal": {**seal, "mac": "AAAA"}}, blob),
        "seal_not_an_object": lambda: ({**meta, "seal": [seal]}, blob),
        "blob_byte_flipped": lambda: (meta, blob[:100] + bytes([blob[100] ^ 1]) + blob[101:]),
        "blob_truncated": lambda: (meta, blob[: len(blob) // 2]),
        "blob_empty": lambda: (meta, b""),
        "settled_reply_forged": lambda: (
            {**meta, "settled": {"bridge:callValue:1": {"ok": True, "payload": "1"}}},
            blob,
        ),
        "settled_reply_sealed_with_garbage": lambda: (
            {**meta, "settled": {"x": {"ok": True, "payload": "1", "seal": seal}}},
            blob,
        ),
    }
    return changes[change]()


CHANGES = [
    "expiry_extended",
    "restart_safe_flipped",
    "write_injected",
    "approval_injected",
    "seal_removed",
    "seal_unknown_kid",
    "seal_mac_garbage",
    "seal_not_an_object",
    "blob_byte_flipped",
    "blob_truncated",
    "blob_empty",
    "settled_reply_forged",
    "settled_reply_sealed_with_garbage",
]


async def _load(path: Path, run_id: str, session: str = SESSION) -> ParkedRun:
    async with SQLiteStore(path) as store:
        saved = await store.load_run(session, run_id)
    assert saved is not None
    return saved


async def _save(path: Path, session: str, run_id: str, blob: bytes, meta: dict[str, Any]) -> None:
    async with SQLiteStore(path) as store:
        await store.save_run(session, run_id, blob, meta)


@pytest.mark.parametrize("change", CHANGES)
def test_a_forged_run_record_is_refused_once_discarded_and_the_session_works_on(
    change: str, tmp_path: Path
) -> None:
    path = tmp_path / "state.db"

    async def body() -> tuple[str, str, Any]:
        run_id = await _park(path)
        saved = await _load(path, run_id)
        meta, blob = _rewrite(dict(saved.meta), saved.blob, change)
        await _save(path, SESSION, run_id, blob, meta)
        return await _continue(path, run_id)

    first, second, clean = run(body())
    assert first.startswith("snapshot: ") and "state-key check" in first
    assert second == "input: code mode run is unavailable or expired."
    assert clean == 42


def test_snapshots_swapped_between_two_runs_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"

    async def body() -> tuple[tuple[str, str, Any], tuple[str, str, Any]]:
        a, b = await _park(path), await _park(path)
        saved_a, saved_b = await _load(path, a), await _load(path, b)
        await _save(path, SESSION, a, saved_b.blob, dict(saved_b.meta))
        await _save(path, SESSION, b, saved_a.blob, dict(saved_a.meta))
        return await _continue(path, a), await _continue(path, b)

    for first, _, clean in run(body()):
        assert "state-key check" in first and clean == 42


def test_a_seal_replayed_under_another_run_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"

    async def body() -> tuple[tuple[str, str, Any], str]:
        genuine = await _park(path)
        saved = await _load(path, genuine)
        await _save(path, SESSION, "cm_replayed", saved.blob, dict(saved.meta))
        replayed = await _continue(path, "cm_replayed")
        own = (await _continue(path, genuine))[0]
        return replayed, own

    (first, _, clean), own = run(body())
    assert "state-key check" in first and clean == 42
    assert own == "completed"  # the genuine run is untouched


def test_a_run_moved_to_another_session_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"

    async def body() -> tuple[str, str, Any]:
        run_id = await _park(path, "victim")
        saved = await _load(path, run_id, "victim")
        await _save(path, "attacker", run_id, saved.blob, dict(saved.meta))
        return await _continue(path, run_id, "attacker")

    first, _, clean = run(body())
    assert "state-key check" in first and clean == 42


def _under_keyrings(
    path: Path, monkeypatch: pytest.MonkeyPatch, sealed: str, opened: str
) -> tuple[str, str, Any]:
    """Park a run with `CLAWCELL_STATE_KEY=sealed`, then continue it with `opened`."""
    monkeypatch.setenv("CLAWCELL_STATE_KEY", sealed)
    run_id = run(_park(path))
    monkeypatch.setenv("CLAWCELL_STATE_KEY", opened)
    return run(_continue(path, run_id))


def test_a_run_sealed_under_a_key_the_workers_do_not_hold_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyrings = (f"other:{OTHER_KEY}", f"mine:{KEY}")
    first, _, clean = _under_keyrings(tmp_path / "state.db", monkeypatch, *keyrings)
    assert "state-key check" in first and clean == 42


def test_a_rotated_keyring_still_opens_runs_sealed_under_the_previous_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyrings = (f"k1:{KEY}", f"k2:{OTHER_KEY},k1:{KEY}")
    first, second, clean = _under_keyrings(tmp_path / "state.db", monkeypatch, *keyrings)
    assert (first, clean) == ("completed", 42)
    assert second.startswith("input: ")


def test_a_retired_key_no_longer_opens_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyrings = (f"k1:{KEY}", f"k2:{OTHER_KEY}")
    first, _, clean = _under_keyrings(tmp_path / "state.db", monkeypatch, *keyrings)
    assert "state-key check" in first and clean == 42


# --- decisions ----------------------------------------------------------------------------


def _pay(paid: list[int]) -> Tool:
    def pay(params: dict[str, Any]) -> dict[str, Any]:
        paid.append(params["amount"])
        return {"paid": params["amount"]}

    return Tool(name="pay", execute=pay, approval="always")


def _decision_text(approval_id: str, run_id: str, **extra: Any) -> str:
    data = {
        "approvalId": approval_id,
        "runId": run_id,
        "tool": "pay",
        "decision": "approve",
        "note": "",
        "remember": "once",
        "by": "forger",
        "decidedAt": "2026-01-01T00:00:00.000+00:00",
        **extra,
    }
    return json.dumps(data)


FORGED_DECISIONS = ["unsealed", "sealed_for_another_approval", "from_another_session", "not_json"]


@pytest.mark.parametrize("forgery", FORGED_DECISIONS)
def test_a_forged_decision_in_the_ledger_runs_nothing(forgery: str, tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    paid: list[int] = []

    async def body() -> tuple[str, list[int], Any]:
        async with SQLiteStore(path) as store, _mode(store, tools=[_pay(paid)]) as mode:
            parked = await mode.exec(PAY)
            other = await mode.exec(PAY)
            run_id, approval = parked["runId"], parked["pendingApprovals"][0]["id"]
            ledger = SESSION + "\x1fapprovals"
            if forgery == "unsealed":
                text = _decision_text(approval, run_id)
            elif forgery == "sealed_for_another_approval":
                other_id = other["pendingApprovals"][0]["id"]
                await mode.decide(other["runId"], other_id, "approve")
                kept = await store.get(ledger, other_id)
                assert kept is not None
                text = kept.json.replace(other_id, approval).replace(other["runId"], run_id)
            elif forgery == "from_another_session":
                async with _mode(store, "elsewhere", [_pay(paid)]) as elsewhere:
                    foreign = await elsewhere.exec(PAY)
                    fid = foreign["pendingApprovals"][0]["id"]
                    await elsewhere.decide(foreign["runId"], fid, "approve")
                    kept = await store.get("elsewhere\x1fapprovals", fid)
                    assert kept is not None
                    text = kept.json.replace(fid, approval).replace(foreign["runId"], run_id)
            else:
                text = "{not json"
            await store.put(ledger, approval, StoredValue(json=text))
            still = await mode.wait(run_id)
            before = list(paid)
            await mode.decide(run_id, approval, "approve")
            done = await mode.wait(run_id)
            return str(still["status"]), before, done["value"]

    status, before, value = run(body())
    assert (status, before) == ("waiting", [])
    assert value == {"paid": 5}  # the clean decision afterwards is accepted and runs once


# --- saved results ------------------------------------------------------------------------

FORGED_RESULTS = ["content_changed", "network_flag_cleared", "moved_to_another_id", "unsealed"]


@pytest.mark.parametrize("forgery", FORGED_RESULTS)
def test_a_forged_saved_result_is_not_loaded_by_another_worker(
    forgery: str, tmp_path: Path
) -> None:
    path = tmp_path / "state.db"

    async def body() -> tuple[Any, Any]:
        async with SQLiteStore(path) as store, _mode(store) as a:
            result_id = str((await a.exec(SAVE))["value"])
            target = result_id
            text = await store.get_result(SESSION, result_id)
            assert text is not None
            data = json.loads(text)
            if forgery == "content_changed":
                data["json"] = '{"rows":[6,6,6]}'
            elif forgery == "network_flag_cleared":
                data["networkContent"] = not data["networkContent"]
            elif forgery == "moved_to_another_id":
                target = "result_moved"
            else:
                del data["seal"]
            await store.put_result(SESSION, target, json.dumps(data))
        async with SQLiteStore(path) as store, _mode(store) as b:
            loaded = (await b.exec(LOAD.replace("ID", repr(target))))["value"]
            clean = (await b.exec(SAVE))["status"]
        return loaded, clean

    loaded, clean = run(body())
    assert (loaded, clean) == ("unavailable", "completed")


# --- keys ---------------------------------------------------------------------------------


def test_a_durable_store_without_a_key_is_refused_in_production(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWCELL_ENV", "production")
    with pytest.raises(ConfigurationError) as refused:
        CodeMode(store=SQLiteStore(tmp_path / "s.db"))
    assert "needs a state key in production" in refused.value.message
    monkeypatch.setenv("CLAWCELL_STATE_KEY", f"prod:{KEY}")
    assert run(_clean(tmp_path / "s.db")) == 42


async def _clean(path: Path) -> Any:
    async with SQLiteStore(path) as store, _mode(store) as mode:
        return (await mode.exec("return 40 + 2"))["value"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("k1:" + base64.b64encode(b"short").decode(), "has 5 bytes"),
        ("k1:!!!notbase64", "is not base64"),
        (" , ", "holds no key"),
        ("a:b:" + KEY, "must be non-empty without"),
    ],
    ids=["short", "not_base64", "empty", "colon_in_id"],
)
def test_a_bad_state_key_is_a_configuration_error(
    value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWCELL_STATE_KEY", value)
    with pytest.raises(ConfigurationError) as refused:
        CodeMode(store=SQLiteStore(tmp_path / "s.db"))
    assert message in refused.value.message
    monkeypatch.delenv("CLAWCELL_STATE_KEY")
    assert run(_clean(tmp_path / "s.db")) == 42


def test_the_development_key_file_is_made_on_first_use_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    assert run(_clean(path)) == 42
    key_file = tmp_path / "s.db.key"
    assert not key_file.exists()  # nothing was sealed, so no key file was written
    state_keys_for(SQLiteStore(path), durable=True)
    assert key_file.stat().st_mode & 0o777 == 0o600
    first = state_keys_for(SQLiteStore(path), durable=True)
    assert first == state_keys_for(SQLiteStore(path), durable=True)


def test_a_key_file_others_can_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "state.key"
    key_file.write_text(f"k:{KEY}\n")
    os.chmod(key_file, 0o644)
    monkeypatch.setenv("CLAWCELL_STATE_KEY_FILE", str(key_file))
    with pytest.raises(ConfigurationError) as refused:
        CodeMode(store=SQLiteStore(tmp_path / "s.db"))
    assert "chmod 600" in refused.value.message
    os.chmod(key_file, 0o600)
    assert run(_clean(tmp_path / "s.db")) == 42
    assert StateKeys.read(key_file).active == "k"
