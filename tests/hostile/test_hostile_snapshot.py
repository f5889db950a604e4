"""Snapshot and store tampering: a parked run's snapshot bytes, or a session-store value,
changed behind clawcell's back. A damaged snapshot is refused with `SnapshotError` or ends
its run in a failed envelope (snapshot bytes are trusted input: they may run any guest code,
never more than the guest can do); a damaged store value rejects the `load` that reads it.
Either way the host stays bounded, and a clean cell afterwards in the same `CodeMode` sees
nothing of it.

The tampering follows the layout `runtime/_wasm/_snapshot.py` documents: a fixed header, the
metadata JSON, then a zlib stream of a page index and the XOR-diffed pages.
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest

from clawcell import CodeMode, Limits, MemoryStore, SnapshotError
from clawcell.store import StoredValue
from tests._sealing import save_sealed
from tests.conftest import echo_tool, run
from tests.hostile.test_hostile_cells import (
    _probe,  # pyright: ignore[reportPrivateUsage]
)

LIMITS = Limits(timeout_ms=2_000)
SESSION = "tampered"
PARK = (
    "globalThis.__leak = 1;\nconst x = await echo({ a: 1 });\ntext('before');\n"
    "await yield_control('y');\nreturn [x, typeof globalThis.__leak];"
)
_HEADER = struct.Struct("<8sH32s32sIII")
_PAGE = 4096


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """A snapshot taken apart along its documented layout."""

    magic: bytes
    fmt: int
    wasm: bytes
    digest: bytes
    size: int
    stack_pointer: int
    meta: bytes
    body: bytes

    @classmethod
    def parse(cls, blob: bytes) -> Snapshot:
        magic, fmt, wasm, digest, size, stack_pointer, meta_len = _HEADER.unpack_from(blob)
        meta = blob[_HEADER.size : _HEADER.size + meta_len]
        body = blob[_HEADER.size + meta_len :]
        return cls(
            magic=magic,
            fmt=fmt,
            wasm=wasm,
            digest=digest,
            size=size,
            stack_pointer=stack_pointer,
            meta=meta,
            body=body,
        )

    def pack(self, *, meta_len: int | None = None) -> bytes:
        length = len(self.meta) if meta_len is None else meta_len
        fields = (self.magic, self.fmt, self.wasm, self.digest, self.size, self.stack_pointer)
        return _HEADER.pack(*fields, length) + self.meta + self.body

    def pages(self) -> tuple[list[int], bytes]:
        packed = zlib.decompress(self.body)
        (count,) = struct.unpack_from("<I", packed)
        return list(struct.unpack_from(f"<{count}I", packed, 4)), packed[4 + 4 * count :]

    def with_pages(self, index: list[int], data: bytes) -> Snapshot:
        packed = struct.pack(f"<I{len(index)}I", len(index), *index) + data
        return replace(self, body=zlib.compress(packed))

    def with_meta(self, change: Callable[[dict[str, Any]], object]) -> Snapshot:
        meta: dict[str, Any] = json.loads(self.meta)
        change(meta)
        return replace(self, meta=json.dumps(meta).encode())


def _flip(data: bytes, seed: int, flips: int = 8) -> bytes:
    rng = random.Random(seed)
    out = bytearray(data)
    for _ in range(flips):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _flipped_pages(snap: Snapshot, seed: int) -> bytes:
    index, data = snap.pages()
    return snap.with_pages(index, _flip(data, seed)).pack()


def _bomb(snap: Snapshot) -> bytes:
    # About 64 KiB of bytes that inflate to 64 MiB, 25 times what the memory can need.
    return replace(snap, body=zlib.compress(bytes(64 * 2**20), 9)).pack()


Tamper = Callable[[Snapshot, bytes], bytes]
CORRUPT = "snapshot is corrupt: "

# name -> (tamper, the `SnapshotError` message, or None when the run ends in an envelope)
REFUSED: dict[str, tuple[Tamper, str]] = {
    "empty": (lambda s, b: b"", "snapshot is truncated: it is shorter than its header"),
    "header_minus_one_byte": (
        lambda s, b: b[: _HEADER.size - 1],
        "snapshot is truncated: it is shorter than its header",
    ),
    "bad_magic": (
        lambda s, b: replace(s, magic=b"CLAWSNAQ").pack(),
        "not a clawcell snapshot (bad magic)",
    ),
    "future_format": (
        lambda s, b: replace(s, fmt=2).pack(),
        "snapshot format 2 is not supported (this build reads 1)",
    ),
    "other_reactor_build": (
        lambda s, b: replace(s, wasm=bytes(32)).pack(),
        "snapshot was taken with another QuickJS reactor build",
    ),
    "other_image": (
        lambda s, b: replace(s, digest=bytes(32)).pack(),
        "snapshot was taken with another guest controller image",
    ),
    "memory_of_4_gib": (
        lambda s, b: replace(s, size=2**32 - _PAGE).pack(),
        f"snapshot needs {2**32 - _PAGE} bytes of guest memory; this guest allows at most ",
    ),
    "memory_size_halved": (
        lambda s, b: replace(s, size=s.size // 2).pack(),
        CORRUPT + "a page lies outside the memory size",
    ),
    "memory_size_unaligned": (
        lambda s, b: replace(s, size=s.size - 1).pack(),
        CORRUPT + "page data does not match its index",
    ),
    "meta_length_past_the_end": (
        lambda s, b: s.pack(meta_len=len(b)),
        CORRUPT,
    ),
    "meta_length_zero": (lambda s, b: s.pack(meta_len=0), CORRUPT),
    "meta_not_json": (lambda s, b: replace(s, meta=b"{nope").pack(), CORRUPT),
    "meta_an_array": (
        lambda s, b: replace(s, meta=b"[1,2]").pack(),
        CORRUPT + "its metadata is not an object",
    ),
    "meta_handles_strings": (
        lambda s, b: s.with_meta(lambda m: m.update(handles=["a"] * len(m["handles"]))).pack(),
        CORRUPT + "its host values are malformed",
    ),
    "meta_keys_null": (
        lambda s, b: s.with_meta(lambda m: m.update(handles=None, rejections=None)).pack(),
        CORRUPT + "a list was expected in its metadata",
    ),
    "rejections_forged": (
        lambda s, b: s.with_meta(lambda m: m.update(rejections=[[2**40, 2**40]])).pack(),
        CORRUPT + "its host values are malformed",
    ),
    "body_not_zlib": (lambda s, b: replace(s, body=b"\x00" * 64).pack(), CORRUPT),
    "body_truncated": (lambda s, b: b[: len(b) - 16], CORRUPT),
    "body_trailing_garbage_inside": (
        lambda s, b: replace(s, body=zlib.compress(zlib.decompress(s.body) + b"x")).pack(),
        CORRUPT + "page data does not match its index",
    ),
    "page_count_past_the_data": (
        lambda s, b: replace(
            s, body=zlib.compress(struct.pack("<I", 10**6) + zlib.decompress(s.body)[4:])
        ).pack(),
        CORRUPT,
    ),
    "page_past_the_memory": (
        lambda s, b: s.with_pages([s.size // _PAGE], bytes(_PAGE)).pack(),
        CORRUPT + "a page lies outside the memory size",
    ),
    "zlib_bomb": (lambda s, b: _bomb(s), CORRUPT + "its pages inflate past the "),
}

ENDED: dict[str, tuple[Tamper, dict[str, Any]]] = {
    "stack_pointer_zero": (
        lambda s, b: replace(s, stack_pointer=0).pack(),
        {"status": "failed", "code": "internal_error", "error": "InternalError: out of memory"},
    ),
    "stack_pointer_past_the_memory": (
        lambda s, b: replace(s, stack_pointer=2**32 - 16).pack(),
        {"status": "failed", "code": "internal_error", "error": "InternalError: out of memory"},
    ),
    "forged_entry_points": (
        lambda s, b: s.with_meta(lambda m: m.update(handles=[2**40] * len(m["handles"]))).pack(),
        {"status": "failed", "code": "internal_error", "error": "TypeError: not a function"},
    ),
    "pages_zeroed": (
        lambda s, b: s.with_pages(s.pages()[0], bytes(len(s.pages()[1]))).pack(),
        {"status": "failed", "code": "internal_error", "error": "InternalError: out of memory"},
    ),
    "pages_all_ones": (
        lambda s, b: s.with_pages(s.pages()[0], b"\xff" * len(s.pages()[1])).pack(),
        {"status": "failed", "code": "internal_error", "error": "InternalError: out of memory"},
    ),
    "pages_twice": (
        lambda s, b: s.with_pages(s.pages()[0] * 2, s.pages()[1] * 2).pack(),
        {"status": "completed", "value": [{"a": 1}, "number"]},
    ),
}
FLIP_SEEDS = range(24)


async def _park_and_tamper(
    mode: CodeMode, store: MemoryStore, tamper: Callable[[bytes], bytes]
) -> str:
    parked = await mode.exec(PARK)
    assert parked["status"] == "waiting", parked
    saved = await store.load_run(SESSION, parked["runId"])
    assert saved is not None
    # Resealed as a key holder would: these cases test the snapshot loader behind the seal.
    await save_sealed(store, SESSION, parked["runId"], tamper(saved.blob), saved.meta)
    return parked["runId"]


def _resume_tampered(tamper: Callable[[bytes], bytes]) -> tuple[dict[str, Any] | str, bool]:
    """The run's envelope (or the `SnapshotError` message) and whether probes agree."""

    async def main() -> tuple[dict[str, Any] | str, bool]:
        store = MemoryStore()
        async with CodeMode([echo_tool()], store=store, session_id=SESSION, limits=LIMITS) as mode:
            before = await _probe(mode)
            run_id = await _park_and_tamper(mode, store, tamper)
            outcome: dict[str, Any] | str
            try:
                outcome = await mode.wait(run_id)
            except SnapshotError as exc:
                outcome = exc.message
            return outcome, before == await _probe(mode)

    return run(main())


