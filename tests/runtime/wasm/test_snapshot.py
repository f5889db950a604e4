"""Guest snapshots: round trips in one process and across processes, refusal of foreign or
damaged bytes with `SnapshotError` (the guest stays usable), a 5 MB heap kept intact, and the
size of an idle snapshot."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from clawcell import ClawcellError
from clawcell.runtime import Guest, compiled_reactor
from clawcell.runtime._wasm._snapshot import SnapshotError

ROOT = Path(__file__).resolve().parents[3]
INSTALL = json.dumps({"maxPending": 16, "bindings": []})
HEADER = struct.Struct("<8sH32s32sIII")  # the documented layout of `_snapshot`
FORMAT_AT, WASM_AT, IMAGE_AT, SIZE_AT, META_LEN_AT = 8, 10, 42, 74, 82

STATE = (
    "globalThis.kept = { n: 42, text: 'héllo', list: [1, 2, 3] };\n"
    "globalThis.counter = (() => { let c = 0; return () => ++c; })();\n"
    "counter(); counter();\n"
    "globalThis.map = new Map([['a', 1], [{}, 2]]);\n"
    "globalThis.bytes = new TextEncoder().encode('snap');\n"
    "globalThis.pending = new Promise((resolve) => { globalThis.finish = resolve; });\n"
    "pending.then((v) => { globalThis.finished = v; });\n"
    "'ok'"
)
PROBE = "JSON.stringify([kept, counter(), map.size, Array.from(bytes), (finish('done'), 'called')])"
PROBED = '[{"n":42,"text":"héllo","list":[1,2,3]},3,2,[115,110,97,112],"called"]'


def guest() -> Guest:
    return Guest(compiled_reactor(), memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)


def evaluate(g: Guest, source: str) -> str:
    inst = g.instance
    return inst.take_string(inst.eval(f"String(({source}))"))


def script(g: Guest, source: str) -> str:
    """Run statements; the completion value as a string."""
    inst = g.instance
    return inst.take_string(inst.eval(source))


def with_state() -> tuple[Guest, bytes]:
    g = guest()
    assert script(g, STATE) == "ok"
    return g, g.snapshot()


# -- round trips ------------------------------------------------------------------------


def test_a_snapshot_restores_globals_closures_and_promises_in_another_guest() -> None:
    source, blob = with_state()
    target = guest()
    target.restore(blob)
    assert evaluate(target, PROBE) == PROBED
    target.instance.run_jobs()
    assert evaluate(target, "finished") == "done"
    # The source guest is untouched by the snapshot and still has its own state.
    assert evaluate(source, "counter()") == "3"


def test_a_guest_can_be_restored_twice_from_one_snapshot() -> None:
    _, blob = with_state()
    target = guest()
    target.restore(blob)
    assert evaluate(target, "counter()") == "3"
    target.restore(blob)
    assert evaluate(target, "counter()") == "3"


def test_snapshots_restore_across_processes_in_both_directions(tmp_path: Path) -> None:
    _, blob = with_state()
    (tmp_path / "parent.snap").write_bytes(blob)
    child = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from tests.runtime.wasm.test_snapshot import PROBE, STATE, evaluate, guest, script

        here = Path(sys.argv[1])
        g = guest()
        g.restore((here / "parent.snap").read_bytes())
        print(evaluate(g, PROBE))
        other = guest()
        script(other, STATE)
        (here / "child.snap").write_bytes(other.snapshot())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", child, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == PROBED
    here = guest()
    here.restore((tmp_path / "child.snap").read_bytes())
    assert evaluate(here, PROBE) == PROBED


def test_a_heap_of_5_mb_of_js_objects_is_restored_intact() -> None:
    source = guest()
    build = (
        "globalThis.data = Array.from({ length: 100000 }, (_, i) => ({ i, s: 'item-' + i, "
        "tags: [i % 7, i % 11], nested: { even: i % 2 === 0 } })), 'built'"
    )
    assert evaluate(source, build) == "built"
    before = evaluate(source, "JSON.stringify(data)")
    assert len(before) >= 5_000_000
    blob = source.snapshot()
    target = guest()
    target.restore(blob)
    after = evaluate(target, "JSON.stringify(data)")
    assert hashlib.sha256(after.encode()).digest() == hashlib.sha256(before.encode()).digest()
    assert evaluate(target, "data[99999].s + '/' + data.length") == "item-99999/100000"


DIRTY = (
    "function deep(n) { return n === 0 ? 0 : 1 + deep(n - 1); }\n"  # into the shadow stack
    "globalThis.text = 'y'.repeat(1500000);\n"  # into the image's free heap
    "String(deep(200) + text.length)"
)


def _dirtied_after_reset() -> Guest:
    g = guest()
    assert script(g, "globalThis.before = 'z'.repeat(300000); deep = 0; 'x'") == "x"
    g.reset()  # the image's zero runs are dropped, as before every cell
    assert script(g, DIRTY) == "1500200"
    return g


def test_a_restored_memory_is_the_snapshotted_memory_byte_for_byte() -> None:
    source = _dirtied_after_reset()
    target = guest()
    assert script(target, "globalThis.other = [1, 2, 3].map(String).join(); 'other'") == "other"
    target.restore(source.snapshot())
    assert target.instance.memory.copy() == source.instance.memory.copy()
    assert target.instance.memory.stack_pointer == source.instance.memory.stack_pointer
    assert evaluate(target, "text.length + '/' + typeof before") == "1500000/undefined"


def test_snapshots_are_the_same_when_untouched_pages_cannot_be_told_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawcell.runtime._wasm import _linear_memory as _memory  # pyright: ignore[reportPrivateUsage]

    source = _dirtied_after_reset()
    skipping = source.snapshot()

    def unknown(address: int, length: int) -> None:
        return None

    monkeypatch.setattr(_memory, "touched_pages", unknown)
    assert source.snapshot() == skipping


def test_an_idle_guest_snapshot_is_at_most_64_kib() -> None:
    assert len(guest().snapshot()) <= 64 * 1024


# -- refusals -----------------------------------------------------------------------------


def _patched(at: int, value: bytes) -> Callable[[bytes], bytes]:
    return lambda blob: blob[:at] + value + blob[at + len(value) :]


def _corrupt_body(blob: bytes) -> bytes:
    """The snapshot with one byte of its compressed pages flipped, near the end, at a byte
    that matters: a flip of padding or unused code bits inflates to the same pages (about
    one snapshot in thirty at a fixed offset), which is no damage at all."""
    (meta_len,) = struct.unpack_from("<I", blob, META_LEN_AT)
    start = HEADER.size + meta_len
    pages = zlib.decompress(blob[start:])
    for at in range(len(blob) - 200, start, -1):
        damaged = blob[:at] + bytes([blob[at] ^ 0xFF]) + blob[at + 1 :]
        try:
            if zlib.decompress(damaged[start:]) != pages:
                return damaged
        except zlib.error:
            return damaged
    raise AssertionError("no byte of the compressed pages changes them")


def _cut(keep: int) -> Callable[[bytes], bytes]:
    return lambda blob: blob[:keep]


def _meta(text: bytes) -> Callable[[bytes], bytes]:
    def damage(blob: bytes) -> bytes:
        (meta_len,) = struct.unpack_from("<I", blob, META_LEN_AT)
        start = HEADER.size
        head = bytearray(blob[:start])
        struct.pack_into("<I", head, META_LEN_AT, len(text))
        return bytes(head) + text + blob[start + meta_len :]

    return damage


REFUSALS = [
    pytest.param(_patched(0, b"NOTSNAPS"), "not a clawcell snapshot (bad magic)", id="magic"),
    pytest.param(
        _patched(FORMAT_AT, struct.pack("<H", 2)),
        "snapshot format 2 is not supported (this build reads 1)",
        id="format",
    ),
    pytest.param(
        _patched(WASM_AT, bytes(32)),
        "snapshot was taken with another QuickJS reactor build",
        id="wasm_digest",
    ),
    pytest.param(
        _patched(IMAGE_AT, bytes(32)),
        "snapshot was taken with another guest controller image",
        id="image_digest",
    ),
    pytest.param(
        _cut(40),
        "snapshot is truncated: it is shorter than its header",
        id="truncated_header",
    ),
    pytest.param(_cut(0), "snapshot is truncated: it is shorter than its header", id="empty"),
    pytest.param(_cut(-100), "snapshot is corrupt: ", id="truncated_body"),
    pytest.param(_corrupt_body, "snapshot is corrupt: ", id="corrupt_body"),
    pytest.param(_meta(b"{not json"), "snapshot is corrupt: ", id="corrupt_meta"),
    pytest.param(
        _meta(b"[1, 2]"), "snapshot is corrupt: its metadata is not an object", id="meta_not_object"
    ),
    pytest.param(
        _meta(b'{"handles": [1, 2], "rejections": []}'),
        "snapshot is corrupt: its host values are malformed",
        id="meta_handles",
    ),
    pytest.param(
        _patched(SIZE_AT, struct.pack("<I", 4096 * 3 + 1)),
        "snapshot is corrupt: ",
        id="size_not_page_aligned",
    ),
    pytest.param(
        _patched(SIZE_AT, struct.pack("<I", 4096)),
        "snapshot is corrupt: ",
        id="size_below_its_pages",
    ),
    pytest.param(
        _patched(SIZE_AT, struct.pack("<I", 0xFFFF_0000)),
        "snapshot needs 4294901760 bytes of guest memory",
        id="size_beyond_the_memory_limit",
    ),
]


@pytest.mark.parametrize(("damage", "message"), REFUSALS)
def test_foreign_or_damaged_snapshots_are_refused_and_the_guest_stays_usable(
    damage: Callable[[bytes], bytes], message: str
) -> None:
    _, blob = with_state()
    target = guest()
    assert evaluate(target, "globalThis.mine = 'still here', mine") == "still here"
    with pytest.raises(SnapshotError) as caught:
        target.restore(damage(blob))
    assert isinstance(caught.value, ClawcellError)
    assert caught.value.code == "invalid_snapshot"
    assert caught.value.message.startswith(message), caught.value.message
    assert evaluate(target, "mine + ' ' + (1 + 1)") == "still here 2"
    target.restore(blob)  # and it can still take a good snapshot afterwards
    assert evaluate(target, PROBE) == PROBED
