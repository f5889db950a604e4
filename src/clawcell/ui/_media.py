"""Media attachments: which URLs a page may load, and local files served from media roots.

Threat model: attachment references come from model text, so they are hostile input. Remote
media must pass `clawcell.reply`'s URL policy (public `https:` only). Local media is served
only from the configured `mediaRoots`: a reference with a `..` segment or `~user` is refused,
the path is resolved with symlinks followed and must still lie inside a root (so a symlink
cannot point out of it), and only regular files are served. Files are sent with the type
their extension names and `nosniff`; anything that is not image, audio, video, PDF or plain
text is sent as an `application/octet-stream` download with `CSP: sandbox`, so a hostile
`.html` or `.svg` can never run in the app's origin.
"""

from __future__ import annotations

import mimetypes
import os
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Final

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

from ..reply import has_traversal_or_unsupported_home_dir_prefix, is_allowed_remote_media_url

__all__ = ["MediaRoots", "media_route"]

MEDIA_PATH: Final = "/media"
_INLINE_TYPES: Final = ("image/", "audio/", "video/")
_INLINE_EXACT: Final = frozenset({"application/pdf", "text/plain"})
_BLOCKED_INLINE: Final = frozenset({"image/svg+xml"})


class MediaRoots:
    """Resolves attachment references to page URLs, and local paths to contained files."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = tuple(Path(os.path.realpath(root)) for root in roots)

    def page_url(self, reference: str) -> tuple[str | None, str | None]:
        """`(src, None)` for a loadable reference, `(None, reason)` for a refused one."""
        if reference.startswith(("https://", "HTTPS://")):
            if is_allowed_remote_media_url(reference):
                return reference, None
            return None, "remote media blocked by the media policy"
        lowered = reference.lower()
        if lowered.startswith(("data:image/", "data:audio/", "data:video/")):
            return reference, None
        if lowered.startswith("http://"):
            return None, "plain http media is not loaded"
        if reference.startswith("/__openclaw__/"):
            return reference, None
        if self.contained(reference) is None:
            return None, "local file outside the configured media roots"
        return f"{MEDIA_PATH}?path={urllib.parse.quote(reference, safe='/')}", None

    def contained(self, reference: str) -> Path | None:
        """The real path of a local reference inside a media root, else `None`."""
        raw = reference[7:] if reference.startswith("file://") else reference
        if not raw or "\x00" in raw or has_traversal_or_unsupported_home_dir_prefix(raw):
            return None
        path = Path(raw).expanduser()
        if not path.is_absolute():
            return None
        real = Path(os.path.realpath(path))
        if not any(real.is_relative_to(root) for root in self.roots) or not real.is_file():
            return None
        return real


def media_type(path: Path) -> tuple[str, bool]:
    """The `Content-Type` to send and whether the file may be shown inline."""
    guessed, _ = mimetypes.guess_type(path.name, strict=False)
    if guessed is None or guessed in _BLOCKED_INLINE:
        return "application/octet-stream", False
    inline = guessed.startswith(_INLINE_TYPES) or guessed in _INLINE_EXACT
    return (guessed, True) if inline else ("application/octet-stream", False)


def media_route(roots: MediaRoots) -> Callable[[Request], Awaitable[Response]]:
    """The `GET /media?path=…` endpoint."""

    async def endpoint(request: Request) -> Response:
        reference = request.query_params.get("path", "")
        path = roots.contained(reference)
        if path is None:
            return PlainTextResponse(
                f"Refused: {reference!r} is not a file inside the configured media roots.",
                status_code=404,
            )
        content_type, inline = media_type(path)
        disposition = "inline" if inline else "attachment"
        return FileResponse(
            path,
            media_type=content_type,
            filename=path.name,
            content_disposition_type=disposition,
            headers={"content-security-policy": "sandbox; default-src 'none'"},
        )

    return endpoint
