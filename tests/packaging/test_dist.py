"""The release artefacts: `python -m build` makes an sdist and, from it, a wheel; both carry
acorn and the licences, and the wheel installed into a fresh virtualenv words syntax errors as
the release does.

Built with `--no-isolation` (hatchling comes with the `test` extra) and installed with
`--no-deps --no-index`, the fresh virtualenv reading the dependencies from this one's
site-packages, so nothing here uses the network. Needs acorn fetched (`make` does it).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "src" / "clawcell" / "runtime" / "vendor"
ACORN_SHA256 = "fc3ed7b81e58464715d0291402892f22c3d86ea75302645a330390f85d8015c9"

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("dist")]  # one build per run


def _run(*command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
        env=environment,
    )
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert (VENDOR / "acorn.js").is_file(), "acorn is not fetched: run scripts/fetch-acorn.py"
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    return out


def _sdist(dist: Path) -> tarfile.TarFile:
    [path] = dist.glob("clawcell-*.tar.gz")
    return tarfile.open(path, "r:gz")


def _wheel(dist: Path) -> zipfile.ZipFile:
    [path] = dist.glob("clawcell-*-py3-none-any.whl")
    return zipfile.ZipFile(path)


def test_the_sdist_carries_acorn_its_licence_and_what_a_wheel_build_needs(dist: Path) -> None:
    with _sdist(dist) as sdist:
        [top] = {name.split("/")[0] for name in sdist.getnames()}
        names = {name.removeprefix(f"{top}/") for name in sdist.getnames()}
        acorn = sdist.extractfile(f"{top}/src/clawcell/runtime/vendor/acorn.js")
        assert acorn is not None
        assert hashlib.sha256(acorn.read()).hexdigest() == ACORN_SHA256
    assert {
        "PKG-INFO",
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "scripts/fetch-acorn.py",
        "src/clawcell/py.typed",
        "src/clawcell/runtime/controller.js",
        "src/clawcell/runtime/vendor/LICENSE.acorn",
    } <= names
    assert not {name for name in names if name.startswith(("tests/", ".venv/", "bench/"))}


def test_the_wheel_carries_every_data_file_beside_the_modules(dist: Path) -> None:
    # Modules read their scripts, styles and pages from beside themselves (the guest
    # controller, the V8 worker in `runtime/_v8/`, the UI's files): one that moves into a
    # family folder must still ship.
    package = ROOT / "src"
    data = {
        str(path.relative_to(package))
        for path in (package / "clawcell").rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc")
    }
    assert "clawcell/runtime/_v8/v8_worker.js" in data
    with _wheel(dist) as wheel:
        assert data - set(wheel.namelist()) == set()


def test_the_wheel_built_from_the_sdist_carries_acorn_and_both_licences(dist: Path) -> None:
    with _wheel(dist) as wheel:
        names = set(wheel.namelist())
        assert hashlib.sha256(wheel.read("clawcell/runtime/vendor/acorn.js")).hexdigest() == (
            ACORN_SHA256
        )
        licence = wheel.read("clawcell-0.1.0.dist-info/licenses/LICENSE").decode()
        metadata = wheel.read("clawcell-0.1.0.dist-info/METADATA").decode()
    assert {
        "clawcell/py.typed",
        "clawcell/runtime/vendor/LICENSE.acorn",
        "clawcell-0.1.0.dist-info/licenses/src/clawcell/runtime/vendor/LICENSE.acorn",
    } <= names
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 clawcell contributors\n")
    assert "License-Expression: MIT" in metadata
    assert "Project-URL: Source, https://github.com/clawcell/clawcell" in metadata
    assert "Classifier: Programming Language :: Python :: 3.11" in metadata


_SYNTAX_ERROR_CELL = """
import asyncio, clawcell
async def main():
    async with clawcell.CodeMode() as mode:
        print((await mode.exec("const = 2;"))["error"])
asyncio.run(main())
print(clawcell.__file__)
"""


def test_the_installed_wheel_words_syntax_errors_as_the_release(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    [wheel] = dist.glob("*.whl")
    _run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         "--no-index", wheel)  # fmt: skip
    # The dependencies come from this virtualenv: its site-packages as a plain path entry
    # (its own .pth files, among them the editable clawcell, are not read).
    site = Path(_run(python, "-c", "import site; print(site.getsitepackages()[0])").stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", "utf-8")
    done = _run(python, "-I", "-c", _SYNTAX_ERROR_CELL, cwd=tmp_path)
    error, location = done.stdout.splitlines()
    assert error.startswith("SyntaxError at openclaw-code-mode:user.js:1:7: Unexpected token.")
    assert Path(location).is_relative_to(venv)
