"""Vectors recorded from the original (OpenClaw, see each file's `oracle`), replayed on clawcell.

`scripts/oracle/record_rich_output.py` generated the inputs around every rule of the rich-output
spec and recorded the original's outcome into `recorded/*.json`; no oracle is needed here. Each
vector must give exactly the recorded outcome (a recorded exception means clawcell raises
`TypeError`), except the deliberate divergences in `recorded/divergences.json`, where the
original's answer stays recorded and clawcell's own answer is asserted instead (the reasons are
in `docs/divergences.md`).

One test per recording file: its thousands of vectors are pure function calls, each far
cheaper than a pytest item (collecting them one by one cost more than running them). A failing
file lists every vector that differs, by id, with the arguments, the expected and the actual
outcome and a diff of the two; `outcome_of(vector_by_id(ID))` replays one vector by itself.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import Any, cast

import pytest

from .test_conformance import ADAPTERS

Json = Any
_DATA = Path(__file__).parent / "recorded"
_UNDEFINED = {"$undefined": True}


def _load(name: str) -> Json:
    return json.loads((_DATA / name).read_text(encoding="utf-8"))


def python_value(value: Json) -> Json:
    """JS → Python: `undefined` arguments become `None`, undefined object entries are absent."""
    if value == _UNDEFINED:
        return None
    if isinstance(value, dict):
        items = cast(dict[str, Json], value).items()
        return {k: python_value(v) for k, v in items if v != _UNDEFINED}
    if isinstance(value, list):
        return [python_value(v) for v in cast(list[Json], value)]
    return value


def _vectors(name: str) -> list[Json]:
    """A recording's vectors; corpus texts are stored once and named by `{"$input": index}`."""
    document = _load(name)
    inputs: list[str] = document.get("inputs", [])
    vectors: list[Json] = document["vectors"]
    for vector in vectors:
        first = vector["args"][0]
        if isinstance(first, dict) and "$input" in first:
            vector["args"][0] = inputs[cast(dict[str, int], first)["$input"]]
    return vectors


GROUPS = sorted(path.name for path in _DATA.glob("*.json") if path.name != "divergences.json")
VECTORS: list[Json] = [vector for name in GROUPS for vector in _vectors(name)]
DIVERGENCES: dict[str, Json] = _load("divergences.json")["vectors"]


def expected_of(vector: Json) -> Json:
    divergence = DIVERGENCES.get(vector["id"])
    if divergence is not None:
        return divergence["clawcell"]
    outcome = vector["outcome"]
    if not outcome["ok"]:
        return {"raises": "TypeError"}
    if "sha256" in outcome:
        return {"sha256": outcome["sha256"]}
    return python_value(outcome["result"])


def _actual(vector: Json) -> Json:
    adapter = ADAPTERS[vector["fn"]]
    try:
        value = adapter(python_value(vector["args"]), vector)
    except TypeError:
        return {"raises": "TypeError"}
    to_dict = getattr(value, "to_dict", None)
    return json.loads(json.dumps(to_dict() if callable(to_dict) else value))


def test_the_recordings_hold_thousands_of_vectors_from_one_oracle_version() -> None:
    versions = {json.dumps(_load(name)["oracle"]["openclawVersion"]) for name in GROUPS}
    assert versions == {'"2026.9.6"'}
    assert len(VECTORS) >= 5000
    assert len({vector["id"] for vector in VECTORS}) == len(VECTORS)


def test_every_divergence_names_a_recorded_vector_and_a_reason() -> None:
    ids = {vector["id"] for vector in VECTORS}
    assert set(DIVERGENCES) <= ids
    assert all(entry["reason"] for entry in DIVERGENCES.values())


def digest(value: Json) -> str:
    """SHA-256 of a JSON value's canonical text (as `record_rich_output.digest` writes it)."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def outcome_of(vector: Json) -> Json:
    """clawcell's outcome for a vector, as `expected_of` states the recorded one."""
    actual = _actual(vector)
    if "sha256" in vector["outcome"] and "raises" not in actual:
        return {"sha256": digest(actual)}
    return actual


def vector_by_id(vector_id: str) -> Json:
    """The recorded vector with this id (to replay one vector named by a failure report)."""
    [vector] = [vector for vector in VECTORS if vector["id"] == vector_id]
    return vector


_SHOWN_FAILURES = 25
_SHOWN_CHARS = 600


def _shown(value: Json) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + f"… ({len(text)} chars)"


def _report(vector: Json, actual: Json, expected: Json) -> str:
    """What one failing vector did: its call, both outcomes and their line diff."""
    diff = difflib.unified_diff(
        json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False).splitlines(),
        json.dumps(actual, indent=1, sort_keys=True, ensure_ascii=False).splitlines(),
        "expected",
        "actual",
        lineterm="",
        n=1,
    )
    return "\n".join(
        [
            f"--- vector {vector['id']}: {vector['fn']}",
            f"  args:     {_shown(vector['args'])}",
            f"  expected: {_shown(expected)}",
            f"  actual:   {_shown(actual)}",
            *(f"  {line}" for line in list(diff)[2:40]),
        ]
    )


def failures(vectors: list[Json]) -> list[str]:
    """A report for each vector whose outcome is not the expected one (an exception too)."""
    reports: list[str] = []
    for vector in vectors:
        expected = expected_of(vector)
        try:
            actual = outcome_of(vector)
        except Exception as exc:
            actual = {"unexpected exception": f"{type(exc).__name__}: {exc}"}
        if actual != expected:
            reports.append(_report(vector, actual, expected))
    return reports


@pytest.mark.parametrize("group", GROUPS)
def test_recorded_vectors_of_each_file(group: str) -> None:
    vectors = _vectors(group)
    reports = failures(vectors)
    shown = "\n".join(reports[:_SHOWN_FAILURES])
    more = len(reports) - _SHOWN_FAILURES
    assert not reports, (
        f"{len(reports)} of {len(vectors)} vectors in {group} differ"
        + (f" ({more} more not shown)" if more > 0 else "")
        + ":\n"
        + shown
    )


def test_a_failing_vector_is_reported_by_id_with_both_outcomes_and_a_diff() -> None:
    vector = {**VECTORS[0], "outcome": {"ok": True, "result": {"not": "what clawcell says"}}}
    [report] = failures([vector])
    assert report.startswith(f"--- vector {vector['id']}: {vector['fn']}\n  args:     ")
    assert '  expected: {"not": "what clawcell says"}' in report
    assert '\n  - "not": "what clawcell says"\n  + "kind": ' in report
    assert failures(VECTORS[:3]) == []
