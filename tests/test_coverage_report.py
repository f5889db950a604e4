"""`scripts/coverage-report.py`, which prints `make test`'s coverage and enforces its floor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "coverage-report.py"


def _file(covered: list[int], missing: list[int]) -> dict[str, object]:
    total = len(covered) + len(missing)
    return {
        "executed_lines": covered,
        "missing_lines": missing,
        "summary": {
            "covered_lines": len(covered),
            "missing_lines": len(missing),
            "percent_covered": 100.0 * len(covered) / total,
        },
    }


def _report(tmp_path: Path, floor: float) -> subprocess.CompletedProcess[str]:
    files = {
        "src/a.py": _file([1, 2, 3], [4]),
        "src/b.py": _file([1], [2, 3, 4, 7]),
        "src/c.py": _file([1, 2], []),
    }
    report = {
        "files": files,
        "summary": {"covered_lines": 6, "missing_lines": 5, "percent_covered": 600 / 11},
    }
    path = tmp_path / "coverage.json"
    path.write_text(json.dumps(report))
    command = [sys.executable, str(SCRIPT), str(path), "--floor", str(floor)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_files_below_100_are_listed_least_covered_first_with_their_missing_lines(
    tmp_path: Path,
) -> None:
    done = _report(tmp_path, floor=50)
    assert done.returncode == 0, done.stdout
    rows = [line.split()[0] for line in done.stdout.splitlines()[1:-1]]
    assert rows == ["src/b.py", "src/a.py"]  # c.py is fully covered
    assert "2-4, 7" in done.stdout
    assert "54.5%" in done.stdout.splitlines()[-1]


def test_a_total_under_the_floor_fails_and_says_so(tmp_path: Path) -> None:
    done = _report(tmp_path, floor=60)
    assert done.returncode == 1
    assert "54.5 % is under the floor of 60 %" in done.stdout


def test_a_missing_report_fails_with_what_to_check(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPT), str(tmp_path / "none.json"), "--floor", "93"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "cannot read" in done.stdout and "did the test run finish?" in done.stdout
