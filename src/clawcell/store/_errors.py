"""Errors of the session store's guest-facing checks (spec `code-mode.md` §10.2).

They sit under `ClawcellError` like every clawcell error and carry the guest error codes of
§4.5: `store_type` for a `TypeError` in the guest, `store_range` for a `RangeError`.

```text
ClawcellError
├── StoreTypeError (TypeError)              code: "store_type"   bad key
├── StoreRangeError (ValueError)            code: "store_range"  value or total too large
└── StoreUnavailableError (RuntimeError)    code: "store_unavailable"
      a backend failed (an `sqlite3.Error`, translated once, here at the boundary)
```

The messages of the first two are the protocol's exact strings (`KEY_MESSAGE`,
`VALUE_MESSAGE`, `TOTAL_MESSAGE`).
"""

from __future__ import annotations

from ..errors import ClawcellError

__all__ = [
    "KEY_MESSAGE",
    "TOTAL_MESSAGE",
    "VALUE_MESSAGE",
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
]

KEY_MESSAGE = "Code Mode store key must be a non-empty string of at most 256 characters."
VALUE_MESSAGE = "Code Mode store value exceeds 256 KiB of serialized JSON."
TOTAL_MESSAGE = "Code Mode store exceeds 1 MiB of serialized JSON; delete keys or store less data."


class StoreTypeError(ClawcellError, TypeError):
    """A `store`/`load` key is not a non-empty string of at most 256 characters."""

    code = "store_type"


class StoreRangeError(ClawcellError, ValueError):
    """A stored value or the session's total is larger than the store allows.

    The guest sees a `RangeError`; Python's nearest built-in is `ValueError`.
    """

    code = "store_range"


class StoreUnavailableError(ClawcellError, RuntimeError):
    """A session-store backend could not read or write (database locked, disk full...)."""

    code = "store_unavailable"
