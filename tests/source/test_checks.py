"""Source checks that answer an `exec` call before any engine runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import clawcell._source._tokenizer as tokenizer_module
from clawcell._source._checks import (
    MODULE_ACCESS_MESSAGE,
    SHELL_SOURCE_MESSAGE,
    SourceProblem,
    check_source,
)
from tests.source._corpus import javascript_cells


def _case(case_id: str) -> dict[str, Any]:
    path = Path(__file__).resolve().parents[1] / "conformance" / "code_mode" / "cases.json"
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return next(case for case in cases if case["id"] == case_id)


@pytest.mark.parametrize("cell", javascript_cells())
def test_real_javascript_passes_the_source_checks(cell: str) -> None:
    assert check_source(cell) is None


def test_a_shell_command_is_refused_with_the_recorded_release_message() -> None:
    # Which sources look like shell is `_shell_detection`'s (tests/source/test_shell_detection.py).
    case = _case("fail/shell-ls")
    assert case["steps"][0]["code"] == "ls -la"
    assert case["expected"][0]["error"] == SHELL_SOURCE_MESSAGE
    assert check_source("ls -la") == SourceProblem(kind="shell", message=SHELL_SOURCE_MESSAGE)


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

    monkeypatch.setattr(tokenizer_module, "tokenize", refuse)  # (`check_source` imports it)
    assert check_source(code) is None


def test_the_tokenizer_still_reads_source_that_names_require() -> None:
    assert check_source("const r = (0, require)('fs'); return 1;") == SourceProblem(
        kind="module_access", message=MODULE_ACCESS_MESSAGE
    )
