"""Content-Encoding decoding whose output is bounded while it is produced.

Threat model: a server answers `web_fetch` with a small body that expands enormously when
decoded: ~800 bytes of `Content-Encoding: gzip, gzip` become 800 MB, 13 KB of `zstd` 765 MB.
httpx decodes every layer of a chunk in full before the caller sees it, so a cap applied to
what it yields comes too late. `web_fetch` therefore reads the raw body and decodes it here:
every layer is asked for at most the bytes still wanted, and every layer (and the raw body) may
produce at most `cap` bytes in total, so memory and CPU stay proportional to `max_bytes` however
the layers are stacked.

* `gzip`, `x-gzip`, `deflate` (zlib-wrapped or raw): `zlib` with `max_length`.
* `zstd` (when `zstandard` is installed): the binding has no output bound, so it is fed 64
  compressed bytes at a time; a zstd block takes at least 4 bytes and yields at most 128 KiB,
  so one step yields at most about 2 MiB. Windows over 8 MiB are refused (RFC 8878 lets HTTP
  decoders do so), which bounds the decoder's own buffer.
* `identity` and `none` pass through. Anything else, `br` included (the `brotli` bindings have
  no output bound), more than four layers, or `zstd` without `zstandard`, is refused with
  `unsupported_encoding` before a byte is decoded.
"""

from __future__ import annotations

import zlib
from typing import Any, Final, Protocol

from ...errors import ToolError

__all__ = ["MAX_LAYERS", "BoundedDecoder"]

MAX_LAYERS: Final = 4
_STEP: Final = 64 * 1024
_ZSTD_SLICE: Final = 64
_ZSTD_WINDOW: Final = 8 * 1024 * 1024
_IDENTITY: Final = frozenset({"", "identity", "none"})


class _Stage(Protocol):
    name: str

    def push(self, data: bytes) -> None: ...

    def pull(self, limit: int) -> bytes:
        """At most `limit` decoded bytes; `b""` when more input is needed."""
        ...


class _Identity:
    name = "identity"

    def __init__(self) -> None:
        self._buffer = bytearray()

    def push(self, data: bytes) -> None:
        self._buffer += data

    def pull(self, limit: int) -> bytes:
        out = bytes(self._buffer[:limit])
        del self._buffer[:limit]
        return out


class _Zlib:
    """gzip and deflate through `zlib`, never more than `limit` bytes per call."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._pending = b""
        self._more = False
        self._inflate: Any = None

    def push(self, data: bytes) -> None:
        self._pending += data

    def _start(self) -> bool:
        if self._inflate is not None:
            return True
        if self.name != "deflate":
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            return True
        if len(self._pending) < 2:
            return False
        # RFC 9110 says zlib-wrapped; some servers send raw deflate. The zlib header tells.
        wrapped = self._pending[0] & 0x0F == 8 and int.from_bytes(self._pending[:2]) % 31 == 0
        self._inflate = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return True

    def pull(self, limit: int) -> bytes:
        if not self._start():
            return b""
        while (self._pending or self._more) and not self._inflate.eof:
            try:
                out: bytes = self._inflate.decompress(self._pending, limit)
            except zlib.error as exc:
                raise _corrupt(self.name, exc) from exc
            self._pending = self._inflate.unconsumed_tail
            self._more = len(out) == limit
            if out:
                return out
        return b""


class _Zstd:
    """zstd fed a few bytes at a time: each step yields at most a few 128 KiB blocks."""

    name = "zstd"

    def __init__(self, zstandard: Any) -> None:
        self._module = zstandard
        self._frame = self._new()
        self._pending = bytearray()
        self._out = bytearray()

    def _new(self) -> Any:
        return self._module.ZstdDecompressor(max_window_size=_ZSTD_WINDOW).decompressobj()

    def push(self, data: bytes) -> None:
        self._pending += data

    def pull(self, limit: int) -> bytes:
        while len(self._out) < limit and self._pending:
            piece = bytes(self._pending[:_ZSTD_SLICE])
            del self._pending[:_ZSTD_SLICE]
            try:
                self._out += self._frame.decompress(piece)
            except self._module.ZstdError as exc:
                raise _corrupt(self.name, exc) from exc
            if self._frame.eof:
                self._pending[:0] = self._frame.unused_data
                self._frame = self._new()
        out = bytes(self._out[:limit])
        del self._out[:limit]
        return out


def _corrupt(name: str, exc: Exception) -> ToolError:
    return ToolError(
        f"The {name}-encoded body could not be decoded: {exc}. The server sent corrupt data.",
        code="fetch_failed",
    )


def _unsupported(encodings: list[str], why: str) -> ToolError:
    return ToolError(
        f"The body's Content-Encoding {', '.join(encodings)!r} {why}. `web_fetch` decodes "
        f"gzip, deflate and zstd (at most {MAX_LAYERS} layers); try another URL.",
        code="unsupported_encoding",
    )


def _stage(name: str, encodings: list[str]) -> _Stage:
    if name in ("gzip", "x-gzip", "deflate"):
        return _Zlib("deflate" if name == "deflate" else "gzip")
    if name == "zstd":
        try:
            import zstandard
        except ImportError:
            raise _unsupported(encodings, "needs `zstandard`, which is not installed") from None
        return _Zstd(zstandard)
    raise _unsupported(encodings, f"uses {name!r}, which cannot be decoded with a size bound")


class BoundedDecoder:
    """Decodes a body through its `Content-Encoding` layers, `cap` bytes per layer at most.

    Push raw bytes with `push`, take decoded bytes with `pull`; once any layer (or the raw body)
    has produced `cap` bytes, `exhausted` is true and nothing more comes out.
    """

    def __init__(self, encodings: list[str], *, cap: int) -> None:
        names = [name.strip().lower() for name in encodings]
        names = [name for name in names if name not in _IDENTITY]
        if len(names) > MAX_LAYERS:
            raise _unsupported(encodings, f"stacks {len(names)} layers")
        # Layers are listed in the order they were applied: decode from the last.
        self._stages: list[_Stage] = [_Identity()]
        self._stages += [_stage(name, encodings) for name in reversed(names)]
        self._produced = [0] * len(self._stages)
        self._cap = cap
        self.exhausted = False

    @property
    def layered(self) -> bool:
        """Whether the body has any encoding to undo (identity only when not)."""
        return len(self._stages) > 1

    def push(self, raw: bytes) -> None:
        """Hand raw body bytes to the first layer."""
        self._stages[0].push(raw)

    def drain(self, raw: bytes, room: int) -> list[bytes]:
        """Push `raw`, then pull until nothing comes or `room` bytes came."""
        self.push(raw)
        pieces: list[bytes] = []
        while room > 0 and (piece := self.pull(room)):
            pieces.append(piece)
            room -= len(piece)
        return pieces

    def pull(self, limit: int) -> bytes:
        """At most `limit` decoded bytes from what was pushed; `b""` when it needs more."""
        return self._pull(len(self._stages) - 1, limit)

    def _pull(self, index: int, limit: int) -> bytes:
        stage = self._stages[index]
        while True:
            room = min(limit, self._cap - self._produced[index])
            if room <= 0:
                self.exhausted = True
                return b""
            out = stage.pull(room)
            if out or index == 0:
                self._produced[index] += len(out)
                return out
            more = self._pull(index - 1, _STEP)
            if not more:
                return b""
            stage.push(more)
