"""Source texts the package compiles at run time, kept compiled on disk between processes.

`value_class` builds a class's standard `__init__` from a text the first time the class is
instantiated (`clawcell._lazy`); a process's first cell instantiates about twenty such
classes, and parsing and compiling their texts was about 3 ms of its cold start. A text
compiles to the same code object in every process of one Python build, so the code objects
are kept in one file beside the engine's compiled module (`$CLAWCELL_CACHE_DIR`, else
`$XDG_CACHE_HOME/clawcell`, else `~/.cache/clawcell`; `CLAWCELL_NO_MODULE_CACHE=1` turns it
off), keyed by the whole text. The file's name carries the bytecode's magic number and the
optimization level, so another Python reads its own file.

The file is read once per process, at the first text. A text not in it is compiled, and the
file is written again with it (read first, so texts other processes added stay; written
aside and renamed, so a reader never sees half a file): once per text per machine. A missing,
unreadable or damaged file, or an entry that is not a code object, is compiled anew; nothing
is raised. Like `__pycache__` and the engine cache, whoever can write the directory can
already change the code this process runs.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import sys
import types
from importlib import _bootstrap_external  # pyright: ignore[reportPrivateUsage]

__all__ = ["compiled", "texts_file"]

MAX_TEXTS = 512
"""Texts kept in the file; past this a text is compiled in each process (the package's own
value classes are about 250, so only programs' own classes would find the file full)."""


def compiled(text: str) -> types.CodeType:
    """`compile(text, "<string>", "exec", dont_inherit=True)`, from the file when a process
    already compiled the same text (`dont_inherit`: not the caller's `__future__` flags, as
    the standard dataclass decorator compiles its texts)."""
    codes = _known()
    code = codes.get(text)
    if code is None:
        code = compile(text, "<string>", "exec", dont_inherit=True)
        codes[text] = code
        _write(texts_file(), text, code)
    return code


@functools.cache
def _known() -> dict[str, types.CodeType]:
    """This process's compiled texts: the file's, read at the first text, and its own."""
    return _read(texts_file())


def texts_file() -> str | None:
    """The file of compiled texts for this Python, or `None` when caching is off."""
    if os.environ.get("CLAWCELL_NO_MODULE_CACHE"):
        return None
    base = os.environ.get("CLAWCELL_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "clawcell",
    )
    name = f"texts-{sys.implementation.cache_tag}-{_MAGIC.hex()}-O{sys.flags.optimize}.marshal"
    return os.path.join(base, name)


# (`importlib.util.MAGIC_NUMBER` is this value; `importlib.util` is not loaded otherwise)
_MAGIC: bytes = _bootstrap_external.MAGIC_NUMBER


def _read(path: str | None) -> dict[str, types.CodeType]:
    """The file's texts and their code objects; `{}` when it is missing or damaged."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as handle:
            stored = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(stored, dict):
        return {}
    return {
        text: code
        for text, code in stored.items()  # pyright: ignore[reportUnknownVariableType]
        if isinstance(text, str) and isinstance(code, types.CodeType)
    }


def _write(path: str | None, text: str, code: types.CodeType) -> None:
    """Add `text` to the file, keeping what other processes wrote; errors are ignored (the
    text is compiled again by the next process)."""
    if path is None:
        return
    stored = _read(path)
    if text in stored or len(stored) >= MAX_TEXTS:
        return
    stored[text] = code
    aside = f"{path}.{os.getpid()}.{os.urandom(4).hex()}"
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(aside, "xb") as handle:
                handle.write(marshal.dumps(stored))
            os.replace(aside, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(aside)
