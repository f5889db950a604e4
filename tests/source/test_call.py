"""The arguments of an `exec`/`wait` call, read into `ExecArgs` at the edge and judged once."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import CodeMode, InputError
from clawcell._source._call import LANGUAGE_MESSAGE, ExecArgs, read_exec_args, read_wait_args
from tests.conftest import failure, with_mode

TITLE_MESSAGE = "title must be a string of at most 120 characters."


def test_exec_args_read_code_title_and_restart_safe() -> None:
    args = read_exec_args({"code": "return 1", "title": "Inspect", "restartSafe": True})
    assert args == ExecArgs(code="return 1", title="Inspect", restart_safe=True)
    assert read_exec_args({"command": "return 2"}) == ExecArgs(code="return 2")
    assert read_exec_args({"code": "x", "command": "x"}) == ExecArgs(code="x")
    assert read_exec_args({"code": "x", "command": "   "}) == ExecArgs(code="x")
    assert args.problem() is None


@pytest.mark.parametrize(
    "args", [{}, {"code": ""}, {"code": "  \n\t"}, {"code": 5}, {"command": ""}]
)
def test_empty_code_rejects_the_call_itself(args: dict[str, Any]) -> None:
    parsed = read_exec_args(args)
    with pytest.raises(InputError) as caught:
        parsed.problem()
    assert caught.value.message == "code or command must be a non-empty string."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"code": "a", "command": "b"}, "code and command must match when both are provided."),
        ({"code": "a", "language": "typescript"}, LANGUAGE_MESSAGE),
        ({"code": "a", "typecheck": False}, LANGUAGE_MESSAGE),
        ({"code": "a", "restartSafe": "yes"}, "restartSafe must be a boolean."),
        ({"code": "a", "restartSafe": None}, "restartSafe must be a boolean."),
        ({"code": "a", "title": 7}, TITLE_MESSAGE),
        ({"code": "a", "title": "t" * 121}, TITLE_MESSAGE),
        # Two problems at once: the first in the release's order is the one reported.
        ({"code": "a", "language": "ts", "restartSafe": 1}, LANGUAGE_MESSAGE),
        ({"code": "a", "restartSafe": 1, "title": 7}, "restartSafe must be a boolean."),
    ],
)
def test_other_argument_problems_are_returned_for_a_failed_envelope(
    args: dict[str, Any], message: str
) -> None:
    assert read_exec_args(args).problem() == message


def test_a_refusal_outranks_blank_code_only_when_code_was_given() -> None:
    # `code` and `command` that differ are both non-blank: the refusal is a message. A blank
    # call with a `language` is blank first: the call itself is rejected.
    assert read_exec_args({"code": "a", "command": "b"}).refused is not None
    with pytest.raises(InputError):
        read_exec_args({"code": " ", "language": "ts"}).problem()


def test_a_title_of_120_characters_is_accepted() -> None:
    args = read_exec_args({"code": "a", "title": "é" * 120})
    assert args == ExecArgs(code="a", title="é" * 120)
    assert args.problem() is None


def test_wait_reads_a_trimmed_run_id_under_either_name() -> None:
    assert read_wait_args({"runId": "  cm_1 "}) == "cm_1"
    assert read_wait_args({"run_id": "cm_2"}) == "cm_2"


@pytest.mark.parametrize("args", [{}, {"runId": ""}, {"runId": "   "}, {"runId": 3}])
def test_a_blank_run_id_rejects_the_wait(args: dict[str, Any]) -> None:
    with pytest.raises(InputError) as caught:
        read_wait_args(args)
    assert caught.value.message == "runId must be a non-empty string."


@pytest.mark.parametrize(
    ("code", "title"),
    [("return 1", None), ("return 2", "Two"), ("return 3", "t" * 121), ("return 4", 7)],
    ids=["plain", "titled", "long-title", "title-not-a-string"],
)
def test_the_typed_exec_and_a_models_call_are_judged_alike(code: str, title: Any) -> None:
    async def body(mode: CodeMode) -> tuple[dict[str, Any], dict[str, Any]]:
        typed = await mode.exec(code, title=title)
        call = {"code": code} if title is None else {"code": code, "title": title}
        return typed, await mode.call_tool("exec", call)

    typed, called = with_mode(body)
    assert typed["status"] == called["status"]
    if typed["status"] == "failed":
        assert failure(typed) == failure(called) == ("invalid_input", "input", TITLE_MESSAGE, False)
    else:
        assert typed["value"] == called["value"] == int(code.split()[1])


def test_a_blank_typed_exec_is_rejected_like_a_blank_call() -> None:
    async def body(mode: CodeMode) -> list[str]:
        messages: list[str] = []
        for attempt in (mode.exec("  "), mode.call_tool("exec", {"code": "  "})):
            with pytest.raises(InputError) as caught:
                await attempt
            messages.append(caught.value.message)
        return messages

    assert with_mode(body) == ["code or command must be a non-empty string."] * 2


def test_rejected_calls_raise_input_error_with_the_protocol_message() -> None:
    async def body(mode: CodeMode) -> list[str]:
        messages: list[str] = []
        for name, args in [
            ("exec", {"code": "  "}),
            ("wait", {"runId": ""}),
            ("wait", {"runId": "cm_nope"}),
            ("nope", {}),
        ]:
            with pytest.raises(InputError) as caught:
                await mode.call_tool(name, args)
            assert caught.value.code == "invalid_input"
            messages.append(caught.value.message)
        return messages

    assert with_mode(body) == [
        "code or command must be a non-empty string.",
        "runId must be a non-empty string.",
        "code mode run is unavailable or expired.",
        "unknown Code Mode tool 'nope'; the tools are `exec` and `wait`.",
    ]


def test_a_title_longer_than_120_characters_is_a_failed_envelope() -> None:
    async def body(mode: CodeMode) -> tuple[dict[str, Any], dict[str, Any]]:
        long = await mode.call_tool("exec", {"code": "return 1", "title": "t" * 121})
        ok = await mode.call_tool("exec", {"code": "return 1", "title": "t" * 120})
        return long, ok

    long, ok = with_mode(body)
    assert failure(long)[:2] == ("invalid_input", "input")
    assert ok["value"] == 1


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param('{"code": "return 2"}', 2, id="json_text_of_an_object"),
        pytest.param({"code": "return 3"}, 3, id="mapping"),
    ],
)
def test_call_tool_accepts_an_argument_object_or_its_json_text(
    arguments: Any, expected: int
) -> None:
    async def body(mode: CodeMode) -> Any:
        return (await mode.call_tool("exec", arguments))["value"]

    assert with_mode(body) == expected


@pytest.mark.parametrize("arguments", ["not json", "[1, 2]", None, 5, ["code"]])
def test_call_tool_rejects_arguments_that_are_not_an_object(arguments: Any) -> None:
    async def body(mode: CodeMode) -> None:
        await mode.call_tool("exec", arguments)

    with pytest.raises(InputError, match=r"^exec arguments must be a JSON object such as"):
        with_mode(body)
