"""`mcp serve` on several workers sharing one store: an approval round's `requestState` issued
by one worker is honoured by another (sealed with the store's state keys, rotatable)."""

from __future__ import annotations

import base64
import secrets
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest

from clawcell import CodeMode, Limits, SQLiteStore, Tool
from clawcell.mcp_server import CodeModeServer
from clawcell.mcp_server._request_state import RequestStates, SharedSdkCodec
from clawcell.store import StateKeys
from tests.conftest import run

LIMITS = Limits(timeout_ms=60_000)
PAY = "return await pay({ amount: 5 });"
CLIENT = '["client", "1", null]'


def _key() -> bytes:
    return secrets.token_bytes(32)


def _ctx() -> Any:
    return SimpleNamespace(
        session=SimpleNamespace(
            client_capabilities=SimpleNamespace(elicitation=SimpleNamespace(form={}, url=None)),
            can_send_request=False,
            client_params=SimpleNamespace(client_info=SimpleNamespace(name="client", version="1")),
        ),
        request_id=1,
    )


def test_an_approval_round_started_on_one_worker_is_answered_on_another(tmp_path: Path) -> None:
    paid: list[int] = []

    def pay(params: dict[str, Any]) -> dict[str, Any]:
        paid.append(params["amount"])
        return {"paid": params["amount"]}

    tool = Tool(name="pay", execute=pay, approval="always")
    path = tmp_path / "state.db"

    async def body() -> tuple[str, bool]:
        async with (
            SQLiteStore(path) as store_a,
            SQLiteStore(path) as store_b,
            CodeMode([tool], limits=LIMITS, store=store_a, session_id="s") as mode_a,
            CodeMode([tool], limits=LIMITS, store=store_b, session_id="s") as mode_b,
        ):
            a, b = CodeModeServer(mode_a), CodeModeServer(mode_b)
            first = await a._call_tool(  # pyright: ignore[reportPrivateUsage]
                _ctx(), types.CallToolRequestParams(name="exec", arguments={"code": PAY})
            )
            assert isinstance(first, types.InputRequiredResult)
            asked = list(first.input_requests or {})
            retry = types.CallToolRequestParams(
                name="exec",
                arguments={"code": PAY},
                request_state=first.request_state,
                input_responses={
                    asked[0]: types.ElicitResult(action="accept", content={"approve": True})
                },
            )
            result = await b._call_tool(_ctx(), retry)  # pyright: ignore[reportPrivateUsage]
            assert isinstance(result, types.CallToolResult), result
            return result.content[0].text, bool(result.is_error)  # type: ignore[union-attr]

    text, failed = run(body())
    assert not failed, text
    assert paid == [5]


def test_a_state_sealed_with_the_old_key_opens_after_a_rotation_and_not_after_its_removal() -> None:
    old, new = _key(), _key()
    before = RequestStates(StateKeys(keys={"k1": old}, active="k1"))
    rotated = RequestStates(StateKeys(keys={"k2": new, "k1": old}, active="k2"))
    dropped = RequestStates(StateKeys(keys={"k2": new}, active="k2"))
    state = before.issue("cm_1", ["ap_1"], CLIENT)
    assert rotated.open(state, CLIENT) == ("cm_1", ["ap_1"])
    assert dropped.open(state, CLIENT) is None
    assert rotated.open(state, '["intruder", "1", null]') is None
    assert base64.b64encode(old).decode() not in state


def test_the_sdk_boundary_of_one_worker_opens_what_another_sealed_under_the_shared_keys() -> None:
    from mcp.server.request_state import InvalidRequestState

    old, new = _key(), _key()
    sealing = SharedSdkCodec(RequestStates(StateKeys(keys={"k1": old}, active="k1")))
    other_worker = SharedSdkCodec(
        RequestStates(StateKeys(keys={"k2": new, "k1": old}, active="k2"))
    )
    token = sealing.seal(b"round one")
    assert other_worker.unseal(token) == b"round one"
    stranger = SharedSdkCodec(RequestStates(StateKeys(keys={"k3": _key()}, active="k3")))
    with pytest.raises(InvalidRequestState):
        stranger.unseal(token)
