"""Recorded catalog conformance cases (copied from ../shared/conformance)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clawcell import Tool
from tests.conformance.dsl import build_tools

DATA = Path(__file__).parent / "data" / "catalog_cases.json"
CASES: dict[str, dict[str, Any]] = {case["id"]: case for case in json.loads(DATA.read_text())}


def case_tools(case_id: str) -> list[Tool]:
    """The tools of one recorded case (each call gets its own probe counters)."""
    return build_tools(CASES[case_id]["tools"])


def expected_value(case_id: str, step: int = 0) -> Any:
    """The recorded guest value of one step."""
    return CASES[case_id]["expected"][step]["value"]
