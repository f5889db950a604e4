"""The demo's media files: a PNG chart and a WAV voice note, made on the spot."""

from __future__ import annotations

import struct
import wave
import zlib
from pathlib import Path

from clawcell.ui._demo._media_files import write_demo_media


def test_the_chart_is_a_png_whose_chunks_carry_their_checksums(tmp_path: Path) -> None:
    chart, _ = write_demo_media(tmp_path / "media")
    data = chart.read_bytes()
    assert chart.name == "chart.png"
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    kinds, at = list[bytes](), 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        body = data[at + 4 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert zlib.crc32(body) == crc
        kinds.append(body[:4])
        at += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">II", data[16:24]) == (240, 120)


def test_the_voice_note_is_a_short_mono_wav(tmp_path: Path) -> None:
    _, voice = write_demo_media(tmp_path)
    with wave.open(str(voice), "rb") as note:
        assert (note.getnchannels(), note.getsampwidth(), note.getframerate()) == (1, 2, 8000)
        assert note.getnframes() == 9600  # 1.2 s at 8 kHz
