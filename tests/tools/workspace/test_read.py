"""`read`: line windows, character caps, images as references, not-found rules."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from clawcell import ContractError, ToolError
from clawcell.reply import split_media_from_output
from clawcell.tools import WorkspaceLimits, workspace

from ..conftest import call


def _png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


def test_a_whole_small_file_comes_back_untruncated(root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    assert call(workspace(root), "read", {"path": "a.txt"}) == {
        "kind": "text",
        "path": "a.txt",
        "text": "one\ntwo\n",
        "startLine": 1,
        "endLine": 2,
        "totalLines": 2,
        "truncated": False,
    }


def test_a_line_window_reports_where_to_continue(root: Path) -> None:
    (root / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    result = call(workspace(root), "read", {"path": "a.txt", "offset": 3, "limit": 2})
    assert result["text"] == "line 3\nline 4\n"
    assert (result["startLine"], result["endLine"], result["totalLines"]) == (3, 4, 10)
    assert result["truncated"] is True
    assert result["nextOffset"] == 5


def test_max_chars_cuts_at_a_line_boundary(root: Path) -> None:
    (root / "a.txt").write_text("aaaa\nbbbb\ncccc\n")
    result = call(workspace(root), "read", {"path": "a.txt", "maxChars": 12})
    assert result["text"] == "aaaa\nbbbb\n"
    assert result["nextOffset"] == 3


def test_a_single_line_longer_than_max_chars_is_cut_without_a_next_offset(root: Path) -> None:
    (root / "a.txt").write_text("x" * 100)
    result = call(workspace(root), "read", {"path": "a.txt", "maxChars": 10})
    assert result["text"] == "x" * 10
    assert result["truncated"] is True
    assert "nextOffset" not in result


def test_max_chars_never_exceeds_the_configured_ceiling(root: Path) -> None:
    (root / "a.txt").write_text("y" * 500)
    tools = workspace(root, limits=WorkspaceLimits(read_max_chars=100))
    assert len(call(tools, "read", {"path": "a.txt", "maxChars": 10_000})["text"]) == 100


def test_an_image_comes_back_as_metadata_and_a_media_reference_never_bytes(root: Path) -> None:
    (root / "chart.png").write_bytes(_png(640, 480) + b"\x00" * 100)
    result = call(workspace(root), "read", {"path": "chart.png"})
    assert result == {
        "kind": "image",
        "path": "chart.png",
        "mimeType": "image/png",
        "bytes": len(_png(640, 480)) + 100,
        "media": f"MEDIA:{root.resolve() / 'chart.png'}",
        "width": 640,
        "height": 480,
    }


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (b"GIF89a\x10\x00\x20\x00" + b"\x00" * 8, "image/gif"),
        (
            b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08\x00\x30\x00\x40" + b"\x00" * 8,
            "image/jpeg",
        ),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
    ids=["gif", "jpeg", "webp"],
)
def test_other_image_types_are_recognised_by_their_magic_bytes(
    root: Path, head: bytes, mime: str
) -> None:
    (root / "pic.bin").write_bytes(head)
    result = call(workspace(root), "read", {"path": "pic.bin"})
    assert (result["kind"], result["mimeType"]) == ("image", mime)


def test_jpeg_and_gif_sizes_are_read_from_their_headers(root: Path) -> None:
    (root / "a.gif").write_bytes(b"GIF89a\x10\x00\x20\x00" + b"\x00" * 8)
    (root / "a.jpg").write_bytes(
        b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08\x00\x30\x00\x40" + b"\x00" * 8
    )
    gif = call(workspace(root), "read", {"path": "a.gif"})
    jpeg = call(workspace(root), "read", {"path": "a.jpg"})
    assert (gif["width"], gif["height"]) == (16, 32)
    assert (jpeg["width"], jpeg["height"]) == (64, 48)


def test_a_binary_file_that_is_not_an_image_is_refused(root: Path) -> None:
    (root / "blob").write_bytes(b"\x01\x00\x02" * 10)
    with pytest.raises(ToolError) as refused:
        call(workspace(root), "read", {"path": "blob"})
    assert refused.value.code == "binary_file"
    assert refused.value.message == "File 'blob' is binary (30 bytes), not text or a known image."


def test_invalid_utf8_is_read_with_replacement_characters(root: Path) -> None:
    (root / "latin.txt").write_bytes(b"caf\xe9\n")
    assert call(workspace(root), "read", {"path": "latin.txt"})["text"] == "caf\ufffd\n"


def test_a_missing_file_throws_unless_optional(root: Path) -> None:
    with pytest.raises(ToolError) as missing:
        call(workspace(root), "read", {"path": "notes/todo.md"})
    assert missing.value.code == "not_found"
    assert missing.value.message == (
        "File 'notes/todo.md' does not exist. Check the name with `list` or `find`, "
        "or pass `optional: true` to get a `not_found` result instead."
    )
    result = call(workspace(root), "read", {"path": "notes/todo.md", "optional": True})
    assert result == {"kind": "not_found", "path": "notes/todo.md"}


@pytest.mark.parametrize("path", ["memory/2026-12-01.md", "./memory//1999-01-31.md"])
def test_a_missing_daily_note_is_not_found_even_without_optional(root: Path, path: str) -> None:
    result = call(workspace(root), "read", {"path": path})
    assert result["kind"] == "not_found"


@pytest.mark.parametrize(
    "path", ["memory/2026-12-1.md", "memory/notes.md", "memory/sub/2026-12-01.md", "2026-12-01.md"]
)
def test_other_missing_paths_under_memory_still_throw(root: Path, path: str) -> None:
    with pytest.raises(ToolError) as missing:
        call(workspace(root), "read", {"path": path})
    assert missing.value.code == "not_found"


def test_an_existing_daily_note_is_read_as_text(root: Path) -> None:
    (root / "memory").mkdir()
    (root / "memory" / "2026-12-01.md").write_text("- shipped\n")
    assert call(workspace(root), "read", {"path": "memory/2026-12-01.md"})["text"] == "- shipped\n"


def test_files_over_the_read_cap_are_refused_with_the_cap_named(root: Path) -> None:
    (root / "big.txt").write_text("z" * 2000)
    tools = workspace(root, limits=WorkspaceLimits(max_read_bytes=1000))
    with pytest.raises(ToolError) as refused:
        call(tools, "read", {"path": "big.txt"})
    assert refused.value.code == "file_too_large"
    assert refused.value.message == (
        "File 'big.txt' has 2000 bytes, more than the 1000-byte read cap. "
        "Read a part with `grep`, or raise `max_read_bytes`."
    )


def test_unknown_input_keys_are_refused_by_the_closed_input_contract(root: Path) -> None:
    with pytest.raises(ContractError) as refused:
        call(workspace(root), "read", {"path": "a", "encoding": "latin-1"})
    assert refused.value.code == "input_contract"


def test_an_offset_past_the_end_is_refused_with_the_line_count(root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError) as refused:
        call(workspace(root), "read", {"path": "a.txt", "offset": 3})
    assert refused.value.code == "invalid_range"
    assert refused.value.message == (
        "`offset` 3 is past the end of the file (2 lines). Read from a smaller offset."
    )


def test_an_empty_file_reads_as_empty_text(root: Path) -> None:
    (root / "empty.txt").write_text("")
    result = call(workspace(root), "read", {"path": "empty.txt"})
    assert (result["text"], result["totalLines"], result["truncated"]) == ("", 0, False)


def test_the_media_reference_is_a_line_the_reply_protocol_delivers(root: Path) -> None:
    (root / "my chart.png").write_bytes(_png(2, 2))
    media = call(workspace(root), "read", {"path": "my chart.png"})["media"]
    split = split_media_from_output(f"Here is the chart.\n{media}")
    assert split.get("mediaUrls") == [str(root.resolve() / "my chart.png")]
