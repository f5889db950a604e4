"""The composer's file attachments: the upload route, taking uploads into a message, and
serving a sent file back to the page.

`POST /api/sessions/<id>/attachments?name=<file name>` takes the file's bytes as the body
(any `Content-Type`: it is ignored). A declared `Content-Length` over the per-file cap is
refused before a byte is read, and the body is read in chunks that stop at the cap, so no
request buffers more than `max_attachment_bytes` + one chunk. The type comes from the bytes
(`Attachment.of`): images (PNG, JPEG, GIF, WebP) and UTF-8 text; anything else is `415`.
The name is display text only (its last path segment, control characters removed); nothing
is ever written under it.

An upload waits in the agent's store (its `ResultStore`, scope `ui:upload:<session>`, kept
`UPLOAD_SECONDS`) until a message names it (`POST …/turns {"text", "attachments": [ids]}`):
any worker of one database can take it, and no worker keeps a file on its disk. Taken into
a message, the file becomes part of the user's transcript entry (see
`clawcell.agent.Attachment`), which is what the page shows after a reload, from any worker:
`GET …/attachments/<sha256>` serves it from there (images inline, text files as a download),
with a CSP that runs nothing and `nosniff`.

Threat model: the page's own token and CSRF header guard every route (`Guard`); an upload id
is a random 128-bit name valid only within its session; sniffing keeps an HTML or SVG file
from being served as anything but `text/plain` or a download.
"""

from __future__ import annotations

import base64
import binascii
import inspect
import json
import re
import secrets
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..agent import Attachment
from ..errors import InputError
from ..store import ResultStore
from ._protocol import ChatAgent, TranscriptAgent, agent_store
from ._render._views import AttachmentView
from ._responses import read_capped
from ._sessions._paths import path_session
from ._settings import UiSettings

__all__ = ["UPLOAD_SECONDS", "Uploads", "attachment_url", "sent_blocks", "sent_file_views"]

UPLOAD_SECONDS: Final = 3600
"""How long an upload waits for the message that sends it."""
UPLOAD_ID: Final = re.compile(r"up_[0-9a-f]{32}")
_SHA256: Final = re.compile(r"[0-9a-f]{64}")
_OFF: Final = (
    "attachments are off on this server (`maxAttachmentBytes` is 0, or the agent or its store "
    "cannot keep them)."
)
_FILE_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def _scope(session_id: str) -> str:
    return f"ui:upload:{session_id}"


def attachment_url(session_id: str, sha256: str) -> str:
    """Where the page loads a sent file of `session_id`."""
    return f"/api/sessions/{urllib.parse.quote(session_id, safe='')}/attachments/{sha256}"


