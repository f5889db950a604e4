"""A new environment built from the lock alone runs the README's examples.

`make test` downloads the wheels of `requirements/test.txt` into `.venv/wheels` and installs
from there. This test builds a second virtual environment from the same wheels with no index
at all (`--no-index --require-hashes`), so a package the lock forgot, or a hash that does not
match, fails here rather than on someone's fresh clone; then it runs the README's Python
blocks with that environment's own interpreter and pytest.

The new environment gets no pip of its own (`ensurepip` cost a sixth of the test): this
environment's pip installs into it with `--python`, which runs pip on the new interpreter,
so what is installed and checked is the new environment's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELS = Path(sys.prefix) / "wheels"


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False,
                          timeout=600, **kwargs)  # type: ignore[arg-type]  # fmt: skip


@pytest.mark.slow
def test_a_venv_from_the_lock_alone_runs_the_readme_examples(tmp_path: Path) -> None:
    assert WHEELS.is_dir(), (
        f"no wheelhouse at {WHEELS}: `make test` downloads the lock's wheels there; run it"
    )
    fresh = tmp_path / "venv"
    venv.create(fresh, with_pip=False)
    python = str(fresh / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python]
    install = [*pip, "install", "--quiet", "--no-index", "--no-compile"]
    deps = _run([*install, "--find-links", str(WHEELS), "--require-hashes",
                 "-r", str(ROOT / "requirements" / "test.txt")])  # fmt: skip
    assert deps.returncode == 0, deps.stderr[-3000:]
    itself = _run([*install, "--no-deps", "--no-build-isolation", "-e", str(ROOT)])
    assert itself.returncode == 0, itself.stderr[-3000:]
    check = _run([*pip, "check"])
    assert check.returncode == 0, check.stdout
    readme = ["tests/docs/test_examples.py", "-k", "README"]
    examples = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *readme], cwd=ROOT)
    assert examples.returncode == 0, examples.stdout[-3000:]
    assert " passed" in examples.stdout and " failed" not in examples.stdout
