"""`Attachment`: a file a person sent with a message (an image, or a text file).

The type is read from the bytes, never taken from a client or a file name: PNG, JPEG, GIF and
WebP by their signatures are images; anything else that decodes as UTF-8 without NUL bytes is
a text file (`text/plain`, its name keeps the extension the model reads); the rest is refused.
SVG is text here, never an image: it can carry script.

In the transcript an attachment is a content block of the user's message, so every worker
sharing the store reads it back, and a model call of any later turn gets it again:

```text
{"type": "image", "data": <base64>, "mimeType": "image/png", "name": "cat.png",
 "size": 1234, "sha256": <hex>}
{"type": "file", "text": <the text>, "mimeType": "text/plain", "name": "notes.md",
 "size": 56, "sha256": <hex>}
```

`image` keeps the original's block shape (`data`, `mimeType`), which its history projection
already shows without the bytes; `file` is ours. `sha256` names the bytes for the page.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, cast

from .._lazy import value_class
from ..errors import ConfigurationError, InputError

__all__ = [
    "IMAGE_TYPES",
    "Attachment",
    "attachments_of",
    "checked_attachments",
    "clean_name",
    "file_part_text",
    "sniff",
]

IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types an attachment may have (what every adapter's provider takes)."""

TEXT_TYPE: Final = "text/plain"
_MAX_NAME: Final = 200
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def sniff(data: bytes) -> str | None:
    """The media type `data` holds (an image type or `text/plain`), or `None` when it is
    neither a known image nor UTF-8 text."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if b"\x00" in data:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return TEXT_TYPE


def clean_name(name: object) -> str:
    """A display name: the last path segment, without control characters, at most 200
    characters; `attachment` when nothing is left. It is only ever shown, never a path."""
    text = name if isinstance(name, str) else ""
    text = _CONTROL.sub("", re.split(r"[/\\]", text)[-1]).strip()
    if text in ("", ".", ".."):
        return "attachment"
    return text[:_MAX_NAME]


@value_class
class Attachment:
    """A file sent with a user message: an image or a UTF-8 text file.

    Build one with `Attachment.of(name, data)`, which reads the type from the bytes.

    Attributes:
        name: The name shown and given to the model (never used as a path).
        media_type: One of `IMAGE_TYPES`, or `text/plain`.
        data: The file's bytes.
    """

    name: str
    media_type: str
    data: bytes

    def __post_init__(self) -> None:
        if sniff(self.data) != self.media_type or not self.data:
            raise InputError(
                f"attachment {self.name!r} is not the {self.media_type!r} it claims to be; "
                "build it with `Attachment.of(name, data)`, which reads the type from the bytes."
            )

    @classmethod
    def of(cls, name: object, data: bytes) -> Attachment:
        """An attachment of `data`, typed by its bytes.

        Raises:
            InputError: `data` is empty, or neither a PNG, JPEG, GIF or WebP image nor
                UTF-8 text.
        """
        shown = clean_name(name)
        if not data:
            raise InputError(
                f"attachment {shown!r} is empty (0 bytes); attach a file with content."
            )
        media_type = sniff(data)
        if media_type is None:
            raise InputError(
                f"attachment {shown!r} is neither an image (PNG, JPEG, GIF, WebP) nor UTF-8 "
                f"text (it starts {data[:8]!r}); attach one of those, or paste its text."
            )
        return cls(name=shown, media_type=media_type, data=bytes(data))

    @property
    def kind(self) -> Literal["image", "file"]:
        """`image` for an image, `file` for a text file."""
        return "image" if self.media_type in IMAGE_TYPES else "file"

    @property
    def text(self) -> str:
        """A text file's text (an image's bytes are not text: empty)."""
        return self.data.decode("utf-8-sig") if self.kind == "file" else ""

    @property
    def base64(self) -> str:
        """The bytes as base64 (an image's `data`)."""
        return base64.b64encode(self.data).decode("ascii")

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of the bytes."""
        return hashlib.sha256(self.data).hexdigest()

    def block(self) -> dict[str, Any]:
        """The transcript content block (see the module docstring)."""
        body = {"data": self.base64} if self.kind == "image" else {"text": self.text}
        return {"type": self.kind, **body, "mimeType": self.media_type, "name": self.name,
                "size": len(self.data), "sha256": self.sha256}  # fmt: skip

    @classmethod
    def from_block(cls, block: Mapping[str, Any]) -> Attachment | None:
        """The attachment a stored block holds; `None` for other blocks (or a damaged one)."""
        kind, media_type = block.get("type"), block.get("mimeType")
        try:
            if kind == "image" and isinstance(data := block.get("data"), str):
                raw = base64.b64decode(data, validate=True)
            elif kind == "file" and isinstance(text := block.get("text"), str):
                raw = text.encode("utf-8")
            else:
                return None
            return cls(name=clean_name(block.get("name")), media_type=str(media_type), data=raw)
        except (binascii.Error, InputError):
            return None


def attachments_of(message: Mapping[str, Any]) -> list[Attachment]:
    """The attachments of a stored message, in order."""
    blocks = cast(Sequence[Mapping[str, Any]], message.get("content") or ())
    found = (Attachment.from_block(b) for b in blocks if isinstance(cast(object, b), Mapping))
    return [a for a in found if a is not None]


def file_part_text(attachment: Attachment) -> str:
    """A text file as the text a model reads: its name, then its text between markers."""
    return (
        f"[attached file {attachment.name!r} ({attachment.media_type}, "
        f"{len(attachment.data)} bytes)]\n{attachment.text}\n[end of {attachment.name!r}]"
    )


def checked_attachments(attachments: object) -> tuple[Attachment, ...]:
    """`Agent.run`'s `attachments` as a tuple, or a `ConfigurationError`."""
    items = (
        tuple(cast(Sequence[object], attachments))
        if isinstance(attachments, Sequence) and not isinstance(attachments, str | bytes)
        else None
    )
    if items is None or not all(isinstance(a, Attachment) for a in items):
        raise ConfigurationError(
            "`attachments` must be a list of `Attachment`s (`Attachment.of(name, data)`), "
            f"got {attachments!r:.200}."
        )
    return cast(tuple[Attachment, ...], items)
