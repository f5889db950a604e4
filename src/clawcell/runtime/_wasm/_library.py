"""The shared library wasmtime-py ships, found without running the package's `__init__`,
and the version of the C API it has (the structure layouts `_capi` declares are those of
`LAYOUT_MAJORS` on a 64-bit platform; anything else is refused rather than guessed at).

The version comes from the distribution's metadata beside the package (`.dist-info` or
`.egg-info`; cheaper than `importlib.metadata`), else from `importlib.metadata` (an editable
install keeps it elsewhere). Metadata of several major versions in one folder (an upgrade that
failed half-way) is refused: which one the library is cannot be told.
"""

from __future__ import annotations

import ctypes
import os
import sys
from ctypes import c_void_p
from typing import Final

from ...errors import RuntimeUnavailableError

__all__ = ["LAYOUT_MAJORS", "REQUIREMENT", "checked_library", "library_path", "wasmtime_version"]

REQUIREMENT: Final = "wasmtime>=51.0.0,<52"
LAYOUT_MAJORS: Final = ("51",)
"""Major versions of wasmtime whose C structures have the layout declared in `_capi`."""


def checked_library() -> str:
    """The library's path, once this platform and its version are known to match `_capi`'s
    declarations."""
    if ctypes.sizeof(c_void_p) != 8:
        raise RuntimeUnavailableError(
            f"clawcell binds wasmtime's C API with the structure layouts of a 64-bit "
            f"platform, and this Python's pointers are {ctypes.sizeof(c_void_p) * 8}-bit: "
            f"use a 64-bit Python"
        )
    path = library_path()
    package = os.path.dirname(os.path.dirname(path))  # (`<package>/<platform>/<library>`)
    version = wasmtime_version(os.path.dirname(package))
    if version == "unknown":
        raise RuntimeUnavailableError(
            f"cannot tell which wasmtime version the package at {package!r} "
            f"is (no `wasmtime-*.dist-info` or `.egg-info` beside it, and "
            f"`importlib.metadata` knows none; a copied or vendored package?), so its C "
            f"structure layouts are unknown: install it with pip "
            f"(`pip install '{REQUIREMENT}'`)"
        )
    if version.split(".")[0] not in LAYOUT_MAJORS:
        raise RuntimeUnavailableError(
            f"clawcell binds wasmtime's C API with the structure layouts of wasmtime "
            f"{'/'.join(LAYOUT_MAJORS)}, and the installed wasmtime is {version!r}: "
            f"install a supported one (`pip install '{REQUIREMENT}'`)"
        )
    return path


_library: list[str] = []


def library_path() -> str:
    """Where the installed wasmtime package keeps its shared library (the package's own
    `__init__` is not run to find it)."""
    if not _library:
        _library.append(_find_library())
    return _library[0]


def _find_library() -> str:
    package = _package_dir()
    path = os.path.join(package, _platform_dir(), _library_name())
    if not os.path.isfile(path):
        raise RuntimeUnavailableError(
            f"the wasmtime package at {package!r} has no library {_library_name()!r} for "
            f"this platform ({_platform_dir()!r}): install a wheel built for it "
            f"(`pip install --force-reinstall '{REQUIREMENT}'`)"
        )
    return path


def _package_dir() -> str:
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        spec = find_spec("wasmtime", None) if find_spec is not None else None
        if spec is not None and spec.submodule_search_locations:
            return str(next(iter(spec.submodule_search_locations)))
    raise RuntimeUnavailableError(
        f"the wasmtime package is not installed; clawcell runs QuickJS on its library: "
        f"`pip install '{REQUIREMENT}'`"
    )


def _platform_dir() -> str:
    """wasmtime-py's name for this platform's folder: `<sys.platform>-<machine>`."""
    system = "android" if hasattr(sys, "getandroidapilevel") else sys.platform
    if hasattr(os, "uname"):
        machine = os.uname().machine
    else:  # Windows
        machine = os.environ.get("PROCESSOR_ARCHITECTURE", "")
    machine = {"AMD64": "x86_64", "amd64": "x86_64", "arm64": "aarch64", "ARM64": "aarch64"}.get(
        machine, machine
    )
    return f"{system}-{machine}"


def _library_name() -> str:
    if sys.platform == "win32":
        return "_wasmtime.dll"
    if sys.platform == "darwin":
        return "_libwasmtime.dylib"
    return "_libwasmtime.so"


def wasmtime_version(site: str | os.PathLike[str]) -> str:
    """The installed wasmtime's version, from the `.dist-info` or `.egg-info` metadata in
    `site` (the folder holding the package; cheaper than `importlib.metadata`), else from
    `importlib.metadata` (an editable install keeps its metadata elsewhere); `"unknown"` when
    neither knows it. Raises `RuntimeUnavailableError` when `site` holds the metadata of
    several major versions (a broken upgrade): which one the library is cannot be told."""
    found = _metadata_versions(site)
    majors = sorted({version.split(".")[0] for version in found})
    if len(majors) > 1:
        raise RuntimeUnavailableError(
            f"{os.fspath(site)!r} holds the metadata of several wasmtime versions "
            f"({', '.join(sorted(found))}), so the version of its library cannot be told: "
            f"reinstall it (`pip install --force-reinstall '{REQUIREMENT}'`)"
        )
    if found:
        return max(found)
    from importlib import metadata  # here: only where the metadata is not beside the package

    try:
        return metadata.version("wasmtime")
    except metadata.PackageNotFoundError:
        return "unknown"


def _metadata_versions(site: str | os.PathLike[str]) -> list[str]:
    try:
        names = os.listdir(site)
    except OSError:
        return []
    versions: list[str] = []
    for name in names:
        if name.startswith("wasmtime-") and name.endswith((".dist-info", ".egg-info")):
            stem = name.removeprefix("wasmtime-").rsplit(".", 1)[0]
            versions.append(stem.split("-py")[0])  # an egg's `51.0.0-py3.11`
        elif name == "wasmtime.egg-info":  # `setup.py develop`: the version is inside
            versions.extend(_pkg_info_version(os.path.join(site, name, "PKG-INFO")))
    return versions


def _pkg_info_version(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return []
    return [line.removeprefix("Version:").strip() for line in lines if line.startswith("Version:")][
        :1
    ]
