"""The `requestState` of an approval round: what this server asked, sealed so it cannot be
forged.

On the 2026-07-28 protocol a server that needs the user's input answers a tool call with an
`input_required` result; the client asks the user and retries the call with the answers
(`inputResponses`) and the `requestState` it was given. The state names the run and the
approval ids the server asked about, and carries an HMAC-SHA256 under a secret of this
process over both and the client's identity (its `clientInfo` and MCP session id, as far as
the transport tells them). A retried call counts only when its state was issued by this
process, to this client, and then only for the ids it names; a state from another run,
another client or another server process, or one a client made up, is refused and decides
nothing. A server restart invalidates the states in flight (the client then calls `wait`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from typing import Any, Final, cast

__all__ = ["STATE_PREFIX", "RequestStates", "client_identity"]

STATE_PREFIX: Final = "clawcell-approvals:"


class RequestStates:
    """Issues and opens sealed request states with a secret of this server object."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def issue(self, run_id: str, approval_ids: Sequence[str], client: str) -> str:
        """The state of a round asking `client` about `approval_ids` of `run_id`."""
        body = json.dumps([run_id, list(approval_ids)], separators=(",", ":"))
        encoded = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
        return f"{STATE_PREFIX}{encoded}.{self._mac(encoded, client)}"

    def open(self, state: str, client: str) -> tuple[str, list[str]] | None:
        """`(run id, approval ids)` of a state this object issued to `client`, else `None`."""
        encoded, _, mac = state.removeprefix(STATE_PREFIX).rpartition(".")
        if not encoded or not hmac.compare_digest(mac, self._mac(encoded, client)):
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

    def _mac(self, encoded: str, client: str) -> str:
        message = f"{len(client)}:{client}|{encoded}".encode("utf-8", "surrogatepass")
        digest = hmac.new(self._secret, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


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
