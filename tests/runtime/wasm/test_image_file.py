"""A first guest's pristine image stored beside the compiled engine and loaded by the next
process: the same image byte for byte, no controller evaluation, one file per configuration,
damaged files ignored and rewritten, snapshots interchangeable with built guests, none
written when the cache is off."""

from __future__ import annotations

import dataclasses
import json
import mmap
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawcell.runtime import (
    Guest,
    _controller,  # pyright: ignore[reportPrivateUsage]
    _guest,  # pyright: ignore[reportPrivateUsage]
    compiled_reactor,
)
from clawcell.runtime._wasm._engine import engine_cache_file
from clawcell.runtime._wasm._image_file import (
    StoredImage,
    flush_writes,
    image_path,
    read_image,
    write_image,
)

INSTALL = json.dumps({"maxPending": 16, "bindings": []})
OTHER = json.dumps({"maxPending": 17, "bindings": []})
LIMIT = 64 * 1024 * 1024


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    compiled_reactor()  # the engine is already loaded: nothing compiles into tmp_path
    monkeypatch.delenv("CLAWCELL_NO_MODULE_CACHE", raising=False)
    monkeypatch.setenv("CLAWCELL_CACHE_DIR", str(tmp_path))
    return tmp_path


def guest(install: str = INSTALL) -> Guest:
    built = Guest(compiled_reactor(), memory_limit_bytes=LIMIT, install_config=install)
    flush_writes()  # a first guest stores its image on a thread of its own
    return built


def script(g: Guest, source: str) -> str:
    inst = g.instance
    return inst.take_string(inst.eval(source))


def read_image_of(g: Guest) -> StoredImage:
    return g.instance.memory.stored_image({})


def _no_controller(_inst: object) -> tuple[int, int, int, int, int]:
    raise AssertionError("the controller was evaluated: the stored image was not used")


