"""YouTube cards: which `[embed url=…]` URLs are a video, its id and start, and the only URLs
a card may load (recorded as vectors in `data/youtube_urls.json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawcell.reply import YouTubeCard, youtube_card

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "youtube_urls.json").read_text("utf-8")
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_a_url_is_a_card_only_when_it_names_a_youtube_video(case: dict[str, Any]) -> None:
    card = youtube_card(case["url"])
    if case["videoId"] is None:
        assert card is None
    else:
        assert card == YouTubeCard(video_id=case["videoId"], start=case["start"])


def test_the_card_loads_the_thumbnail_and_the_privacy_enhanced_player_only() -> None:
    card = youtube_card("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1m5s&list=PL1")
    assert card is not None
    assert card.thumbnail_url == "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg"
    assert (
        card.player_url == "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?autoplay=1&start=65"
    )
    assert card.watch_url == "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=65s"


def test_a_card_without_a_start_has_no_start_parameter() -> None:
    card = youtube_card("https://youtu.be/dQw4w9WgXcQ")
    assert card is not None
    assert card.player_url == "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?autoplay=1"
    assert card.watch_url == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"


@given(st.text(max_size=200))
def test_any_text_gives_a_card_whose_urls_carry_only_a_plain_id(text: str) -> None:
    card = youtube_card(text)
    if card is not None:
        assert len(card.video_id) == 11
        assert all(c.isascii() and (c.isalnum() or c in "-_") for c in card.video_id)
        assert card.thumbnail_url.startswith("https://i.ytimg.com/vi/")


@given(st.text(alphabet="-_0123456789abcdefABCDEF", min_size=11, max_size=11))
def test_every_well_formed_id_round_trips_through_each_url_shape(video_id: str) -> None:
    shapes = [
        f"https://www.youtube.com/watch?v={video_id}",
        f"https://youtu.be/{video_id}",
        f"https://www.youtube.com/shorts/{video_id}",
        f"https://www.youtube-nocookie.com/embed/{video_id}",
    ]
    assert {youtube_card(url) for url in shapes} == {YouTubeCard(video_id=video_id)}