def sent_blocks(text: str, files: Sequence[Attachment]) -> list[dict[str, Any]]:
    """A message's blocks as the page draws them: its text and its files' names (no bytes)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": f.kind, "name": f.name, "mimeType": f.media_type,
                "size": len(f.data), "sha256": f.sha256} for f in files]  # fmt: skip
    return blocks


def sent_file_views(content: object, session_id: str | None) -> list[AttachmentView]:
    """The files of a user message's content as views: an image as its thumbnail (the
    viewer opens it), a text file as its name and size, a link that downloads it."""
    views: list[AttachmentView] = []
    for block in cast(list[object], content) if isinstance(content, list) else []:
        if not isinstance(block, Mapping):
            continue
        record = cast(Mapping[str, Any], block)
        kind, digest = record.get("type"), record.get("sha256")
        if kind not in ("image", "file") or not isinstance(digest, str):
            continue
        name, size = str(record.get("name") or "attachment"), record.get("size")
        src = attachment_url(session_id, digest) if session_id is not None else None
        about = f"text file · {_size(size)}" if isinstance(size, int) else "text file"
        views.append(AttachmentView(
            media="image" if kind == "image" else "document", src=src, label=name,
            mime_type=None if kind == "image" else about, voice_note=False,
            refusal=None if src else "shown only in its session",
        ))  # fmt: skip
    return views


def _refusal(status: int, code: str, message: str) -> Response:
    return JSONResponse({"error": message, "code": code}, status_code=status)


class Uploads:
    """The attachment routes over `agent` (its store keeps the uploads)."""

    def __init__(self, agent: ChatAgent, settings: UiSettings) -> None:
        store = agent_store(agent)
        self.store = store if isinstance(store, ResultStore) else None
        self.settings = settings
        self.transcript = agent.transcript if isinstance(agent, TranscriptAgent) else None
        try:
            takes = "attachments" in inspect.signature(agent.run).parameters
        except (TypeError, ValueError):  # a callable without a signature: assume the old shape
            takes = False
        self.enabled = takes and self.store is not None and settings.max_attachment_bytes > 0

    def page_caps(self) -> dict[str, int | str]:
        """The caps the composer checks before uploading (the server checks them again)."""
        s = self.settings
        hint = (
            f"images or text files: up to {s.max_attachments}, {_size(s.max_attachment_bytes)} each"
        )
        return {"file": s.max_attachment_bytes, "count": s.max_attachments,
                "total": s.max_message_attachment_bytes, "hint": hint}  # fmt: skip

    async def upload(self, request: Request) -> Response:
        """`POST …/attachments?name=`: keep one file for the message being written."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        if not self.enabled or self.store is None:
            return _refusal(404, "attachments_off", _OFF)
        cap = self.settings.max_attachment_bytes
        name = request.query_params.get("name", "")
        data = await read_capped(request, cap)
        if data is None:
            return self._too_large(name, request.headers.get("content-length") or "more")
        try:
            attachment = Attachment.of(name, data)
        except InputError as exc:
            status = 400 if not data else 415
            return _refusal(status, "empty" if not data else "unsupported_type", exc.message)
        upload_id = f"up_{secrets.token_hex(16)}"
        record = {"name": attachment.name, "data": attachment.base64}
        await self.store.put_result(_scope(session_id), upload_id, json.dumps(record),
                                    expires_at=time.time() + UPLOAD_SECONDS)  # fmt: skip
        answer = {"id": upload_id, "name": attachment.name, "kind": attachment.kind,
                  "mimeType": attachment.media_type, "size": len(data)}  # fmt: skip
        return JSONResponse(answer, status_code=201)

    def _too_large(self, name: str, size: str) -> Response:
        cap = self.settings.max_attachment_bytes
        message = (
            f"file {name[:80]!r} is larger than the {_size(cap)} a file may be ({size} bytes); "
            "attach a smaller one."
        )
        return _refusal(413, "too_large", message)

    async def take(self, session_id: str, ids: object) -> list[Attachment] | str:
        """The uploads a message names (each taken out of the store), or why it cannot send."""
        s = self.settings
        if not isinstance(ids, list) or not all(
            isinstance(i, str) and UPLOAD_ID.fullmatch(i) for i in cast(list[object], ids)
        ):
            return f"`attachments` must be a list of upload ids (`up_…`), got {ids!r:.120}."
        chosen = list(dict.fromkeys(cast(list[str], ids)))
        if len(chosen) > s.max_attachments:
            return f"a message may carry {s.max_attachments} files, got {len(chosen)}: remove some."
        if self.store is None:
            return _OFF
        found = [await self._upload(self.store, session_id, i) for i in chosen]
        missing = [i for i, a in zip(chosen, found, strict=True) if a is None]
        if missing:
            return (f"upload {missing[0]!r} is unknown or expired (uploads wait "
                    f"{UPLOAD_SECONDS // 60} minutes): attach the file again.")  # fmt: skip
        attachments = [a for a in found if a is not None]
        total = sum(len(a.data) for a in attachments)
        if total > s.max_message_attachment_bytes:
            most = _size(s.max_message_attachment_bytes)
            return (
                f"the files hold {_size(total)} together, more than the {most} one message "
                "may carry: remove some."
            )
        return attachments

    async def forget(self, session_id: str, ids: Sequence[str]) -> None:
        """Drop uploads a sent message has taken (they live on in its transcript entry)."""
        if self.store is not None:
            for upload_id in ids:
                await self.store.delete_result(_scope(session_id), upload_id)

    @staticmethod
    async def _upload(store: ResultStore, session_id: str, upload_id: str) -> Attachment | None:
        text = await store.get_result(_scope(session_id), upload_id)
        try:
            record = cast(dict[str, Any], json.loads(text)) if text else None
            if record is None:
                return None
            return Attachment.of(record.get("name"), base64.b64decode(record["data"]))
        except (ValueError, KeyError, TypeError, binascii.Error):
            return None

    async def file(self, request: Request) -> Response:
        """`GET …/attachments/<sha256>`: a file a message of the session carries."""
        session_id = path_session(request)
        if isinstance(session_id, Response):
            return session_id
        digest = request.path_params["sha256"]
        found = None
        if _SHA256.fullmatch(digest) and self.transcript is not None:
            found = _find(await self.transcript(session_id), digest)
        if found is None:
            return _refusal(404, "not_found", f"no file {digest!r:.80} in session "
                            f"{session_id!r:.80}: it was never sent there.")  # fmt: skip
        quoted = urllib.parse.quote(found.name, safe="")
        disposition = "inline" if found.kind == "image" else "attachment"
        headers = {"content-disposition": f"{disposition}; filename*=UTF-8''{quoted}",
                   "content-security-policy": _FILE_CSP,
                   "cache-control": "private, max-age=86400, immutable"}  # fmt: skip
        media_type = found.media_type if found.kind == "image" else "text/plain; charset=utf-8"
        return Response(found.data, media_type=media_type, headers=headers)

    def routes(self) -> list[Route]:
        base = "/api/sessions/{session}/attachments"
        return [
            Route(base, self.upload, methods=["POST"]),
            Route(f"{base}/{{sha256}}", self.file, methods=["GET"]),
        ]


def _find(messages: Sequence[Mapping[str, Any]], digest: str) -> Attachment | None:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        for block in cast(Sequence[object], message.get("content") or ()):
            if (
                isinstance(block, Mapping)
                and cast(Mapping[str, Any], block).get("sha256") == digest
            ):
                attachment = Attachment.from_block(cast(Mapping[str, Any], block))
                if attachment is not None and attachment.sha256 == digest:
                    return attachment
    return None


def _size(count: int) -> str:
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if count >= scale:
            return f"{count / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{count} bytes"
