"""`CodeMode`, the face (`_codemode.py`): its options and what the model reads of it: the
`exec` description, telemetry in the model text. The stages have tests of their own, filed by
stage in `tests/cell/`, `tests/runs/` and `tests/source/`."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest

from clawcell import CodeMode, ConfigurationError, render
from tests.conftest import echo_tool, with_mode


def test_code_mode_configuration_mistakes_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"^`tools` must be an iterable"):
        CodeMode(cast(Any, 5))
    with pytest.raises(ConfigurationError, match=r"^`limits` must be a `clawcell.Limits`"):
        CodeMode(limits=cast(Any, 5))
    with pytest.raises(ConfigurationError, match=r"^`session_id` must be a non-empty string"):
        CodeMode(session_id="")
    with pytest.raises(ConfigurationError, match=r"^`store` must be a session store"):
        CodeMode(store=cast(Any, "state.db"))


def test_code_mode_takes_a_single_tool_no_tools_or_a_settings_mapping() -> None:
    assert CodeMode(echo_tool()).catalog.telemetry()["catalogSize"] == 1
    assert CodeMode(None).catalog.telemetry()["catalogSize"] == 0
    assert CodeMode(limits={"timeoutMs": 500}).limits.timeout_ms == 500


def test_the_exec_description_says_the_guest_api_returns_promises() -> None:
    description = CodeMode([echo_tool()]).model_tools()[0]["description"]
    assert (
        "Tool calls, `catalog.search`, `describe()`, `results.*` and `API.*` all return "
        "Promises: `await` them before using the value" in description
    )


def test_telemetry_can_be_left_out_of_the_model_text_but_stays_in_the_envelope() -> None:
    async def body(mode: CodeMode) -> tuple[dict[str, Any], str]:
        envelope = await mode.exec("return 1;")
        return envelope, mode.render(envelope)

    envelope, text = with_mode(body, telemetry_in_text=False)
    assert "telemetry" in envelope
    assert text == '{"status":"completed","replaySafe":false,"output":[],"value":1}'
    assert render(envelope, telemetry=False) == text
    assert json.loads(render(envelope)) == envelope  # the default text is the whole envelope


def test_telemetry_is_in_the_model_text_by_default() -> None:
    async def body(mode: CodeMode) -> str:
        return mode.render(await mode.exec("return 1;"))

    assert '"telemetry":{"catalogSize":1' in with_mode(body)
