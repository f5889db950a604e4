"""The `requestState` of an approval round: what this server asked, sealed so it cannot be
forged.

On the 2026-07-28 protocol a server that needs the user's input answers a tool call with an
`input_required` result; the client asks the user and retries the call with the answers
(`inputResponses`) and the `requestState` it was given. The state names the run and the
approval ids the server asked about, and carries an HMAC-SHA256 seal over both and the
client's identity (its `clientInfo` and MCP session id, as far as the transport tells them),
under the **state keys of the server's store** (`clawcell.store.state_keys_for`: the keyring
every worker sharing that store is configured with, `CLAWCELL_STATE_KEY`). So behind a load
balancer the retry may reach any worker of the deployment; a key rotation (a new active key
listed first, the old one kept until the rounds in flight are over) keeps them valid.

A retried call counts only when its state was sealed by a worker holding these keys, to this
client, and then only for the ids it names; a state from another run, another client or a
server with other keys, or one a client made up, is refused and decides nothing. Without a
durable store the keys are the process's own, and a restart invalidates the states in
flight (the client then calls `wait`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

from ..store import StateKeys

__all__ = ["STATE_PREFIX", "RequestStates", "SharedSdkCodec", "client_identity"]

STATE_PREFIX: Final = "clawcell-approvals:"
_KIND: Final = "mcp-request-state"
_SDK_LABEL: Final = b"clawcell: the MCP SDK's requestState codec key"


class RequestStates:
    """Issues and opens sealed request states.

    Args:
        keys: The keyring that seals them (a function of no arguments may stand for it,
            resolved on first use); a fresh random key of this object when omitted.
    """

    def __init__(self, keys: StateKeys | Callable[[], StateKeys] | None = None) -> None:
        self._source = keys
        self._keys: StateKeys | None = None

    @property
    def keys(self) -> StateKeys:
        if self._keys is None:
            source = self._source
            if isinstance(source, StateKeys):
                self._keys = source
            elif source is not None:
                self._keys = source()
            else:
                self._keys = StateKeys(keys={"local": secrets.token_bytes(32)}, active="local")
        return self._keys

    def issue(self, run_id: str, approval_ids: Sequence[str], client: str) -> str:
        """The state of a round asking `client` about `approval_ids` of `run_id`."""
        body = json.dumps([run_id, list(approval_ids)], separators=(",", ":"))
        encoded = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
        seal = self.keys.seal(_KIND, encoded, client)
        return f"{STATE_PREFIX}{encoded}.{seal['mac']}.{seal['kid']}"

    def open(self, state: str, client: str) -> tuple[str, list[str]] | None:
        """`(run id, approval ids)` of a state sealed with these keys for `client`, else
        `None`."""
        encoded, _, rest = state.removeprefix(STATE_PREFIX).partition(".")
        mac, _, kid = rest.partition(".")  # base64 MACs hold no `.`; key ids may
        if not encoded or not self.keys.verify({"kid": kid, "mac": mac}, _KIND, encoded, client):
            return None
        try:
            data: Any = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
        except (binascii.Error, ValueError):
            return None
        if not isinstance(data, list) or len(cast(list[Any], data)) != 2:
            return None
        run_id, ids = cast(list[Any], data)
        if not isinstance(run_id, str) or not isinstance(ids, list):
            return None
        return run_id, [str(i) for i in cast(list[Any], ids)]


def client_identity(ctx: Any) -> str:
    """What tells this call's client apart: its declared name and version and the MCP session
    id, where the transport has them (one stdio process serves one client)."""
    session = getattr(ctx, "session", None)
    params = getattr(session, "client_params", None)
    info = getattr(params, "client_info", None)
    parts = (
        getattr(info, "name", None),
        getattr(info, "version", None),
        getattr(session, "session_id", None) or getattr(ctx, "session_id", None),
    )
    return json.dumps([p if isinstance(p, str) else None for p in parts])


class SharedSdkCodec:
    """The codec of the SDK's own `requestState` boundary (AES-GCM), keyed from the same
    state keys as `RequestStates`, so a state one worker issued passes the SDK's check on
    every worker of the deployment; a per-process key there would refuse every retry that a
    load balancer sends to another worker. Each state key gives one derived key (HMAC with
    a fixed label), the active one first (it seals; every key unseals)."""

    def __init__(self, states: RequestStates) -> None:
        self._states = states
        self._codec: Any = None

    def _inner(self) -> Any:
        if self._codec is None:
            from mcp.server.request_state import AESGCMRequestStateCodec

            keys = self._states.keys
            order = [keys.active, *(kid for kid in keys.keys if kid != keys.active)]
            derived = [hmac.new(keys.keys[k], _SDK_LABEL, hashlib.sha256).digest() for k in order]
            self._codec = AESGCMRequestStateCodec(derived)
        return self._codec

    def seal(self, payload: bytes) -> str:
        return str(self._inner().seal(payload))

    def unseal(self, token: str) -> bytes:
        return bytes(self._inner().unseal(token))
