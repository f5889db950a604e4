#!/usr/bin/env python3
"""Fetch the accessibility checker the Chromium tests run: axe-core 4.14.1 from npm.

axe-core is a test tool, not clawcell code: `make` downloads the pinned npm tarball, checks
its sha512 (the registry's `dist.integrity`) and the sha256 of each file it takes, and writes
`axe.min.js` and its licence (MPL-2.0) to `build/vendor/` (ignored by git, never packed). The
registry is chosen as for acorn (`scripts/fetch-acorn.py`: `NPM_CONFIG_REGISTRY`, npm's own
configuration, else registry.npmjs.org). Run again, it does nothing when the files are the
pinned ones. On a failure it prints one line and writes nothing; the axe tests then fail
saying what to run.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import sys
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

VERSION = "4.14.1"
TARBALL = f"axe-core/-/axe-core-{VERSION}.tgz"
INTEGRITY = (
    "FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
)
FILES = {
    "package/axe.min.js": (
        "axe.min.js",
        "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c",
    ),
    "package/LICENSE": (
        "LICENSE.axe-core",
        "af175b9d96ee93c21a036152e1b905b0b95304d4ae8c2c921c7609100ba8df7e",
    ),
}
ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "build" / "vendor"


def _registry() -> str:
    """npm's registry, chosen exactly as `fetch-acorn.py` chooses it."""
    spec = importlib.util.spec_from_file_location("fetch_acorn", ROOT / "scripts/fetch-acorn.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.registry())


def present() -> bool:
    return all(
        (TARGET / name).is_file()
        and hashlib.sha256((TARGET / name).read_bytes()).hexdigest() == digest
        for name, digest in FILES.values()
    )


def fetch() -> str:
    url = _registry().rstrip("/") + "/" + TARBALL
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data: bytes = response.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise OSError(f"cannot download {url}: {getattr(exc, 'reason', exc)}") from exc
    found = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if found != INTEGRITY:
        raise OSError(f"{url} has sha512 {found!r}, expected the pinned {INTEGRITY!r}")
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member, (name, digest) in FILES.items():
            extracted = archive.extractfile(member)
            body = extracted.read() if extracted is not None else b""
            if hashlib.sha256(body).hexdigest() != digest:
                raise OSError(f"{member!r} in {url} is missing or not the pinned file")
            files[name] = body
    TARGET.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (TARGET / name).write_bytes(body)
    return url


def main() -> int:
    if present():
        return 0
    try:
        url = fetch()
    except (OSError, tarfile.TarError) as exc:
        fix = "set NPM_CONFIG_REGISTRY to a reachable npm registry and run it again"
        print(f"fetch-axe: {exc}; {fix}", file=sys.stderr)
        return 1
    print(f"fetch-axe: axe-core {VERSION} from {url} written to {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
