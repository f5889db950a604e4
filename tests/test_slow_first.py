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


def test_a_module_fixture_is_made_once_though_its_tests_name_no_group(tmp_path: Path) -> None:
    """A module whose tests share a module-scoped fixture runs on one worker in one stretch
    (tests/conftest.py groups it), so the fixture is made once, however the other modules'
    tests are scheduled around it."""
    made = tmp_path / "made"
    (tmp_path / "test_shared.py").write_text(
        "import pytest\n"
        "@pytest.fixture(scope='module')\n"
        "def shared():\n"
        f"    with open({str(made)!r}, 'a') as log: log.write('made\\n')\n"
        + "".join(f"def test_{n}(shared) -> None: pass\n" for n in range(8))
    )
    for module in ("a", "b"):  # ungrouped tests that the idle worker takes in between
        (tmp_path / f"test_{module}.py").write_text(
            "".join(f"def test_{n}() -> None: pass\n" for n in range(8))
        )
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-n", "2",
               "--dist", "loadgroup", "-v", "-p", "no:cacheprovider", str(tmp_path)]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
    assert made.read_text() == "made\n", result.stdout[-2000:]
    grouped = re.findall(r"PASSED \S+/test_shared\.py::test_\d+@\S*test_shared ", result.stdout)
    assert len(grouped) == 8, result.stdout[-2000:]
