"""Locating, verifying and patching the QuickJS-NG WASI reactor binary.

Reactor builds from 0.16.0 on no longer export the QuickJS C API (upstream made
`JS_EXTERN` visible only for shared builds). The functions are still in the module and its
`name` section still names them, so at load time we append export entries for the functions
we need, export table 0 and global 0 (`__stack_pointer`), and drop the table's maximum so
host callbacks can be added. The binary is pinned by sha256: a different build is refused
before any byte of it is parsed. Before that, a distribution older than `MIN_VERSION` is
refused by its version, with the reason: QuickJS-NG before 0.16.0 has heap overflows on
32-bit hosts, and wasm32 is one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Final

from ..._lazy import record_class
from ...errors import RuntimeUnavailableError

__all__ = [
    "MIN_VERSION",
    "STACK_POINTER_EXPORT",
    "TABLE_EXPORT",
    "WASM_SHA256",
    "WASM_VERSION",
    "check_version",
    "load_verified_wasm",
    "patch_exports",
]

WASM_VERSION: Final = "0.17.0"
MIN_VERSION: Final = "0.16.0"
"""The oldest QuickJS-NG reactor clawcell runs: earlier ones overflow their heap on 32-bit
hosts (wasm32 among them)."""
_FLOOR: Final = (0, 16, 0)
WASM_SHA256: Final = "1a4e0bce82f2faed14f5e2620174e3daf33e161bad75ce955ceeaca1f7c82572"
TABLE_EXPORT: Final = "__indirect_function_table"
STACK_POINTER_EXPORT: Final = "__stack_pointer"

_SECTION_CUSTOM, _SECTION_TYPE, _SECTION_IMPORT, _SECTION_FUNCTION = 0, 1, 2, 3
_SECTION_TABLE, _SECTION_EXPORT, _SECTION_CODE = 4, 7, 10
_KIND_FUNC, _KIND_TABLE, _KIND_GLOBAL = 0, 1, 3


def load_verified_wasm() -> bytes:
    """Read the pinned reactor wasm from its distribution and check its sha256."""
    path = _locate()
    with open(path, "rb") as file:
        data = file.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WASM_SHA256:
        raise RuntimeUnavailableError(
            f"{path} has sha256 {digest}, expected {WASM_SHA256} "
            f"(qjs-wasi-reactor.wasm=={WASM_VERSION}); reinstall clawcell's dependencies."
        )
    return data


def _locate() -> str:
    import importlib.metadata  # deferred: only needed when the compiled module is not cached

    try:
        dist = importlib.metadata.distribution("qjs-wasi-reactor.wasm")
    except importlib.metadata.PackageNotFoundError as exc:
        raise RuntimeUnavailableError(
            "the QuickJS engine package is missing: "
            f"pip install 'qjs-wasi-reactor.wasm=={WASM_VERSION}'"
        ) from exc
    check_version(dist.version)
    for file in dist.files or ():
        if file.name == "qjs-wasi-reactor.wasm":
            return str(dist.locate_file(file))
    raise RuntimeUnavailableError("qjs-wasi-reactor.wasm is not in its distribution's files")


def check_version(version: str) -> None:
    """Refuse a reactor distribution older than `MIN_VERSION` (or whose version is unreadable).

    Raises:
        RuntimeUnavailableError: It is older, or its version is not `X.Y.Z`.
    """
    found = _release(version)
    if found is None or found < _FLOOR:
        raise RuntimeUnavailableError(
            f"qjs-wasi-reactor.wasm {version!r} is older than {MIN_VERSION} (or not a release "
            "version): QuickJS-NG before 0.16.0 has heap overflows on 32-bit hosts, and wasm32 "
            f"is one. Install the pinned build: pip install 'qjs-wasi-reactor.wasm=={WASM_VERSION}'"
        )


def _release(version: str) -> tuple[int, ...] | None:
    """`(X, Y, Z)` of an `X.Y.Z` version (local or post suffixes ignored), else `None`."""
    parts = version.split("+", 1)[0].split(".")
    if len(parts) < 3 or not all(part.isdigit() for part in parts[:2]):
        return None
    patch = ""
    for char in parts[2]:
        if not char.isdigit():
            break
        patch += char
    if not patch or (patch != parts[2] and not parts[2][len(patch) :].startswith("post")):
        return None  # a pre-release (0.16.0rc1) is older than its release
    return (int(parts[0]), int(parts[1]), int(patch))


@record_class
class _Reader:
    """Bytes read from a position."""

    data: bytes
    pos: int = 0

    def byte(self) -> int:
        value = self.data[self.pos]
        self.pos += 1
        return value

    def uleb(self) -> int:
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def vec_bytes(self) -> bytes:
        n = self.uleb()
        value = self.data[self.pos : self.pos + n]
        self.pos += n
        return value


def _uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _name(text: str) -> bytes:
    raw = text.encode()
    return _uleb(len(raw)) + raw


def _sections(wasm: bytes) -> list[tuple[int, bytes]]:
    if wasm[:8] != b"\0asm\x01\0\0\0":
        raise RuntimeUnavailableError("not a WebAssembly 1.0 binary module")
    reader = _Reader(wasm, 8)
    sections: list[tuple[int, bytes]] = []
    while reader.pos < len(wasm):
        section_id = reader.byte()
        sections.append((section_id, reader.vec_bytes()))
    return sections


def _function_names(payload: bytes) -> dict[str, int]:
    reader = _Reader(payload)
    if reader.vec_bytes() != b"name":
        return {}
    names: dict[str, int] = {}
    while reader.pos < len(payload):
        sub_id = reader.byte()
        sub = _Reader(reader.vec_bytes())
        if sub_id != 1:
            continue
        for _ in range(sub.uleb()):
            index = sub.uleb()
            names.setdefault(sub.vec_bytes().decode("utf-8", "replace"), index)
    return names


def _skip_limits(reader: _Reader) -> None:
    flags = reader.byte()
    reader.uleb()
    if flags & 1:
        reader.uleb()


def _imported_functions(payload: bytes) -> int:
    reader = _Reader(payload)
    functions = 0
    for _ in range(reader.uleb()):
        reader.vec_bytes()
        reader.vec_bytes()
        kind = reader.byte()
        if kind == _KIND_FUNC:
            reader.uleb()
            functions += 1
        elif kind == _KIND_TABLE:
            reader.byte()
            _skip_limits(reader)
        elif kind == 2:  # memory
            _skip_limits(reader)
        elif kind == _KIND_GLOBAL:
            reader.byte()
            reader.byte()
        else:  # tag
            reader.byte()
            reader.uleb()
    return functions


def _appended(payload: bytes, item: bytes) -> tuple[bytes, int]:
    """A vector section with `item` appended, and the item's index."""
    reader = _Reader(payload)
    count = reader.uleb()
    return _uleb(count + 1) + payload[reader.pos :] + item, count


