"""The scheduling hints in tests/conftest.py: the slow-first list names files that exist (a
renamed file would silently fall back to its usual place and bring back the long tail it was
listed to avoid), and `xdist_group` marks keep their tests on one worker."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SLOW_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_first_file_exists_once() -> None:
    missing = [path for path in SLOW_FIRST if not (ROOT / path).is_file()]
    assert missing == []
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)


@pytest.fixture(scope="module")
def scheduled(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The `-v` output of one `-n 2 --dist loadgroup` run (what `make test` runs) over a
    module with an `xdist_group` mark, a module whose tests share a module-scoped fixture (it
    logs each time it is made to the returned file) and two plain modules, whose tests the
    idle worker takes in between."""
    folder = tmp_path_factory.mktemp("scheduled")
    made = folder / "made"
    (folder / "test_grouped.py").write_text(
        "import pytest\n"
        'pytestmark = pytest.mark.xdist_group("one")\n'
        + "".join(f"def test_{n}() -> None: pass\n" for n in range(8))
    )
    (folder / "test_shared.py").write_text(
        "import pytest\n"
        "@pytest.fixture(scope='module')\n"
        "def shared():\n"
        f"    with open({str(made)!r}, 'a') as log: log.write('made\\n')\n"
        + "".join(f"def test_{n}(shared) -> None: pass\n" for n in range(8))
    )
    for module in ("a", "b"):
        (folder / f"test_{module}.py").write_text(
            "".join(f"def test_{n}() -> None: pass\n" for n in range(8))
        )
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-n", "2",
               "--dist", "loadgroup", "-v", "-p", "no:cacheprovider", str(folder)]  # fmt: skip
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
    return result.stdout, made


def test_an_xdist_group_runs_on_one_worker(scheduled: tuple[str, Path]) -> None:
    """`--dist loadgroup` keeps a group's tests on one xdist worker, so a module's shared
    fixture is made once (pytest 9 ignored xdist's group names)."""
    stdout, _ = scheduled
    workers = set(re.findall(r"\[(gw\d+)\] \[ *\d+%\] PASSED \S+@one", stdout))
    assert len(workers) == 1, stdout[-2000:]


def test_a_module_fixture_is_made_once_though_its_tests_name_no_group(
    scheduled: tuple[str, Path],
) -> None:
    """A module whose tests share a module-scoped fixture runs on one worker in one stretch
    (tests/conftest.py groups it), so the fixture is made once, however the other modules'
    tests are scheduled around it."""
    stdout, made = scheduled
    assert made.read_text() == "made\n", stdout[-2000:]
    grouped = re.findall(r"PASSED \S+/test_shared\.py::test_\d+@\S*test_shared ", stdout)
    assert len(grouped) == 8, stdout[-2000:]
