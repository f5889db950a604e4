#!/usr/bin/env python3
"""Fetch the JavaScript parser clawcell words syntax errors with: acorn 8.18.0 from npm.

acorn is a dependency, not clawcell code, so it is not kept in the repository: `make`
downloads the pinned npm tarball, checks its sha512 (the registry's `dist.integrity`) and
the sha256 of each file it takes, and writes `dist/acorn.js` and the licence to
`src/clawcell/runtime/vendor/` (ignored by git, packed into the sdist and the wheel).
Without it clawcell still works and reports QuickJS's own syntax-error messages
(docs/divergences.md). Run again, it does nothing when the files are already the pinned ones.

The registry is npm's own configuration: `NPM_CONFIG_REGISTRY` (or `npm_config_registry`),
else `npm config get registry` when npm is installed, else https://registry.npmjs.org/. A
mirror only has to serve the standard tarball path; the hashes are checked all the same.

On any failure (offline, a registry that refuses, a hash that differs) it prints one line
to stderr and writes nothing. With `--optional` (what `make demo` and `make test` use) it
then exits 0, since acorn is optional; without it (`make dist`) it exits 1.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

VERSION = "8.18.0"
DEFAULT_REGISTRY = "https://registry.npmjs.org/"
TARBALL = f"acorn/-/acorn-{VERSION}.tgz"
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
TIMEOUT_S = 30.0


class FetchError(Exception):
    """Why acorn could not be fetched, in one line."""


def registry() -> str:
    """The npm registry to fetch from, as npm itself would choose it."""
    for name in ("NPM_CONFIG_REGISTRY", "npm_config_registry"):
        configured = os.environ.get(name, "").strip()
        if configured:
            return configured
    npm = shutil.which("npm")
    if npm is not None:
        try:
            done = subprocess.run(
                [npm, "config", "get", "registry"],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return DEFAULT_REGISTRY
        configured = done.stdout.strip()
        if done.returncode == 0 and configured.startswith(("http://", "https://")):
            return configured
    return DEFAULT_REGISTRY


def tarball_url(base: str) -> str:
    return base.rstrip("/") + "/" + TARBALL


def present(target: Path) -> bool:
    return all(
        (target / name).is_file()
        and hashlib.sha256((target / name).read_bytes()).hexdigest() == digest
        for name, digest in FILES.values()
    )


def download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            data: bytes = response.read()
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{url} answered HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"cannot download {url}: {reason}") from exc
    found = base64.b64encode(hashlib.sha512(data).digest()).decode()
    if found != INTEGRITY:
        raise FetchError(f"{url} has sha512 {found!r}, expected the pinned {INTEGRITY!r}")
    return data


def extract(data: bytes, url: str) -> dict[str, bytes]:
    """The pinned files of the tarball, each checked against its sha256."""
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member, (name, digest) in FILES.items():
                extracted = archive.extractfile(member)
                if extracted is None:
                    raise FetchError(f"{member!r} is missing from {url}")
                body = extracted.read()
                if hashlib.sha256(body).hexdigest() != digest:
                    raise FetchError(f"{member!r} in {url} does not have the pinned sha256")
                files[name] = body
    except (tarfile.TarError, KeyError) as exc:
        raise FetchError(f"{url} is not the acorn {VERSION} tarball: {exc}") from exc
    return files


def fetch(target: Path) -> str:
    url = tarball_url(registry())
    files = extract(download(url), url)
    target.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (target / name).write_bytes(body)
    return url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Fetch acorn {VERSION} from npm (pinned).")
    parser.add_argument(
        "--optional",
        action="store_true",
        help="exit 0 when acorn cannot be fetched (clawcell then words syntax errors as QuickJS)",
    )
    parser.add_argument("--target", type=Path, default=TARGET, help="where to write the files")
    args = parser.parse_args(argv)
    if present(args.target):
        return 0
    try:
        url = fetch(args.target)
    except (FetchError, OSError) as exc:
        fix = "set NPM_CONFIG_REGISTRY to a reachable npm registry and run it again"
        if args.optional:
            fix = f"going on without acorn (syntax errors keep QuickJS's wording); to add it, {fix}"
        print(" ".join(f"fetch-acorn: {exc}; {fix}".split()), file=sys.stderr)
        return 0 if args.optional else 1
    print(f"fetch-acorn: acorn {VERSION} from {url} written to {args.target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
