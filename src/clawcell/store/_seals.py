"""State keys: the MACs that let a worker tell records it (or a peer) wrote from forged ones.

A durable store's database holds what decides what runs next: parked runs (a whole guest
memory image and its host record), approval decisions and saved results. Anyone who can
write that database could otherwise hand a worker a memory image, an "approve" or a result of
their choosing. Every such record is therefore sealed with HMAC-SHA256 under a key the
database does not hold, and checked before anything in it is decompressed, parsed or loaded.

Keys come in a keyring (`StateKeys`): `{key id: secret}` with one *active* id that seals;
every id verifies, so keys rotate by adding a new active key and dropping the old one once
the records it sealed have expired. Where the keyring comes from (`state_keys_for`):

1. `CLAWCELL_STATE_KEY`: `kid:secret[,kid:secret…]`, secrets in base64 (≥ 32 bytes),
   the first entry active;
2. `CLAWCELL_STATE_KEY_FILE`: a file holding the same text;
3. otherwise, unless `CLAWCELL_ENV=production` (then `ConfigurationError`), a development
   key file created once with mode 0600: beside a `SQLiteStore`'s database (`<db>.key`),
   else `$XDG_STATE_HOME/clawcell/state.key` (`~/.local/state/clawcell/state.key`).

Stores that live in the process only (`MemoryStore`, whose `in_process` is true) get a
random key per process: there is no database writer to defend against.

Threat model: a writer of the database who cannot read the key. They cannot forge a record,
move one to another run, session or result id, or change any byte of it; they can still
delete records or put back an *earlier genuine* record of the same run (a rollback), and
read everything (records are authenticated, not encrypted).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Final, TypedDict, cast

from .._lazy import value_class
from ..errors import ConfigurationError

__all__ = [
    "KEY_ENV",
    "KEY_FILE_ENV",
    "MODE_ENV",
    "Part",
    "Seal",
    "StateKeys",
    "canonical_json",
    "configured_state_keys",
    "state_keys_for",
]

KEY_ENV: Final = "CLAWCELL_STATE_KEY"
KEY_FILE_ENV: Final = "CLAWCELL_STATE_KEY_FILE"
MODE_ENV: Final = "CLAWCELL_ENV"
_MIN_KEY_BYTES: Final = 32
_DOMAIN: Final = b"clawcell-state-v1"


Part = str | bytes | Mapping[str, Any]
"""One sealed field: text, bytes, or a JSON object."""


class Seal(TypedDict):
    """A record's MAC as stored beside it: the key id and the base64 HMAC-SHA256."""

    kid: str
    mac: str


