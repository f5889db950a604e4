"""The scheduling hints in tests/conftest.py: the slow-first list names files that exist (a
renamed file would silently fall back to its usual place and bring back the long tail it was
listed to avoid), and `xdist_group` marks keep their tests on one worker."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import SLOW_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_first_file_exists_once() -> None:
    missing = [path for path in SLOW_FIRST if not (ROOT / path).is_file()]
    assert missing == []
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)


def test_an_xdist_group_runs_on_one_worker(tmp_path: Path) -> None:
    """`--dist loadgroup` (what `make test` runs) keeps a group's tests on one xdist worker,
    so a module's shared fixture is made once (pytest 9 ignored xdist's group names)."""
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n"
        'pytestmark = pytest.mark.xdist_group("one")\n'
        + "".join(f"def test_{n}() -> None: pass\n" for n in range(8))
    )
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-n", "2",
               "--dist", "loadgroup", "-v", "-p", "no:cacheprovider", str(tmp_path)]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
    workers = set(re.findall(r"\[(gw\d+)\] \[ *\d+%\] PASSED \S+@one", result.stdout))
    assert len(workers) == 1, result.stdout[-2000:]
