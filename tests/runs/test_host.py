"""The host parts runs share (`_runs/_host.py`): envelopes fitted to a model's context, the
guest thread, and guests shared between runtimes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import ClawcellError, CodeMode, render
from tests.conftest import echo_tool, exec_one, run


def test_envelopes_are_fitted_to_a_stated_model_context() -> None:
    envelope = exec_one("return 'x'.repeat(5000);", model_context_tokens=1000)
    assert envelope["status"] == "completed"
    assert envelope["value"]["truncated"] is True
    assert len(render(envelope)) <= 512  # 2 * chars must fit max(1024, 1000)


def test_a_model_context_too_small_for_the_status_is_an_error() -> None:
    with pytest.raises(ClawcellError) as caught:
        exec_one("return 1;", model_context_tokens=1)
    assert caught.value.message == (
        "Model tool-result budget cannot fit Code Mode status; use a larger model context."
    )


def test_the_guest_can_run_on_the_loop_thread_for_latency() -> None:
    async def main() -> Any:
        async with CodeMode([echo_tool()], guest_thread=False) as mode:
            return (await mode.exec("return (await echo({ a: 1 })).a + 1"))["value"]

    assert run(main()) == 2


def test_a_guest_shared_between_runtimes_keeps_nothing_of_the_previous_one() -> None:
    async def main() -> list[Any]:
        async with CodeMode() as first:
            await first.exec("globalThis.secret = 'from the first runtime'; return 1")
        async with CodeMode() as second:
            seen = await second.exec("return typeof globalThis.secret")
        return [seen["status"], seen["value"]]

    assert asyncio.run(main()) == ["completed", "undefined"]
