"""`scripts/fetch-acorn.py`: npm's registry configuration, pinned hashes, one line on failure.

Each test runs the script as `make` does, in a process of its own, against a loopback
"registry" (a dead port, or a server that serves the wrong bytes) and a temporary target,
so the tree's own `vendor/` is never touched and nothing leaves the machine.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from tests._sockets import refusing_port

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fetch-acorn.py"
TARBALL_PATH = "/acorn/-/acorn-8.18.0.tgz"


@pytest.fixture
def dead_registry() -> Iterator[str]:
    """A loopback URL that refuses connections (its port stays bound, unlistened, throughout:
    no other process can start answering on it)."""
    with refusing_port() as port:
        yield f"http://127.0.0.1:{port}/"


class _Registry(http.server.BaseHTTPRequestHandler):
    """Serves bytes that are not acorn's tarball, and remembers the paths asked for."""

    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        body = b"not the acorn tarball"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture
def wrong_registry() -> Iterator[tuple[str, list[str]]]:
    asked: list[str] = []

    class Handler(_Registry):
        pass

    Handler.asked = asked
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mirror/npm/", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _fetch(
    target: Path, *args: str, env: dict[str, str], path: str | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k.lower() != "npm_config_registry"}
    environment.update(env)
    environment["PATH"] = path if path is not None else environment.get("PATH", "")
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--target", str(target), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )


def _fake_npm(directory: Path, registry: str) -> str:
    """A PATH holding only an `npm` whose configured registry is `registry`."""
    directory.mkdir()
    npm = directory / "npm"
    npm.write_text(
        f'#!/bin/sh\n[ "$*" = "config get registry" ] && echo "{registry}"\n', encoding="utf-8"
    )
    npm.chmod(0o755)
    return str(directory)


def test_an_unreachable_registry_is_one_line_and_make_demo_goes_on(
    tmp_path: Path, dead_registry: str
) -> None:
    registry = dead_registry
    done = _fetch(tmp_path / "vendor", "--optional", env={"NPM_CONFIG_REGISTRY": registry})
    assert done.returncode == 0
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"fetch-acorn: cannot download {registry}acorn/-/acorn-8.18.0.tgz: ")
    assert "going on without acorn" in line
    assert "NPM_CONFIG_REGISTRY" in line
    assert not (tmp_path / "vendor").exists()


def test_without_optional_the_failure_is_still_one_line_but_fails(
    tmp_path: Path, dead_registry: str
) -> None:
    done = _fetch(tmp_path / "vendor", env={"NPM_CONFIG_REGISTRY": dead_registry})
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "Traceback" not in done.stderr
    assert line.endswith("set NPM_CONFIG_REGISTRY to a reachable npm registry and run it again")


def test_the_registry_from_the_environment_is_used_and_its_bytes_are_checked(
    tmp_path: Path, wrong_registry: tuple[str, list[str]]
) -> None:
    registry, asked = wrong_registry
    done = _fetch(tmp_path / "vendor", "--optional", env={"npm_config_registry": registry})
    assert asked == ["/mirror/npm" + TARBALL_PATH]
    [line] = done.stderr.splitlines()
    assert "has sha512 " in line
    assert "expected the pinned" in line
    assert not (tmp_path / "vendor").exists()


def test_the_registry_npm_is_configured_with_is_used_when_the_environment_names_none(
    tmp_path: Path, wrong_registry: tuple[str, list[str]]
) -> None:
    registry, asked = wrong_registry
    path = _fake_npm(tmp_path / "bin", registry)
    done = _fetch(tmp_path / "vendor", "--optional", env={}, path=path)
    assert asked == ["/mirror/npm" + TARBALL_PATH]
    assert done.returncode == 0
    assert len(done.stderr.splitlines()) == 1


def test_the_environment_wins_over_npms_configuration(
    tmp_path: Path, wrong_registry: tuple[str, list[str]], dead_registry: str
) -> None:
    registry, asked = wrong_registry
    path = _fake_npm(tmp_path / "bin", dead_registry)
    done = _fetch(
        tmp_path / "vendor", "--optional", env={"NPM_CONFIG_REGISTRY": registry}, path=path
    )
    assert asked == ["/mirror/npm" + TARBALL_PATH]
    assert "has sha512 " in done.stderr


def test_files_already_pinned_are_kept_without_asking_any_registry(
    tmp_path: Path, dead_registry: str
) -> None:
    vendor = Path(__file__).resolve().parents[2] / "src" / "clawcell" / "runtime" / "vendor"
    target = tmp_path / "vendor"
    target.mkdir()
    for name in ("acorn.js", "LICENSE.acorn"):
        (target / name).write_bytes((vendor / name).read_bytes())
    done = _fetch(target, env={"NPM_CONFIG_REGISTRY": dead_registry})
    assert (done.returncode, done.stderr) == (0, "")
