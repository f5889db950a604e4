"""PostgreSQL failures translated once, at the store boundary: text PostgreSQL cannot hold is
the caller's input (`InputError`, `invalid_input`), anything else the store's
(`StoreUnavailableError`).

PostgreSQL `text` and `jsonb` cannot hold U+0000 (psycopg refuses it in a parameter, the
server refuses the `\\u0000` escape in JSON), and no UTF-8 encoder takes a lone surrogate;
both come from guest or model text, not from a broken server, so they are reported as bad
input naming what to change, where SQLite and memory stores would have kept them.
"""

from __future__ import annotations

import importlib
from typing import Final

from ..._lazy import install_hint
from ...errors import ClawcellError, ConfigurationError, InputError
from .._errors import UNSTORABLE_MESSAGE, StoreUnavailableError

__all__ = ["MISSING_DRIVER", "require_driver", "translated"]

MISSING_DRIVER: Final = (
    "`PostgresStore` needs psycopg 3 with its pool, which is not installed; "
    f"install it with {install_hint('postgres')}."
)


def require_driver() -> None:
    """`ConfigurationError` saying how to install psycopg when it (or its pool) is missing."""
    try:
        importlib.import_module("psycopg")
        importlib.import_module("psycopg_pool")
    except ImportError as exc:
        raise ConfigurationError(MISSING_DRIVER) from exc


def translated(exc: Exception, where: str, hint: str = "") -> ClawcellError:
    """The clawcell error for a psycopg failure (or a text encoding one) at `where`."""
    import psycopg
    from psycopg import errors

    if isinstance(exc, UnicodeEncodeError | errors.UntranslatableCharacter) or (
        isinstance(exc, psycopg.DataError) and "NUL (0x00)" in str(exc)
    ):
        return InputError(UNSTORABLE_MESSAGE.format(where=where, exc=exc))
    return StoreUnavailableError(f"{where} failed: {type(exc).__name__}: {exc}.{hint}")
