"""`clawcell._lazy._code_cache`: run-time source texts kept compiled on disk between processes."""

from __future__ import annotations

import marshal
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from clawcell._lazy import _code_cache  # pyright: ignore[reportPrivateUsage]

TEXT = "def __create_fn__(x):\n def f(y):\n  return x + y\n return f\n"


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """The texts `compile` is asked for, with the cache in `tmp_path` and no text known yet
    (as in a new process)."""
    monkeypatch.setenv("CLAWCELL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CLAWCELL_NO_MODULE_CACHE", raising=False)
    seen: list[str] = []

    def counted(text: str, *args: object, **kwargs: object) -> types.CodeType:
        seen.append(text)
        return compile(text, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(_code_cache, "compile", counted, raising=False)
    _code_cache._known.cache_clear()  # pyright: ignore[reportPrivateUsage]
    yield seen
    _code_cache._known.cache_clear()  # pyright: ignore[reportPrivateUsage]


def _new_process() -> None:
    _code_cache._known.cache_clear()  # pyright: ignore[reportPrivateUsage]


def _run(code: types.CodeType) -> Callable[[int], int]:
    space: dict[str, object] = {}
    exec(code, {}, space)
    make = space["__create_fn__"]
    assert callable(make)
    return make(1)  # type: ignore[no-any-return]


def test_a_text_is_compiled_once_per_machine_and_read_by_the_next_process(
    compiles: list[str],
) -> None:
    first = _code_cache.compiled(TEXT)
    assert _code_cache.compiled(TEXT) is first  # (this process keeps it)
    _new_process()
    again = _code_cache.compiled(TEXT)
    assert compiles == [TEXT]
    assert _run(again)(2) == 3
    assert again.co_filename == "<string>"


def test_the_file_keeps_what_other_processes_added(compiles: list[str]) -> None:
    other = TEXT.replace("x + y", "x * y")
    _code_cache.compiled(TEXT)
    _new_process()  # another process, which has read the file, then a third adds a text
    _code_cache.compiled(other)
    _new_process()
    assert _run(_code_cache.compiled(TEXT))(2) == 3
    assert _run(_code_cache.compiled(other))(2) == 2
    assert compiles == [TEXT, other]


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00garbage", marshal.dumps(["not", "a", "dict"]), marshal.dumps({TEXT: "not code"})],
    ids=["empty", "garbage", "a list", "not code"],
)
def test_a_damaged_file_is_compiled_anew_and_written_again(
    compiles: list[str], content: bytes
) -> None:
    path = _code_cache.texts_file()
    assert path is not None
    Path(path).write_bytes(content)
    assert _run(_code_cache.compiled(TEXT))(2) == 3
    _new_process()
    _code_cache.compiled(TEXT)
    assert compiles == [TEXT]


def test_caching_off_writes_nothing(
    compiles: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CLAWCELL_NO_MODULE_CACHE", "1")
    assert _code_cache.texts_file() is None
    _code_cache.compiled(TEXT)
    _new_process()
    _code_cache.compiled(TEXT)
    assert compiles == [TEXT, TEXT]
    assert list(tmp_path.iterdir()) == []


def test_a_full_file_takes_no_more_texts(
    compiles: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_code_cache, "MAX_TEXTS", 1)
    _code_cache.compiled(TEXT)
    other = TEXT.replace("x + y", "x - y")
    _code_cache.compiled(other)
    _new_process()
    assert _run(_code_cache.compiled(other))(2) == -1
    _code_cache.compiled(TEXT)
    assert compiles == [TEXT, other, other]


def test_an_unwritable_directory_is_no_error(
    compiles: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CLAWCELL_CACHE_DIR", str(blocker / "cache"))
    assert _run(_code_cache.compiled(TEXT))(2) == 3
    assert compiles == [TEXT]


def test_the_file_is_per_python_build_and_optimization_level(tmp_path: Path) -> None:
    """Another interpreter or `-O` reads another file: a code object is only valid for the
    bytecode it was compiled for (the name carries the magic number and the level)."""
    script = "from clawcell._lazy import _code_cache; print(_code_cache.texts_file())"
    env = {"CLAWCELL_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    names = [
        subprocess.run(
            [sys.executable, *flags, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for flags in ([], ["-O"])
    ]
    assert names[0] != names[1]
    assert all(name.startswith(str(tmp_path)) for name in names)
    assert f"-{sys.implementation.cache_tag}-" in names[0]