def _with_turn(
    sections: dict[int, bytes], names: dict[str, int], extra: list[tuple[str, int, int]]
) -> dict[int, bytes]:
    """Type, function and code sections with `clawcell_turn` and `clawcell_start` added
    (their exports into `extra`)."""
    # (here: a process that finds the compiled engine in its cache patches nothing, and
    # never loads `_turn`)
    from ._turn import (
        START_EXPORT,
        START_TYPE,
        TURN_EXPORT,
        TURN_NEEDS,
        TURN_TYPE,
        start_body,
        turn_body,
    )

    missing = [name for name in TURN_NEEDS if name not in names]
    if missing:
        raise RuntimeUnavailableError(f"the QuickJS reactor lacks {missing!r}")
    types, functions, code = (
        sections[_SECTION_TYPE],
        sections[_SECTION_FUNCTION],
        sections[_SECTION_CODE],
    )
    imported = _imported_functions(sections.get(_SECTION_IMPORT, b"\0"))
    added = (
        (TURN_EXPORT, TURN_TYPE, turn_body(names)),
        (START_EXPORT, START_TYPE, start_body(names)),
    )
    for export, signature, body in added:
        types, type_index = _appended(types, signature)
        functions, defined = _appended(functions, _uleb(type_index))
        code, _ = _appended(code, body)
        extra.append((export, _KIND_FUNC, imported + defined))
    return {_SECTION_TYPE: types, _SECTION_FUNCTION: functions, _SECTION_CODE: code}


def _unbounded_tables(payload: bytes) -> bytes:
    reader = _Reader(payload)
    count = reader.uleb()
    out = bytearray(_uleb(count))
    for _ in range(count):
        reftype = reader.byte()
        flags = reader.byte()
        minimum = reader.uleb()
        if flags & 1:
            reader.uleb()
        out += bytes([reftype, 0]) + _uleb(minimum)
    return bytes(out)


def _extended_exports(payload: bytes, extra: list[tuple[str, int, int]]) -> bytes:
    reader = _Reader(payload)
    count = reader.uleb()
    existing = set[str]()
    entries = bytearray()
    for _ in range(count):
        name = reader.vec_bytes()
        kind = reader.byte()
        index = reader.uleb()
        existing.add(name.decode())
        entries += _uleb(len(name)) + name + bytes([kind]) + _uleb(index)
    added = [(n, k, i) for n, k, i in extra if n not in existing]
    for name, kind, index in added:
        entries += _name(name) + bytes([kind]) + _uleb(index)
    return _uleb(count + len(added)) + bytes(entries)


def patch_exports(wasm: bytes, functions: Iterable[str]) -> bytes:
    """Return `wasm` with the named functions, `clawcell_turn`, `clawcell_start`, table 0 and
    global 0 exported.

    Raises:
        RuntimeUnavailableError: a function is not named in the module's `name` section.
    """
    sections = _sections(wasm)
    names: dict[str, int] = {}
    for section_id, payload in sections:
        if section_id == _SECTION_CUSTOM:
            names.update(_function_names(payload))
    wanted = list(functions)
    missing = [name for name in wanted if name not in names]
    if missing:
        raise RuntimeUnavailableError(
            f"the QuickJS reactor lacks C API functions {missing!r}; "
            f"pin qjs-wasi-reactor.wasm=={WASM_VERSION}"
        )
    extra = [(name, _KIND_FUNC, names[name]) for name in wanted]
    extra += [(TABLE_EXPORT, _KIND_TABLE, 0), (STACK_POINTER_EXPORT, _KIND_GLOBAL, 0)]
    replaced = _with_turn(dict(sections), names, extra)
    out = bytearray(wasm[:8])
    for section_id, original in sections:
        payload = replaced.get(section_id, original)
        if section_id == _SECTION_TABLE:
            payload = _unbounded_tables(original)
        elif section_id == _SECTION_EXPORT:
            payload = _extended_exports(original, extra)
        out += bytes([section_id]) + _uleb(len(payload)) + payload
    return bytes(out)