def _summary(envelope: dict[str, Any]) -> dict[str, Any]:
    keys = ("status", "code", "error", "value")
    return {k: envelope[k] for k in keys if k in envelope}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_damaged_snapshot_is_refused_and_leaves_no_trace(name: str) -> None:
    tamper, message = REFUSED[name]
    outcome, clean = _resume_tampered(lambda blob: tamper(Snapshot.parse(blob), blob))
    assert isinstance(outcome, str), outcome
    assert outcome.startswith(message)
    assert clean is True


@pytest.mark.parametrize("name", list(ENDED))
def test_a_forged_snapshot_ends_its_run_in_an_envelope_and_leaves_no_trace(name: str) -> None:
    tamper, expected = ENDED[name]
    outcome, clean = _resume_tampered(lambda blob: tamper(Snapshot.parse(blob), blob))
    assert isinstance(outcome, dict), outcome
    assert _summary(outcome) == expected
    assert clean is True


@pytest.mark.parametrize("seed", FLIP_SEEDS)
def test_random_bit_flips_in_a_snapshot_end_cleanly(seed: int) -> None:
    outcome, clean = _resume_tampered(lambda blob: _flipped_pages(Snapshot.parse(blob), seed))
    if isinstance(outcome, dict):
        assert outcome["status"] in {"completed", "failed"}, outcome
    else:
        assert outcome.startswith("snapshot is corrupt: ") or "damaged" in outcome, outcome
    assert clean is True


