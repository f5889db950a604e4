"""Small media files for `clawcell serve --demo`, made on the spot (no downloads)."""

from __future__ import annotations

import math
import struct
import wave
import zlib
from pathlib import Path

__all__ = ["write_demo_media"]


def _png(width: int, height: int) -> bytes:
    """A bar chart as an RGB PNG."""
    bars = [0.35, 0.6, 0.45, 0.8, 0.95]
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            bar = x * len(bars) // width
            inside = (x % (width // len(bars))) > 6 and y > height * (1 - bars[bar])
            rows += bytes((43, 108, 176) if inside else (246, 247, 249))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows)))
        + chunk(b"IEND", b"")
    )


def _wav(path: Path, seconds: float = 1.2, rate: int = 8000) -> None:
    """A short two-tone chime."""
    frames = bytearray()
    for i in range(int(seconds * rate)):
        tone = 660 if i < rate * seconds / 2 else 880
        fade = min(1.0, (seconds * rate - i) / 800)
        frames += struct.pack("<h", int(9000 * fade * math.sin(2 * math.pi * tone * i / rate)))
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(frames))


def write_demo_media(directory: Path) -> tuple[Path, Path]:
    """Write `chart.png` and `voice-note.wav` into `directory`; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    chart = directory / "chart.png"
    chart.write_bytes(_png(240, 120))
    voice = directory / "voice-note.wav"
    _wav(voice)
    return chart, voice
