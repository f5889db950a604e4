"""The lock files agree with pyproject.toml, and pin what they install exactly.

`make test` installs `requirements/test.txt` and `make demo` `requirements/core.txt`
(`scripts/lock.py` writes both). A dependency changed in pyproject.toml without `make lock`
fails here, whether or not the old pin still happens to satisfy the new range.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
LOCKS = ["core.txt", "test.txt"]
# A pinned line: `name==version ; marker \` (the marker and its `;` are optional).
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)(?:\s*;\s*([^\\]+?))?\s*\\?$", re.M)


def _lock_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("clawcell_lock", ROOT / "scripts" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOCK = _lock_script()


def _header(text: str, key: str) -> str:
    match = re.search(rf"^# {key}: (.+)$", text, re.M)
    assert match is not None, f"the lock has no `# {key}:` line: run `make lock`"
    return match.group(1).strip()


def _extras(text: str) -> tuple[str, ...]:
    value = _header(text, "extras")
    return () if value == "-" else tuple(value.split(","))


def _pins(text: str) -> dict[str, list[tuple[Version, str | None]]]:
    pins: dict[str, list[tuple[Version, str | None]]] = {}
    for name, version, marker in PIN.findall(text):
        pins.setdefault(canonicalize_name(name), []).append((Version(version), marker or None))
    return pins


def _direct(extras: tuple[str, ...]) -> list[Requirement]:
    project = PYPROJECT["project"]
    names = [*project["dependencies"], *PYPROJECT["build-system"]["requires"]]
    for extra in extras:
        names += project["optional-dependencies"][extra]
    return [Requirement(name) for name in names]


def _on_python_311(marker: str | None) -> bool:
    environment = {"python_version": "3.11", "python_full_version": "3.11.7",
                   "sys_platform": "linux", "platform_system": "Linux",
                   "implementation_name": "cpython", "platform_python_implementation": "CPython",
                   "os_name": "posix", "platform_machine": "x86_64"}  # fmt: skip
    return marker is None or Marker(marker).evaluate(environment)


@pytest.mark.parametrize("name", LOCKS)
def test_the_lock_was_resolved_from_the_pyproject_as_it_is(name: str) -> None:
    text = (ROOT / "requirements" / name).read_text("utf-8")
    expected = LOCK.digest(PYPROJECT, _extras(text))
    assert _header(text, "pyproject-digest") == expected, (
        f"requirements/{name} was resolved from another pyproject.toml: run `make lock`"
    )


def test_the_test_lock_covers_the_extras_the_makefile_installs() -> None:
    text = (ROOT / "requirements" / "test.txt").read_text("utf-8")
    assert _extras(text) == LOCK.TEST_EXTRAS
    assert "test.txt" in (ROOT / "Makefile").read_text("utf-8")


@pytest.mark.parametrize("name", LOCKS)
def test_every_direct_dependency_is_pinned_inside_its_range(name: str) -> None:
    text = (ROOT / "requirements" / name).read_text("utf-8")
    pins = _pins(text)
    for requirement in _direct(_extras(text)):
        if requirement.marker is not None and not _on_python_311(str(requirement.marker)):
            continue
        found = [v for v, marker in pins.get(canonicalize_name(requirement.name), [])
                 if _on_python_311(marker)]  # fmt: skip
        assert len(found) == 1, f"{requirement.name!r} is not pinned once in requirements/{name}"
        assert requirement.specifier.contains(found[0], prereleases=True), (
            f"requirements/{name} pins {requirement.name}=={found[0]}, outside {requirement}"
        )


@pytest.mark.parametrize("name", LOCKS)
def test_every_pin_is_exact_and_carries_a_hash(name: str) -> None:
    text = (ROOT / "requirements" / name).read_text("utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 4)[4])
    assert len(entries) > 5
    for entry in entries:
        assert PIN.match(entry.splitlines()[0]), f"not an exact pin: {entry.splitlines()[0]!r}"
        assert "--hash=sha256:" in entry, f"no hash for {entry.splitlines()[0]!r}"


def test_known_vulnerable_floors_are_kept() -> None:
    """wasmtime 51 has the fixes of 50.0.2; deno before 2.9.8 lets `--allow-read` be bypassed."""
    project = PYPROJECT["project"]
    wasmtime = next(Requirement(r) for r in project["dependencies"] if r.startswith("wasmtime"))
    assert not wasmtime.specifier.contains("50.0.1")
    assert wasmtime.specifier.contains("51.0.0")
    for extra in ("v8", "test"):
        deno = next(Requirement(r) for r in project["optional-dependencies"][extra]
                    if r.startswith("deno"))  # fmt: skip
        assert not deno.specifier.contains("2.9.7") and deno.specifier.contains("2.9.8")
