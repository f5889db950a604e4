"""Source checks and argument readers that answer an `exec`/`wait` call before any engine runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawcell._source._checks as checks_module
from clawcell._source._checks import (
    LANGUAGE_MESSAGE,
    MODULE_ACCESS_MESSAGE,
    SHELL_SOURCE_MESSAGE,
    ExecArgs,
    SourceProblem,
    check_source,
    format_syntax_error,
    read_exec_args,
    read_wait_args,
    syntax_error_message,
)
from clawcell.errors import InputError

CORPUS = Path(__file__).parents[1] / "data" / "js_corpus"


def _javascript_cells() -> list[str]:
    chunks = CORPUS.joinpath("javascript.js").read_text(encoding="utf-8").split("\n//----\n")
    return [chunk.strip("\n") for chunk in chunks[1:]]  # the first chunk is the file header


def _shell_commands() -> list[str]:
    lines = CORPUS.joinpath("shell.txt").read_text(encoding="utf-8").splitlines()
    return [line.replace("\\n", "\n") for line in lines if line]


def _case(case_id: str) -> dict[str, Any]:
    path = Path(__file__).resolve().parents[1] / "conformance" / "code_mode" / "cases.json"
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return next(case for case in cases if case["id"] == case_id)


def test_the_corpora_are_large_enough() -> None:
    assert len(_javascript_cells()) >= 60
    assert len(_shell_commands()) >= 40


@pytest.mark.parametrize("cell", _javascript_cells())
def test_real_javascript_passes_the_source_checks(cell: str) -> None:
    assert check_source(cell) is None


@pytest.mark.parametrize("command", _shell_commands())
def test_shell_commands_are_refused_with_the_release_message(command: str) -> None:
    problem = check_source(command)
    assert problem is not None
    assert (problem.kind, problem.message) == ("shell", SHELL_SOURCE_MESSAGE)


def test_the_shell_message_is_the_recorded_one() -> None:
    case = _case("fail/shell-ls")
    assert case["steps"][0]["code"] == "ls -la"
    assert case["expected"][0]["error"] == SHELL_SOURCE_MESSAGE


@pytest.mark.parametrize(
    "code",
    [
        'const fs = require("fs");',
        "require('child_process').execSync('ls')",
        'const m = await import("node:fs");',
        "await import ('x')",
        "return import.meta.url;",
        "return import . meta;",
        '(require)("fs")',
        '(0, require)("fs")',
        '((require))("fs")',
        'require?.("fs")',
        'return `${require("os").platform()}`;',
        "const run = () => require(name);",
    ],
)
def test_module_access_is_refused(code: str) -> None:
    problem = check_source(code)
    assert problem is not None
    assert (problem.kind, problem.message) == ("module_access", MODULE_ACCESS_MESSAGE)


@pytest.mark.parametrize(
    "code",
    [
        'import fs from "fs";',
        'import { readFile } from "fs";\nreturn 1;',
        'import * as os from "os";',
        "export const x = 1;",
    ],
)
def test_static_import_and_export_are_left_to_the_parser(code: str) -> None:
    assert check_source(code) is None


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


def test_exec_args_read_code_title_and_restart_safe() -> None:
    args = read_exec_args({"code": "return 1", "title": "Inspect", "restartSafe": True})
    assert args == ExecArgs(code="return 1", title="Inspect", restart_safe=True)
    assert read_exec_args({"command": "return 2"}) == ExecArgs(code="return 2")
    assert read_exec_args({"code": "x", "command": "x"}) == ExecArgs(code="x")
    assert read_exec_args({"code": "x", "command": "   "}) == ExecArgs(code="x")


@pytest.mark.parametrize(
    "args", [{}, {"code": ""}, {"code": "  \n\t"}, {"code": 5}, {"command": ""}]
)
def test_empty_code_rejects_the_call_itself(args: dict[str, Any]) -> None:
    with pytest.raises(InputError) as caught:
        read_exec_args(args)
    assert caught.value.message == "code or command must be a non-empty string."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"code": "a", "command": "b"}, "code and command must match when both are provided."),
        ({"code": "a", "language": "typescript"}, LANGUAGE_MESSAGE),
        ({"code": "a", "typecheck": False}, LANGUAGE_MESSAGE),
        ({"code": "a", "restartSafe": "yes"}, "restartSafe must be a boolean."),
        ({"code": "a", "restartSafe": None}, "restartSafe must be a boolean."),
        ({"code": "a", "title": 7}, "title must be a string of at most 120 characters."),
        ({"code": "a", "title": "t" * 121}, "title must be a string of at most 120 characters."),
    ],
)
def test_other_argument_problems_are_returned_for_a_failed_envelope(
    args: dict[str, Any], message: str
) -> None:
    assert read_exec_args(args) == message


def test_a_title_of_120_characters_is_accepted() -> None:
    assert read_exec_args({"code": "a", "title": "é" * 120}) == ExecArgs(code="a", title="é" * 120)


def test_wait_reads_a_trimmed_run_id_under_either_name() -> None:
    assert read_wait_args({"runId": "  cm_1 "}) == "cm_1"
    assert read_wait_args({"run_id": "cm_2"}) == "cm_2"


@pytest.mark.parametrize("args", [{}, {"runId": ""}, {"runId": "   "}, {"runId": 3}])
def test_a_blank_run_id_rejects_the_wait(args: dict[str, Any]) -> None:
    with pytest.raises(InputError) as caught:
        read_wait_args(args)
    assert caught.value.message == "runId must be a non-empty string."


def test_a_syntax_error_only_quickjs_sees_keeps_quickjs_words() -> None:
    # Acorn accepts this source, so the message is the engine's, at its user-file frame.
    stack = "    at <anonymous> (openclaw-code-mode:user.js:3:5)\n"
    assert syntax_error_message("SyntaxError: engine says no", stack, "a;\nb;\nc;") == (
        "SyntaxError at openclaw-code-mode:user.js:2:5: engine says no. No tools were "
        "dispatched; correct the JavaScript source and submit it again."
    )


def test_a_syntax_error_acorn_sees_takes_acorns_words_and_position() -> None:
    stack = "    at <anonymous> (openclaw-code-mode:user.js:2:9)\n"
    message = syntax_error_message("SyntaxError: variable name expected", stack, "const = 1")
    assert message.startswith("SyntaxError at openclaw-code-mode:user.js:1:7: Unexpected token.")


@pytest.mark.parametrize(
    "code",
    [
        "const s = await add({ a: 2, b: 3 });\nreturn s.sum;",
        "return 'no module words here';",
        "const text = `${1 + 2} imp` + 'ort'; return text;",
    ],
)
def test_source_without_import_or_require_is_never_tokenized(
    code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(source: str) -> object:
        raise AssertionError(f"tokenized {source!r}")

    monkeypatch.setattr(checks_module, "tokenize", refuse)
    assert check_source(code) is None


def test_the_tokenizer_still_reads_source_that_names_require() -> None:
    assert check_source("const r = (0, require)('fs'); return 1;") == SourceProblem(
        kind="module_access", message=MODULE_ACCESS_MESSAGE
    )
