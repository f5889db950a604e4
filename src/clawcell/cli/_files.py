"""The files a person names on the command line: cells, and SQLite stores.

Each check raises `ConfigurationError` with one line that names the file, what is wrong and
what to do, so the command exits 2 before it creates or changes anything.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import sys
from pathlib import Path
from typing import Final

from ..errors import ConfigurationError

__all__ = ["check_store_file", "read_cell", "read_text"]

_SQLITE_HEADER: Final = b"SQLite format 3\x00"
_VERSION_TABLE: Final = "schema_version"  # every clawcell SQLite store since version 2
_V1_TABLES: Final = frozenset({"entries", "runs"})


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of the file `what` names (`the cell`, `the config file`).

    Raises:
        ConfigurationError: It cannot be read or is not UTF-8.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(
            f"cannot read {what} {str(path)!r}: {exc.strerror or exc}."
        ) from exc
    return _decode(data, f"{what} {str(path)!r}")


def read_cell(name: str) -> str:
    """The code of `clawcell run CELL`: the file's text, or stdin's for `-`.

    Raises:
        ConfigurationError: The file cannot be read, is not UTF-8 text or is empty.
    """
    if name == "-":
        binary = getattr(sys.stdin, "buffer", None)  # absent when stdin is a text stream
        code = sys.stdin.read() if binary is None else _decode(binary.read(), "the cell on stdin")
    else:
        code = read_text(Path(name), "the cell")
    if not code.strip():
        where = "the cell on stdin" if name == "-" else f"the cell {name!r}"
        raise ConfigurationError(f"{where} is empty; write the JavaScript to run in it.")
    return code


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(
            f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save it as UTF-8."
        ) from exc


_NOTHING_PARKED = "so no cell was parked there; pass the file `clawcell run --store` used."


def check_store_file(path: Path, *, create: bool, missing: str = _NOTHING_PARKED) -> None:
    """Refuse a `--store` file clawcell cannot use, before anything opens or creates it.

    Args:
        path: The SQLite file.
        create: Whether a missing file may be created (`run`); `wait`, `db upgrade` and
            `automations run` need an existing one (a typo must not start a new store).
        missing: What a missing file means for the command and what to pass instead.

    Raises:
        ConfigurationError: The path is a directory, its directory does not exist, it is
            missing (without `create`), or it is not a clawcell store.
    """
    where = f"--store {str(path)!r}"
    if path.is_dir():
        raise ConfigurationError(
            f"{where} is a directory; name a file in it, such as {str(path / 'state.db')!r}."
        )
    if not path.exists():
        _check_new(path, where, create=create, missing=missing)
        return
    if not path.is_file():
        raise ConfigurationError(f"{where} is not a regular file; name an SQLite file.")
    try:
        with path.open("rb") as file:
            head = file.read(len(_SQLITE_HEADER))
    except OSError as exc:
        raise ConfigurationError(f"cannot read {where}: {exc.strerror or exc}.") from exc
    if not head:
        if not create:
            _check_new(path, where, create=False, missing=missing)  # nothing is stored in it
        return  # an empty file: SQLite makes it a new database
    if head != _SQLITE_HEADER or not _is_clawcell_database(path):
        raise ConfigurationError(
            f"{where} is not a clawcell store; name a new file or one a clawcell command created."
        )
    if not os.access(path, os.W_OK):
        raise ConfigurationError(f"{where} is read-only; clawcell writes to its store.")


def _check_new(path: Path, where: str, *, create: bool, missing: str) -> None:
    if not create:
        raise ConfigurationError(f"{where} does not exist or is empty, {missing}")
    parent = path.parent
    if not parent.is_dir():
        raise ConfigurationError(
            f"{where}: the directory {str(parent)!r} does not exist; create it first "
            f"(mkdir -p {shlex.quote(str(parent))}) or name a file in an existing one."
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigurationError(
            f"{where}: cannot create a file in {str(parent)!r} (permission denied)."
        )


def _is_clawcell_database(path: Path) -> bool:
    """Whether the SQLite file is empty of tables or has clawcell's (read without writing)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        try:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    tables = {str(row[0]) for row in rows}
    # Version 1 files predate the version table; they carry the version as `user_version`.
    return not tables or _VERSION_TABLE in tables or (version >= 1 and tables >= _V1_TABLES)
