"""`clawcell demo` ends with an agent turn run by a `ScriptedModel`."""

from __future__ import annotations

import json

import pytest

from clawcell.cli._main import main


def test_the_demo_tour_ends_with_an_agent_turn_whose_reply_has_media_and_a_canvas(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    heading = "== An agent turn: a model writes a cell, the reply carries media and a canvas"
    tour = out.split(heading)
    assert len(tour) == 2
    turn, _, after = tour[1].partition("\n== What to try next\n")
    assert after  # the demo ends with what to try next
    lines = {line.split()[0]: line.split(None, 1)[1] for line in turn.strip().splitlines()}
    assert list(lines) == [
        "turn_started",
        "cell_started",
        "cell_output",
        "cell_finished",
        "text_delta",
        "reply",
        "turn_finished",
    ]
    finished = json.loads(lines["cell_finished"])
    assert finished["envelope"]["value"] == [
        {"id": "a-101", "eur": 145.25},
        {"id": "c-303", "eur": 300.88},
    ]
    reply = json.loads(lines["reply"])
    assert reply["payloads"][0]["mediaUrls"] == ["https://example.com/clawcell/quotes.png"]
    assert reply["content"][1]["preview"]["viewId"] == "cv_quotes"
    assert json.loads(lines["turn_finished"])["usage"]["toolCalls"] == 3
