#!/usr/bin/env python3
"""Fetch the JavaScript parser clawcell words syntax errors with: acorn 8.18.0 from npm.

acorn is a dependency, not clawcell code, so it is not kept in the repository: `make`
downloads the pinned npm tarball from the registry, checks its sha512 (the registry's
`dist.integrity`) and the sha256 of the file it takes, and writes `dist/acorn.js` and the
licence to `src/clawcell/runtime/vendor/` (ignored by git, packed into wheels). Without it
clawcell still works and reports QuickJS's own syntax-error messages (docs/divergences.md).
Run again, it does nothing when the file is already the pinned one.
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

URL = "https://registry.npmjs.org/acorn/-/acorn-8.18.0.tgz"
INTEGRITY = (
    "lGq+9yr1/GuAWaVYIHRjvvySG5/4VfKIvC8EWxStPdcDh/Ka7FG3twP6v4d5BkravUilhIAsG4Qj83t02LWUPQ=="
)
FILES = {
    "package/dist/acorn.js": (
        "acorn.js",
        "fc3ed7b81e58464715d0291402892f22c3d86ea75302645a330390f85d8015c9",
    ),
    "package/LICENSE": (
        "LICENSE.acorn",
        "76a876cf886ff9be2a8b5e2e86514fed06223c8c9f0c1e9ee9606e93841e00b7",
    ),
}
TARGET = Path(__file__).resolve().parents[1] / "src" / "clawcell" / "runtime" / "vendor"


def _present() -> bool:
    return all(
        (TARGET / name).is_file()
        and hashlib.sha256((TARGET / name).read_bytes()).hexdigest() == digest
        for name, digest in FILES.values()
    )


def _download() -> bytes:
    with urllib.request.urlopen(URL, timeout=60) as response:
        data: bytes = response.read()
    found = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if found != INTEGRITY:
        raise SystemExit(f"fetch-acorn: {URL} has sha512 {found!r}, expected {INTEGRITY!r}")
    return data


def main() -> int:
    if _present():
        return 0
    with tarfile.open(fileobj=io.BytesIO(_download()), mode="r:gz") as archive:
        TARGET.mkdir(parents=True, exist_ok=True)
        for member, (name, digest) in FILES.items():
            extracted = archive.extractfile(member)
            if extracted is None:
                raise SystemExit(f"fetch-acorn: {member!r} is missing from {URL}")
            body = extracted.read()
            if hashlib.sha256(body).hexdigest() != digest:
                raise SystemExit(f"fetch-acorn: {member!r} does not have the pinned sha256")
            (TARGET / name).write_bytes(body)
    print(f"fetch-acorn: acorn 8.18.0 written to {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
