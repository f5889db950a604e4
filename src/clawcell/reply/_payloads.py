"""Reply payloads: merging tool media in, and never delivering the same media twice.

A payload is a JSON object with the channel fields (`text`, `mediaUrls`, `mediaUrl`,
`audioAsVoice`, `replyToId`, `isReasoning`, `isError`, `trustedLocalMedia`, `channelData` …).
Out-of-band metadata the original keeps in a side table travels here as the `__metadata` key;
it is copied whenever a payload is rebuilt and never read by channels.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ._text import as_list, as_record, js_trim
from ._urls import parse_whatwg_url

__all__ = [
    "Payload",
    "filter_messaging_tool_media_duplicates",
    "finalize_after_block_streaming",
    "merge_attempt_tool_media_payloads",
    "outbound_media",
]

Payload = dict[str, Any]
_FILE_SCHEME: Final = re.compile(r"file://", re.IGNORECASE)
_BAD_ESCAPE: Final = re.compile(r"%(?![0-9a-fA-F]{2})")


def _dedupe(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _clean_urls(values: Iterable[object] | None) -> list[str]:
    if values is None:
        return []
    return _dedupe(js_trim(v) for v in values if isinstance(v, str) and js_trim(v))


def outbound_media(payload: Mapping[str, Any]) -> list[str]:
    """The media a payload delivers: non-blank `mediaUrls`, else `[mediaUrl]`, trimmed."""
    listed = _clean_urls(as_list(payload.get("mediaUrls")))
    if listed:
        return listed
    single = payload.get("mediaUrl")
    return [js_trim(single)] if isinstance(single, str) and js_trim(single) else []


def _set_flag(payload: Payload, key: str, value: object) -> None:
    if value:
        payload[key] = True
    else:
        payload.pop(key, None)


def merge_attempt_tool_media_payloads(
    *,
    payloads: Sequence[Payload] | None = None,
    tool_media_urls: Sequence[str] | None = None,
    tool_audio_as_voice: bool | None = None,
    tool_trusted_local_media: bool | None = None,
    source_reply_delivery_mode: str | None = None,
) -> list[Payload] | None:
    """Attach media produced by tools to the first non-reasoning reply payload.

    Returns `payloads` unchanged (possibly `None`) when tools produced nothing. A payload that
    mirrors a message already sent through a messaging tool (`message_tool_only` mode) is never
    modified; trusted local tool media then travels in a new payload of its own.
    """
    urls = _clean_urls(tool_media_urls)
    if not urls and not tool_audio_as_voice and not tool_trusted_local_media:
        return None if payloads is None else list(payloads)
    result = [dict(p) for p in payloads or []]
    index = next((i for i, p in enumerate(result) if not p.get("isReasoning")), None)
    if index is None:
        result.append(_media_payload(urls, tool_audio_as_voice, tool_trusted_local_media))
        return result
    target = result[index]
    metadata = as_record(target.get("__metadata")) or {}
    mirrored = bool(metadata.get("sourceReplyTranscriptMirror"))
    if source_reply_delivery_mode == "message_tool_only" and mirrored:
        if tool_trusted_local_media and urls:
            result.append(_media_payload(urls, tool_audio_as_voice, True))
        return result
    existing = [u for u in as_list(target.get("mediaUrls")) or [] if isinstance(u, str)]
    merged = _dedupe([*existing, *urls])
    if merged:
        target["mediaUrls"] = merged
        target.setdefault("mediaUrl", merged[0])
    else:
        target.pop("mediaUrls", None)
    _set_flag(target, "audioAsVoice", target.get("audioAsVoice") or tool_audio_as_voice)
    _set_flag(
        target, "trustedLocalMedia", target.get("trustedLocalMedia") or tool_trusted_local_media
    )
    return result


def _media_payload(urls: list[str], audio: bool | None, trusted: bool | None) -> Payload:
    payload: Payload = {}
    if urls:
        payload["mediaUrls"] = urls
        payload["mediaUrl"] = urls[0]
    _set_flag(payload, "audioAsVoice", audio)
    _set_flag(payload, "trustedLocalMedia", trusted)
    return payload


def _decode_uri_component(text: str) -> str | None:
    if _BAD_ESCAPE.search(text):
        return None
    try:
        return urllib.parse.unquote(text, errors="strict")
    except UnicodeDecodeError:
        return None


def _media_identity(value: str) -> str:
    trimmed = js_trim(value)
    if not _FILE_SCHEME.match(trimmed):
        return trimmed
    parsed = parse_whatwg_url(trimmed)
    if parsed is not None and parsed.protocol == "file:":
        decoded = _decode_uri_component(parsed.pathname)
        if decoded is not None:
            return decoded
    return trimmed[len("file://") :]


def filter_messaging_tool_media_duplicates(
    *, payloads: Sequence[Payload], sent_media_urls: Sequence[str]
) -> list[Payload]:
    """Remove from `payloads` every media URL already delivered (`file://` URLs as paths)."""
    sent = {_media_identity(url) for url in sent_media_urls} - {""}
    if not sent:
        return list(payloads)
    return [_without_media(dict(payload), sent) for payload in payloads]


def _without_media(payload: Payload, sent: set[str]) -> Payload:
    single = payload.get("mediaUrl")
    strip_single = isinstance(single, str) and bool(single) and _media_identity(single) in sent
    listed = as_list(payload.get("mediaUrls"))
    if listed is not None:
        kept = [u for u in listed if not (isinstance(u, str) and _media_identity(u) in sent)]
        if kept:
            payload["mediaUrls"] = kept
        else:
            payload.pop("mediaUrls")
    if strip_single:
        payload.pop("mediaUrl")
    return payload


def _content_key(payload: Mapping[str, Any]) -> str:
    text = payload.get("text")
    return json.dumps(
        {
            "text": js_trim(text) if isinstance(text, str) else "",
            "mediaList": outbound_media(payload),
            "presentation": payload.get("presentation"),
            "interactive": payload.get("interactive"),
            "channelData": payload.get("channelData"),
        },
        sort_keys=True,
    )


def _has_text(payload: Mapping[str, Any]) -> bool:
    text = payload.get("text")
    return isinstance(text, str) and bool(js_trim(text))


class _Pipeline:
    """What block streaming already delivered (the reduced model of the vectors)."""

    def __init__(self, pipeline: Mapping[str, Any]) -> None:
        self.did_stream = bool(pipeline.get("didStream"))
        self.aborted = bool(pipeline.get("isAborted"))
        records = (as_record(p) for p in as_list(pipeline.get("sentPayloads")) or [])
        sent = [p for p in records if p is not None]
        self.keys = {_content_key(p) for p in sent}
        self.streamed = "".join(js_trim(_str(p.get("text"))) for p in sent)
        media = as_list(pipeline.get("sentMediaUrls")) or []
        self.media: list[str] = [url for url in media if isinstance(url, str)]

    def has_sent(self, payload: Mapping[str, Any]) -> bool:
        if _content_key(payload) in self.keys:
            return True
        if not self.did_stream or not _has_text(payload) or outbound_media(payload):
            return False
        return _squash(self.streamed) == _squash(payload["text"])


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _squash(text: str) -> str:
    return "".join(js_trim(text).split())


def _drop_streamed_caption(payload: Payload, streamed: bool) -> Payload:
    if not streamed or not outbound_media(payload) or not _has_text(payload):
        return payload
    rest = {k: v for k, v in payload.items() if k != "text"}
    if not rest.get("audioAsVoice"):
        rest.pop("audioAsVoice", None)
    return rest


def _renderable(payload: Mapping[str, Any]) -> bool:
    if _has_text(payload) or outbound_media(payload) or payload.get("audioAsVoice"):
        return True
    return any(payload.get(key) for key in ("channelData", "presentation", "interactive"))


def finalize_after_block_streaming(
    *,
    payloads: Sequence[Payload],
    block_streaming_enabled: bool = False,
    pipeline: Mapping[str, Any] | None = None,
    directly_sent_block_payloads: Sequence[Payload] | None = None,
    normalize_map: Mapping[str, str] | None = None,
) -> list[Payload]:
    """Drop or trim final payloads whose content block streaming already delivered.

    Errors are always kept; text already streamed is not sent again; media already streamed is
    stripped from the finals; payloads with nothing left to render are dropped.
    """
    state = _Pipeline(pipeline or {})
    direct = list(directly_sent_block_payloads or [])
    direct_keys = {_content_key(p) for p in direct}
    drop_all = block_streaming_enabled and state.did_stream and not state.aborted
    kept: list[Payload] = []
    for payload in (dict(p) for p in payloads):
        sent = state.has_sent(payload) if block_streaming_enabled else False
        sent = sent or _content_key(payload) in direct_keys
        if payload.get("isError") and drop_all:
            kept.append(payload)
            continue
        if sent and not outbound_media(payload):
            continue
        caption = {"text": payload.get("text")} if _has_text(payload) else None
        streamed = caption is not None and (
            (block_streaming_enabled and state.has_sent(caption))
            or _content_key(caption) in direct_keys
        )
        kept.append(_drop_streamed_caption(payload, streamed))
    return _strip_sent_media(kept, state, direct, block_streaming_enabled, normalize_map)


def _strip_sent_media(
    payloads: list[Payload],
    state: _Pipeline,
    direct: list[Payload],
    streaming: bool,
    normalize_map: Mapping[str, str] | None,
) -> list[Payload]:
    sent = _clean_urls([*(state.media if streaming else []), *_flatten(direct)])
    mapped = [normalize_map[u] for u in sent if normalize_map and u in normalize_map]
    if sent:
        payloads = filter_messaging_tool_media_duplicates(
            payloads=payloads, sent_media_urls=_dedupe([*sent, *mapped])
        )
    return [payload for payload in payloads if _renderable(payload)]


def _flatten(payloads: list[Payload]) -> list[str]:
    return [url for payload in payloads for url in outbound_media(payload)]
