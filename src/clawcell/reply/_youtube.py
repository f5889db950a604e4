"""YouTube cards: an `[embed url=…]` that names a YouTube video becomes a card, not a frame.

The Control UI shows such an embed as the video's thumbnail and a Play button; only Play loads
the player, from `www.youtube-nocookie.com`, and `allowExternalEmbedUrls` does not apply (the
card itself loads nothing from YouTube but the thumbnail from `i.ytimg.com`). This module
decides which URLs are YouTube videos and what the card needs; it fetches nothing.

Threat model: the URL is attacker-influenced. Only `http(s)` URLs on YouTube's own hosts
(`youtube.com` and its `www.`/`m.`/`music.` names, `youtu.be`, `youtube-nocookie.com`) with no
userinfo and the default port count; look-alike hosts (`youtube.com.example`, `evilyoutube.com`)
do not, and neither do `javascript:`, `data:` or protocol-relative URLs. The video id must be
YouTube's 11 characters of `[A-Za-z0-9_-]`, so nothing else reaches the URLs built from it.
Every other query parameter is dropped; a start time (`start`, `t`, or `#t=`, in seconds or as
`1h2m3s`) is kept as whole seconds. URLs are parsed with the same WHATWG parser as the media
policy (`ada-url`).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import parse_qs

from .._lazy import value_class
from ._urls import parse_whatwg_url

__all__ = ["YouTubeCard", "youtube_card"]

_HOSTS: Final = frozenset({"youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com"})
_SHORT_HOST: Final = "youtu.be"
_NOCOOKIE_HOSTS: Final = frozenset({"youtube-nocookie.com", "www.youtube-nocookie.com"})
_VIDEO_ID: Final = re.compile(r"[A-Za-z0-9_-]{11}")
_PATH_KINDS: Final = ("shorts", "live", "embed", "v")
_DURATION: Final = re.compile(r"(?:(\d{1,5})h)?(?:(\d{1,5})m)?(?:(\d{1,7})s?)?")
_MAX_START: Final = 7 * 24 * 3600  # a week: longer than any video YouTube serves


@value_class
class YouTubeCard:
    """What the Control UI needs to show a YouTube video as a card.

    Attributes:
        video_id: YouTube's 11-character id.
        start: Where to start, in whole seconds (`None`: from the beginning).
    """

    video_id: str
    start: int | None = None

    @property
    def thumbnail_url(self) -> str:
        """The video's thumbnail on YouTube's image host."""
        return f"https://i.ytimg.com/vi/{self.video_id}/hqdefault.jpg"

    @property
    def player_url(self) -> str:
        """The privacy-enhanced player, loaded only when the user presses Play."""
        query = f"?autoplay=1&start={self.start}" if self.start else "?autoplay=1"
        return f"https://www.youtube-nocookie.com/embed/{self.video_id}{query}"

    @property
    def watch_url(self) -> str:
        """The video's page on YouTube (what `strict` shows, as a link)."""
        start = f"&t={self.start}s" if self.start else ""
        return f"https://www.youtube.com/watch?v={self.video_id}{start}"


def youtube_card(url: str) -> YouTubeCard | None:
    """The card for `url` when it names a YouTube video (watch, `youtu.be`, `shorts`, `live`,
    `embed` or `youtube-nocookie.com/embed`), else `None`."""
    parsed = parse_whatwg_url(url.strip())
    if parsed is None or parsed.protocol not in ("https:", "http:"):
        return None
    if parsed.username or parsed.password or parsed.port:
        return None
    host = parsed.hostname.lower()
    segments = [s for s in parsed.pathname.split("/") if s]
    query = parse_qs(parsed.search.removeprefix("?"), keep_blank_values=True)
    video_id = _video_id(host, segments, query)
    if video_id is None:
        return None
    fragment = parse_qs(parsed.hash.removeprefix("#"), keep_blank_values=True)
    return YouTubeCard(video_id=video_id, start=_start(query, fragment))


def _video_id(host: str, segments: list[str], query: dict[str, list[str]]) -> str | None:
    if host == _SHORT_HOST:
        candidate = segments[0] if len(segments) == 1 else None
    elif host in _NOCOOKIE_HOSTS:
        candidate = segments[1] if len(segments) == 2 and segments[0] == "embed" else None
    elif host not in _HOSTS:
        candidate = None
    elif segments == ["watch"]:
        values = query.get("v", [])
        candidate = values[0] if len(values) == 1 else None
    elif len(segments) == 2 and segments[0] in _PATH_KINDS:
        candidate = segments[1]
    else:
        candidate = None
    return candidate if candidate is not None and _VIDEO_ID.fullmatch(candidate) else None


def _start(query: dict[str, list[str]], fragment: dict[str, list[str]]) -> int | None:
    for source, key in ((query, "start"), (query, "t"), (fragment, "t")):
        values = source.get(key)
        if values:
            return _seconds(values[0])
    return None


def _seconds(text: str) -> int | None:
    match = _DURATION.fullmatch(text.strip())
    if match is None or not any(match.groups()):
        return None
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    return total if 0 < total <= _MAX_START else None
