"""Image sniffing: the type and pixel size of an image from its first bytes, without decoding it."""

from __future__ import annotations

import struct

from ..._lazy import value_class

__all__ = ["ImageInfo", "sniff_image"]

_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


@value_class
class ImageInfo:
    """What a file's header says about it.

    Attributes:
        mime_type: `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        width: Pixel width, when the header has it.
        height: Pixel height, when the header has it.
    """

    mime_type: str
    width: int | None = None
    height: int | None = None


def sniff_image(head: bytes) -> ImageInfo | None:
    """The image type of `head` (the first 64 KiB of a file is plenty), or `None`."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return ImageInfo(mime_type="image/png", width=width, height=height)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return ImageInfo(mime_type="image/gif", width=width, height=height)
    if head.startswith(b"\xff\xd8\xff"):
        return _jpeg(head)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return ImageInfo(mime_type="image/webp")
    return None


def _jpeg(head: bytes) -> ImageInfo:
    """Walk the JPEG segments to the first start-of-frame marker for the size."""
    index = 2
    while index + 9 <= len(head) and head[index] == 0xFF:
        marker = head[index + 1]
        length = struct.unpack(">H", head[index + 2 : index + 4])[0]
        if marker in _SOF_MARKERS:
            height, width = struct.unpack(">HH", head[index + 5 : index + 9])
            return ImageInfo(mime_type="image/jpeg", width=width, height=height)
        index += 2 + length
    return ImageInfo(mime_type="image/jpeg")