# name -> the stored JSON text put behind clawcell's back
DAMAGED_VALUES: dict[str, str] = {
    "not_json": "not json {",
    "empty": "",
    "nan": "NaN",
    "two_values": '{"a":1} {"b":2}',
    "forged_reply_frame": '0]],["bridge:callValue:1",true,{"forged":1}],["bridge:x:0",true,[0',
    "unclosed_array": "[1, 2",
    "deeper_than_the_bridge_allows": "[" * 100_000 + "]" * 100_000,
}
DAMAGED = (
    "stored value of key 'k' is not one JSON value (the session store is damaged); "
    "store the key again to replace it."
)
LOAD = (
    "const pending = echo({ n: 1 });\n"
    "let seen;\ntry { seen = ['loaded', await load('k')]; } catch (e) { seen = [e.message]; }\n"
    "return [seen, await pending, ({}).polluted];"
)


def _load_stored(text: str) -> tuple[dict[str, Any], bool]:
    async def main() -> tuple[dict[str, Any], bool]:
        store = MemoryStore()
        async with CodeMode([echo_tool()], store=store, session_id=SESSION, limits=LIMITS) as mode:
            before = await _probe(mode)
            await store.put(SESSION, "k", StoredValue(json=text))
            envelope = await mode.exec(LOAD)
            await store.delete(SESSION, "k")
            return envelope, before == await _probe(mode)

    return run(main())


@pytest.mark.parametrize("name", list(DAMAGED_VALUES))
def test_a_damaged_store_value_rejects_its_load_and_forges_nothing(name: str) -> None:
    envelope, clean = _load_stored(DAMAGED_VALUES[name])
    assert _summary(envelope) == {"status": "completed", "value": [[DAMAGED], {"n": 1}, None]}
    assert clean is True


# Odd but well-formed stored values load as what they say, and pollute nothing.
ODD_VALUES: dict[str, tuple[str, Any]] = {
    "proto_key": ('{"__proto__":{"polluted":1},"a":1}', {"__proto__": {"polluted": 1}, "a": 1}),
    "lone_surrogate": ('"\\ud800"', "\ud800"),
    "nul_character": ('"a\\u0000b"', "a\x00b"),
    "huge_integer": ("1" * 400, None),
    "whitespace_around": (" \n[1]\t ", [1]),
    "null": ("null", None),
}


@pytest.mark.parametrize("name", list(ODD_VALUES))
def test_an_odd_but_well_formed_store_value_loads_as_itself(name: str) -> None:
    text, value = ODD_VALUES[name]
    envelope, clean = _load_stored(text)
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == [["loaded", value], {"n": 1}, None]
    assert clean is True
