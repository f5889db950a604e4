"""`make test` runs every test marked `isolated`: the parallel run deselects them, and the
isolated run collects only the files the Makefile names in `ISOLATED_TESTS` (collecting the
whole suite to pick 25 tests would take longer than running them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _named_in_makefile() -> set[str]:
    makefile = (ROOT / "Makefile").read_text("utf-8")
    found = re.search(r"^ISOLATED_TESTS\s*:?=\s*(.*?)(?<!\\)\n", makefile, re.M | re.S)
    assert found is not None, "the Makefile defines ISOLATED_TESTS"
    return set(found.group(1).replace("\\\n", " ").split())


def _using_the_marker() -> set[str]:
    return {
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if re.search(r"\bmark\.isolated\b", path.read_text("utf-8"))
        and path.name != Path(__file__).name
    }


def test_the_makefile_runs_every_file_with_isolated_tests() -> None:
    assert _named_in_makefile() == _using_the_marker()


def test_the_isolated_tests_are_found() -> None:
    assert "tests/reply/test_linearity.py" in _using_the_marker()
