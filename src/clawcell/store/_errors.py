"""Messages of the session store's guest-facing checks (spec `code-mode.md` §10.2).

The error classes live in `clawcell.errors` with the rest of the tree; they carry the guest
error codes of §4.5: `store_type` for a `TypeError` in the guest, `store_range` for a
`RangeError`.

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

from ..errors import StoreRangeError, StoreTypeError, StoreUnavailableError

__all__ = [
    "KEY_MESSAGE",
    "TOTAL_MESSAGE",
    "UNSTORABLE_MESSAGE",
    "VALUE_MESSAGE",
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
]

KEY_MESSAGE = "Code Mode store key must be a non-empty string of at most 256 characters."
VALUE_MESSAGE = "Code Mode store value exceeds 256 KiB of serialized JSON."
TOTAL_MESSAGE = "Code Mode store exceeds 1 MiB of serialized JSON; delete keys or store less data."
UNSTORABLE_MESSAGE = (
    "{where} cannot store or search text with a NUL character (U+0000) or a lone surrogate "
    "({exc}); remove such characters from ids, names, queries and text."
)
"""The `invalid_input` message for text a backend cannot hold (`where`, `exc` filled in)."""