@value_class
class StateKeys:
    """A keyring of state keys: `keys` by id, `active` the one that seals.

    Raises:
        ConfigurationError: an empty keyring, an `active` id not in it, or a key shorter
            than 32 bytes.
    """

    keys: Mapping[str, bytes] = field(repr=False)
    active: str

    def __post_init__(self) -> None:
        if self.active not in self.keys:
            raise ConfigurationError(
                f"the active state key id {self.active!r} is not in the keyring "
                f"{sorted(self.keys)!r}; list it first in `{KEY_ENV}`."
            )
        for kid, key in self.keys.items():
            if not kid or any(c in kid for c in ":,= \t\r\n"):
                raise ConfigurationError(
                    f"state key id {kid!r} must be non-empty without `:`, `,`, `=` or spaces."
                )
            if len(key) < _MIN_KEY_BYTES:
                raise ConfigurationError(
                    f"state key {kid!r} has {len(key)} bytes; use at least {_MIN_KEY_BYTES} "
                    "random bytes (`python -c 'import secrets,base64;"
                    "print(base64.b64encode(secrets.token_bytes(32)).decode())'`)."
                )

    @classmethod
    def ephemeral(cls) -> StateKeys:
        """This process's random key (stores with no database to defend); the same keyring
        for every caller in the process, so runtimes sharing a `MemoryStore` agree."""
        return _process_keys()

    @classmethod
    def parse(cls, text: str, *, source: str = KEY_ENV) -> StateKeys:
        """A keyring from `kid:secret[,kid:secret…]` (base64 secrets; the first is active;
        a lone secret without `kid:` gets the id `default`).

        Raises:
            ConfigurationError: naming `source`, for empty text or a bad entry.
        """
        return _parsed(text, source)

    @classmethod
    def _parse(cls, text: str, source: str) -> StateKeys:
        keys: dict[str, bytes] = {}
        for entry in (part.strip() for part in text.split(",")):
            if not entry:
                continue
            kid, _, secret = entry.rpartition(":")
            kid = kid.strip() or "default"
            try:
                keys[kid] = base64.b64decode(secret.strip() + "==", altchars=b"-_", validate=False)
            except (binascii.Error, ValueError) as exc:
                raise ConfigurationError(
                    f"`{source}` entry for key {kid!r} is not base64: {exc}."
                ) from exc
        if not keys:
            raise ConfigurationError(f"`{source}` holds no key; expected `kid:base64secret`.")
        return cls(keys=keys, active=next(iter(keys)))

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> StateKeys:
        """A keyring from a key file (`parse` format).

        Raises:
            ConfigurationError: the file cannot be read, is readable by others, or is bad.
        """
        file = os.fspath(path)
        try:
            status = os.stat(file)
            version = _FileVersion.of(status)
            if (known := _read_files.get(file)) is not None and known[0] == version:
                return known[1]
            with open(file, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigurationError(f"cannot read the state key file {file!r}: {exc}.") from exc
        mode = status.st_mode
        if os.name == "posix" and mode & 0o077:
            raise ConfigurationError(
                f"the state key file {file!r} is readable by other users (mode "
                f"{oct(mode & 0o777)}); run `chmod 600 {file}`."
            )
        keys = cls.parse(text, source=file)
        if time.time_ns() - status.st_mtime_ns > _SETTLED_NS:
            _read_files[file] = (version, keys)
        return keys

    @classmethod
    def development(cls, path: str | os.PathLike[str]) -> StateKeys:
        """The development key at `path`, created (mode 0600) with a random key if absent."""
        file = os.fspath(path)
        if not os.path.exists(file):
            _create_key_file(file)
        return cls.read(file)

    def seal(self, kind: str, *parts: Part) -> Seal:
        """The seal of one record: `kind` names what it is (`run`, `decision`, `result`);
        a mapping part is sealed as its canonical JSON (sorted keys, compact)."""
        return {"kid": self.active, "mac": _mac(self.keys[self.active], kind, parts)}

    def verify(self, seal: object, kind: str, *parts: Part) -> bool:
        """Whether `seal` (as read back from the store, any shape) seals exactly `parts`."""
        if not isinstance(seal, Mapping):
            return False
        kid, mac = seal.get("kid"), seal.get("mac")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(kid, str) or not isinstance(mac, str) or kid not in self.keys:
            return False
        import hmac  # here: a process that seals nothing does not load it

        return hmac.compare_digest(mac, _mac(self.keys[kid], kind, parts))


@value_class
class _FileVersion:
    """What tells one content of a key file from another without reading it: a rotated file
    (written elsewhere and renamed over it) is a new inode, one edited in place has a new
    change time or size, a `chmod` a new mode."""

    device: int
    inode: int
    size: int
    modified_ns: int
    changed_ns: int
    mode: int

    @classmethod
    def of(cls, status: os.stat_result) -> _FileVersion:
        return cls(
            device=status.st_dev,
            inode=status.st_ino,
            size=status.st_size,
            modified_ns=status.st_mtime_ns,
            changed_ns=status.st_ctime_ns,
            mode=status.st_mode,
        )


_read_files: dict[str, tuple[_FileVersion, StateKeys]] = {}
"""Key files already read, by path: each `CodeMode` checks its keys when it is built, and a
`stat` is enough to know that the file still holds the keyring read before."""

_SETTLED_NS: Final = 1_000_000_000
"""How old a key file's modification time must be before its keyring is kept. File times
advance in clock ticks (4 ms on Linux), so a file edited in place twice within one tick,
at the same size, would look unchanged; one last modified a second before it was read
cannot be edited again within its tick."""


@functools.lru_cache(maxsize=16)
def _parsed(text: str, source: str) -> StateKeys:
    return StateKeys._parse(text, source)  # pyright: ignore[reportPrivateUsage]


@functools.cache
def _process_keys() -> StateKeys:
    # (`os.urandom` is what `secrets.token_bytes` returns; `secrets` imports `random`, which
    # seeds a generator nobody here uses: 1 ms of every start)
    return StateKeys(keys={"process": os.urandom(32)}, active="process")


def _mac(key: bytes, kind: str, parts: tuple[Part, ...]) -> str:
    """HMAC-SHA256 over the domain, the kind and every part, each length-prefixed (so no
    two different part lists hash alike)."""
    import hmac  # here: see `StateKeys.verify`

    digest = hmac.new(key, digestmod=hashlib.sha256)
    for part in (_DOMAIN, kind, *parts):
        data = _bytes(canonical_json(part) if isinstance(part, Mapping) else part)
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return base64.b64encode(digest.digest()).decode("ascii")


def _bytes(part: str | bytes) -> bytes:
    return part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part


def canonical_json(value: Any) -> str:
    """The one JSON text a value seals as (sorted keys, compact)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _create_key_file(file: str) -> None:
    """Write a fresh key to `file` atomically (a racing process keeps whichever came first)."""
    directory, name = os.path.split(file)
    os.makedirs(directory or os.curdir, exist_ok=True)
    text = "dev:" + base64.b64encode(os.urandom(32)).decode("ascii") + "\n"
    temporary = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        with contextlib.suppress(FileExistsError):  # another process created it first
            os.link(temporary, file)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _development_path(store: object) -> str:
    # (`os.path`, not `pathlib`: this module is on every cold start's path, and `pathlib`,
    # with `urllib.parse` and `ipaddress`, costs 3.5% of one; a store's `path` is a `Path`)
    database = getattr(store, "path", None)
    if isinstance(database, os.PathLike):
        return os.fsdecode(cast("os.PathLike[str]", database)) + ".key"
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(base, "clawcell", "state.key")


def state_keys_for(store: object, *, durable: bool) -> StateKeys:
    """The keyring that seals `store`'s records (see the module docstring for the order),
    creating the development key file when the configuration names no key.

    Raises:
        ConfigurationError: a bad key, or a durable store with no key under
            `CLAWCELL_ENV=production`.
    """
    keys = configured_state_keys(store, durable=durable)
    return keys if keys is not None else StateKeys.development(_development_path(store))


def configured_state_keys(store: object, *, durable: bool) -> StateKeys | None:
    """The keyring the configuration names for `store`, checked; `None` when it names none
    and the development key file does not exist yet (it is created on first use, so a
    process that never seals a record writes no key file).

    Raises:
        ConfigurationError: a bad key, or a durable store with no key under
            `CLAWCELL_ENV=production`.
    """
    if not durable or getattr(store, "in_process", False):
        return StateKeys.ephemeral()
    if text := os.environ.get(KEY_ENV, "").strip():
        return StateKeys.parse(text)
    if path := os.environ.get(KEY_FILE_ENV, "").strip():
        return StateKeys.read(path)
    if os.environ.get(MODE_ENV, "").strip().lower() == "production":
        raise ConfigurationError(
            f"a durable session store needs a state key in production (`{MODE_ENV}=production`):"
            f" set `{KEY_ENV}` to `kid:<base64 of 32 random bytes>` (or `{KEY_FILE_ENV}` to a "
            "file holding it), the same on every worker that shares the store."
        )
    development = _development_path(store)
    return StateKeys.read(development) if os.path.exists(development) else None