def test_the_next_guest_starts_from_the_stored_image_without_evaluating_the_controller(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = guest()
    [stored] = cache.glob("img-*.bin")
    monkeypatch.setattr(_guest, "load_controller", _no_controller)
    loaded = guest()
    assert bytes(loaded.instance.memory.image) == bytes(built.instance.memory.image)
    assert loaded.instance.memory.image_sp == built.instance.memory.image_sp
    assert list(cache.glob("img-*.bin")) == [stored]  # read, not written again
    source = "globalThis.x = [1, 2, 3].map((n) => n * 7); JSON.stringify(x)"
    assert script(loaded, source) == script(built, source) == "[7,14,21]"
    loaded.reset()
    assert script(loaded, "typeof globalThis.x") == "undefined"  # its reset image is the stored one


def test_each_configuration_has_its_own_image(cache: Path) -> None:
    guest(INSTALL)
    guest(OTHER)
    assert len(list(cache.glob("img-*.bin"))) == 2


def test_a_changed_controller_is_another_image(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The name follows the controller's bytes (`controller_digest`): an edited controller is
    # evaluated anew, never served the image another text made.
    guest()
    changed = tmp_path / "edited" / "controller.js"
    changed.parent.mkdir()
    original = Path(_controller._CONTROLLER_PATH)  # pyright: ignore[reportPrivateUsage]
    changed.write_bytes(original.read_bytes() + b"\n// edited\n")
    monkeypatch.setattr(_controller, "_CONTROLLER_PATH", str(changed))
    evaluated: list[bool] = []
    real = _guest.load_controller  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(_guest, "load_controller", lambda i: (evaluated.append(True), real(i))[1])  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    guest()
    assert evaluated == [True]
    assert len(list(cache.glob("img-*.bin"))) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_a_damaged_image_is_ignored_and_written_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    built = guest()
    [stored] = cache.glob("img-*.bin")
    whole = stored.read_bytes()
    assert read_image(str(stored), max_size=2 * LIMIT) is not None
    if damage == "truncate":
        stored.write_bytes(whole[: len(whole) // 2])
    elif damage == "flip":
        middle = len(whole) // 2
        stored.write_bytes(whole[:middle] + bytes([whole[middle] ^ 1]) + whole[middle + 1 :])
    elif damage == "garbage":
        stored.write_bytes(b"not an image")
    else:
        stored.write_bytes(b"")  # nothing to map
    evaluated: list[bool] = []
    real = _guest.load_controller  # pyright: ignore[reportPrivateUsage]

    def counting(inst: object) -> tuple[int, int, int, int, int]:
        evaluated.append(True)
        return real(inst)  # type: ignore[arg-type]

    monkeypatch.setattr(_guest, "load_controller", counting)
    rebuilt = guest()
    assert evaluated == [True]  # built from scratch
    again = read_image(str(stored), max_size=2 * LIMIT)  # and stored again, whole
    assert again is not None
    mine = rebuilt.instance.memory.stored_image({})
    assert (again.runs, again.pages) == (mine.runs, mine.pages)
    # Two builds differ only in QuickJS's per-context clock and seed bytes.
    assert len(again.pages) == len(read_image_of(built).pages)


def test_an_image_whose_callback_slots_differ_is_not_used(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guest()
    [path] = map(str, cache.glob("img-*.bin"))
    stored = read_image(path, max_size=2 * LIMIT)
    assert stored is not None
    moved = {**stored.handles, "tracker": stored.handles["tracker"] + 1}
    write_image(path, dataclasses.replace(stored, handles=moved))
    evaluated: list[bool] = []
    real = _guest.load_controller  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(_guest, "load_controller", lambda i: (evaluated.append(True), real(i))[1])  # pyright: ignore[reportUnknownLambdaType, reportUnknownArgumentType]
    g = guest()
    assert evaluated == [True]
    assert script(g, "6 * 7") == "42"


def test_snapshots_move_between_stored_image_guests_and_built_ones(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guest()  # stores the image
    loaded = guest()
    assert script(loaded, "globalThis.kept = {n: 42}; 'ok'") == "ok"
    monkeypatch.setenv("CLAWCELL_NO_MODULE_CACHE", "1")
    built = guest()
    built.restore(loaded.snapshot())
    assert script(built, "JSON.stringify(kept)") == '{"n":42}'
    assert script(built, "kept.n = 43; 'ok'") == "ok"
    monkeypatch.delenv("CLAWCELL_NO_MODULE_CACHE")
    again = guest()
    again.restore(built.snapshot())
    assert script(again, "JSON.stringify(kept)") == '{"n":43}'


def test_no_image_is_written_when_the_cache_is_off(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAWCELL_NO_MODULE_CACHE", "1")
    guest()
    assert list(cache.iterdir()) == []


def test_a_stored_image_s_pages_are_read_in_place_from_its_file(cache: Path) -> None:
    # Mapped, not read into a copy: the pages a guest's image is loaded from are a view of
    # the file's mapping, and a guest loaded from them runs.
    guest()
    [path] = cache.glob("img-*.bin")
    stored = read_image(str(path), max_size=2 * LIMIT)
    assert stored is not None
    assert isinstance(stored.pages, memoryview) and isinstance(stored.pages.obj, mmap.mmap)
    assert bytes(stored.pages) == path.read_bytes()[-len(stored.pages) :]
    assert script(guest(), "6 * 7") == "42"


def test_stored_runs_outside_the_memory_or_out_of_order_are_refused(tmp_path: Path) -> None:
    page = bytes(4096)
    path = str(tmp_path / "img-test.bin")
    for runs, size in (([(0, 1)], 4096), ([(1, 1)], 4096), ([(2, 1), (0, 1)], 4 * 4096)):
        pages = page * sum(n for _, n in runs)
        write_image(
            path,
            StoredImage(size=size, stack_pointer=0, runs=runs, pages=pages, handles={}),
        )
        valid = runs == [(0, 1)]
        assert (read_image(path, max_size=1 << 30) is not None) is valid, runs
    assert read_image(path, max_size=1) is None  # larger than the caller allows
    assert read_image(str(tmp_path / "missing.bin"), max_size=1 << 30) is None


def test_only_the_newest_images_are_kept(tmp_path: Path) -> None:
    for n in range(20):
        old = tmp_path / f"img-old{n:02d}.bin"
        old.write_bytes(b"x")
        os.utime(old, (n, n))
    image = StoredImage(size=4096, stack_pointer=0, runs=[], pages=b"", handles={})
    newest = image_path(str(tmp_path), "a configuration")
    write_image(newest, image)
    kept = {p.name for p in tmp_path.glob("img-*.bin")}
    assert kept == {Path(newest).name} | {f"img-old{n:02d}.bin" for n in range(5, 20)}


_CELL = (
    "import asyncio, clawcell\n"
    "async def main():\n"
    "    async with clawcell.CodeMode() as mode:\n"
    "        print((await mode.exec('return [6 * 7, Math.random()]'))['value'])\n"
    "asyncio.run(main())\n"
)


@pytest.mark.slow
def test_a_new_process_starts_from_the_image_a_previous_one_stored(tmp_path: Path) -> None:
    cache_file = engine_cache_file()
    assert cache_file is not None
    compiled = Path(cache_file)
    assert compiled.exists()
    (tmp_path / compiled.name).symlink_to(compiled)  # the engine is not compiled again
    env = {**os.environ, "CLAWCELL_CACHE_DIR": str(tmp_path)}
    env.pop("CLAWCELL_NO_MODULE_CACHE", None)

    def run() -> list[float]:
        done = subprocess.run(
            [sys.executable, "-c", _CELL], env=env, capture_output=True, text=True, check=True
        )
        return json.loads(done.stdout.replace("'", '"'))

    first = run()
    [stored] = tmp_path.glob("img-*.bin")
    written = stored.stat().st_mtime_ns
    second = run()
    assert stored.stat().st_mtime_ns == written  # read, not written again
    assert first[0] == second[0] == 42
    assert first[1] != second[1]  # each cell's Math.random is seeded anew


@pytest.mark.parametrize("handle", ["rt", "ctx", "scratch", "argv", "staging", "filename"])
def test_an_image_whose_buffers_lie_outside_its_memory_is_refused(cache: Path, handle: str) -> None:
    guest()
    [path] = map(str, cache.glob("img-*.bin"))
    stored = read_image(path, max_size=2 * LIMIT)
    assert stored is not None
    for outside in (stored.size, -1):
        moved = {**stored.handles, handle: outside}
        write_image(path, dataclasses.replace(stored, handles=moved))
        assert read_image(path, max_size=2 * LIMIT) is None
