"""Text deltas coalesced on the server: fewer, larger messages, in order, nothing lost."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from clawcell.ui._stream._coalesce import coalesce_deltas


def _delta(text: str) -> dict[str, Any]:
    return {"type": "text_delta", "turnId": "t", "text": text}


async def _collect(events: AsyncIterator[dict[str, Any]], **options: Any) -> list[dict[str, Any]]:
    return [event async for event in coalesce_deltas(events, **options)]


def test_deltas_that_arrive_together_become_one_message_and_other_events_keep_their_place() -> None:
    async def events() -> AsyncIterator[dict[str, Any]]:
        for word in ("one ", "two ", "three"):
            yield _delta(word)
        yield {"type": "cell_started", "callId": "c"}
        yield _delta("after")
        yield {"type": "reply", "text": "done"}

    out = asyncio.run(_collect(events(), interval=60.0))
    assert out == [
        {"type": "text_delta", "turnId": "t", "text": "one two three"},
        {"type": "cell_started", "callId": "c"},
        {"type": "text_delta", "turnId": "t", "text": "after"},
        {"type": "reply", "text": "done"},
    ]


def test_held_text_is_sent_when_the_interval_ends_even_if_the_model_pauses() -> None:
    async def scenario() -> list[str]:
        step, resume = asyncio.Event(), asyncio.Event()
        seen: list[str] = []

        async def events() -> AsyncIterator[dict[str, Any]]:
            yield _delta("a")
            await step.wait()
            yield _delta("b")  # right after "a" went out: held for the interval
            await resume.wait()  # the model pauses with "b" still held
            yield _delta("c")

        async with asyncio.timeout(30):
            async for event in coalesce_deltas(events(), interval=0.01):
                seen.append(event["text"])
                step.set()
                if seen == ["a", "b"]:
                    resume.set()  # "b" was flushed by the timer while the model waited
        return seen

    assert asyncio.run(scenario()) == ["a", "b", "c"]


def test_a_large_burst_is_split_at_the_size_limit() -> None:
    async def events() -> AsyncIterator[dict[str, Any]]:
        for _ in range(10):
            yield _delta("x" * 10)

    out = asyncio.run(_collect(events(), interval=60.0, max_chars=30))
    assert "".join(e["text"] for e in out) == "x" * 100
    assert all(len(e["text"]) <= 40 for e in out) and len(out) > 2


def test_an_error_of_the_source_is_raised_after_the_text_before_it() -> None:
    async def events() -> AsyncIterator[dict[str, Any]]:
        yield _delta("partial")
        raise RuntimeError("model broke")

    async def run() -> list[str]:
        seen: list[str] = []
        with pytest.raises(RuntimeError, match="model broke"):
            async for event in coalesce_deltas(events(), interval=60.0):
                seen.append(event["text"])
        return seen

    assert asyncio.run(run()) == ["partial"]


def test_closing_the_stream_closes_the_source() -> None:
    closed = asyncio.Event()

    async def events() -> AsyncIterator[dict[str, Any]]:
        try:
            yield _delta("a")
            await asyncio.Event().wait()  # a cell that never ends
            yield _delta("never")
        finally:
            closed.set()

    async def run() -> bool:
        stream = coalesce_deltas(events())
        assert (await anext(stream))["text"] == "a"
        await stream.aclose()
        return closed.is_set()

    assert asyncio.run(run())
