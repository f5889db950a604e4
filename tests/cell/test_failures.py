"""The words of a cell QuickJS could not parse: acorn's, else the engine's (the release's text)."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import CodeMode, Limits
from clawcell._cell._failures import format_syntax_error, syntax_error_message
from clawcell.runtime import EngineFailure
from tests.conftest import FAST, exec_one, failure, with_mode


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (
            "'import' and 'export' may only appear at the top level",
            "SyntaxError at openclaw-code-mode:user.js:1:1: 'import' and 'export' may only "
            "appear at the top level. No tools were dispatched; correct the JavaScript source "
            "and submit it again.",
        ),
        (
            "unexpected token.",
            "SyntaxError at openclaw-code-mode:user.js:2:7: unexpected token. No tools were "
            "dispatched; correct the JavaScript source and submit it again.",
        ),
    ],
)
def test_syntax_errors_use_the_release_text_with_one_period(message: str, text: str) -> None:
    line, column = (1, 1) if message.startswith("'") else (2, 7)
    assert format_syntax_error(message, line, column) == text


def test_a_syntax_error_only_quickjs_sees_keeps_quickjs_words() -> None:
    # Acorn accepts this source, so the message is the engine's, at its user-file frame.
    stack = "    at <anonymous> (openclaw-code-mode:user.js:3:5)\n"
    assert syntax_error_message(_unparsed("SyntaxError: engine says no", stack), "a;\nb;\nc;") == (
        "SyntaxError at openclaw-code-mode:user.js:2:5: engine says no. No tools were "
        "dispatched; correct the JavaScript source and submit it again."
    )


def test_a_syntax_error_acorn_sees_takes_acorns_words_and_position() -> None:
    stack = "    at <anonymous> (openclaw-code-mode:user.js:2:9)\n"
    message = syntax_error_message(
        _unparsed("SyntaxError: variable name expected", stack), "const = 1"
    )
    assert message.startswith("SyntaxError at openclaw-code-mode:user.js:1:7: Unexpected token.")


def _unparsed(message: str, stack: str) -> EngineFailure:
    return EngineFailure(kind="syntax_error", message=message, stack=stack)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param(
            "const x = 1;\nthrow new TypeError('bad');",
            (
                "internal_error",
                "guest",
                "TypeError: bad\n    at <anonymous> (openclaw-code-mode:user.js:2:11)\n",
                False,
            ),
            id="uncaught_error_reports_the_user_line",
        ),
        pytest.param(
            "const x = 1;\nlet = = 2;",
            (
                "invalid_input",
                "input",
                "SyntaxError at openclaw-code-mode:user.js:2:7: Unexpected token. No tools were "
                "dispatched; correct the JavaScript source and submit it again.",
                False,
            ),
            id="syntax_error",
        ),
        pytest.param(
            "Promise.reject(new Error('late'));\nreturn 1;",
            (
                "internal_error",
                "guest",
                "Error: late\n    at <anonymous> (openclaw-code-mode:user.js:1:20)\n",
                False,
            ),
            id="unhandled_rejection",
        ),
        pytest.param(
            "await new Promise(() => {});",
            ("internal_error", "guest", "code mode promise is pending without host work", False),
            id="pending_without_host_work",
        ),
        pytest.param(
            "while (true) {}",
            ("timeout", "guest", "code mode timeout exceeded", False),
            id="timeout",
        ),
        pytest.param(
            "ls -la",
            (
                "invalid_input",
                "input",
                "code-mode exec runs JavaScript, not shell commands. Call an "
                "enabled async tool global from guest JavaScript; use catalog.search(query) "
                "when the bounded quick index omits it. Do not retry the same shell command "
                "as code.",
                False,
            ),
            id="shell_source",
        ),
    ],
)
def test_failures_carry_their_code_phase_and_message(
    code: str, expected: tuple[str, str, str, bool]
) -> None:
    assert failure(exec_one(code, limits=FAST)) == expected


@pytest.mark.parametrize(
    ("lines", "megabytes"),
    [(3_000, 1), (30_000, 2)],
    ids=["its_error_built", "too_short_to_build_its_error"],
)
def test_a_parse_that_runs_out_of_memory_says_so_and_what_to_do(lines: int, megabytes: int) -> None:
    """A source too large for the heap to parse was refused as a syntax error at 1:1, worded
    with QuickJS's out-of-memory text, or with `null` when memory was too short to build even
    that. It is the guest running out of memory, and the next cell runs."""
    from clawcell._cell._failures import PARSE_MEMORY_MESSAGE

    source = "".join(f"let v{i} = [{i}, 'a{i}'];\n" for i in range(lines)) + "return 1;"

    async def body(mode: CodeMode) -> list[dict[str, Any]]:
        return [await mode.exec(source), await mode.exec("return 5;")]

    limits = Limits(timeout_ms=60_000, memory_limit_bytes=megabytes * 1024 * 1024)
    refused, after = with_mode(body, limits=limits)
    assert failure(refused) == ("internal_error", "guest", PARSE_MEMORY_MESSAGE, False)
    assert PARSE_MEMORY_MESSAGE.startswith("InternalError: out of memory while parsing the cell")
    assert after["value"] == 5
