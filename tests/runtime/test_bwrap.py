"""The one bubblewrap probe, shared by the V8 workers and the shell tool's sandbox."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawcell.runtime import bwrap_binary, pid_guard
from clawcell.runtime._v8._process import worker_argv
from clawcell.tools._shell._sandbox import Sandbox  # pyright: ignore[reportPrivateUsage]


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    """The cached answer is dropped before and after, so no test sees another's PATH."""
    bwrap_binary.cache_clear()
    pid_guard.cache_clear()
    yield
    bwrap_binary.cache_clear()
    pid_guard.cache_clear()


def _fake_bwrap(directory: Path, exit_code: int) -> Path:
    script = directory / "bwrap"
    script.write_text(f"#!/bin/sh\nexit {exit_code}\n", "utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_without_bwrap_on_path_there_is_no_sandbox(
    fresh_probe: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bwrap_binary() is None
    assert worker_argv("/opt/deno", 96, sandbox=True)[0] == "/opt/deno"
    assert Sandbox.choose(tmp_path, "auto", tmp_bytes=1024**2).bwrap is None


def test_a_bwrap_that_cannot_create_namespaces_is_not_used(
    fresh_probe: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bwrap(tmp_path, 1)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bwrap_binary() is None


def test_a_working_bwrap_is_found_once_and_used_by_both_sandboxes(
    fresh_probe: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_bwrap(tmp_path, 0)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bwrap_binary() == str(fake)
    # The shell sandbox also checks that the binary maps an unprivileged user (it runs it).
    assert Sandbox.choose(tmp_path, "auto", tmp_bytes=1024**2).bwrap == str(fake)
    fake.unlink()  # cached: the probe is not run again
    assert bwrap_binary() == str(fake)
    assert worker_argv("/opt/deno", 96, sandbox=True)[0] == str(fake)


def test_the_shell_sandbox_has_no_probe_of_its_own() -> None:
    from clawcell.tools._shell import _sandbox  # pyright: ignore[reportPrivateUsage]

    assert not hasattr(_sandbox, "bwrap_path")
    assert _sandbox.bwrap_binary is bwrap_binary


def _fake_unshare(directory: Path, exit_code: int) -> Path:
    script = directory / "unshare"
    script.write_text(f"#!/bin/sh\nexit {exit_code}\n", "utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_without_unshare_bubblewrap_runs_unguarded(
    fresh_probe: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_bwrap(tmp_path, 0)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert pid_guard(str(fake)) == ()
    assert worker_argv("/opt/deno", 96, sandbox=True)[0] == str(fake)


def test_an_unshare_that_cannot_make_the_namespaces_is_not_used(
    fresh_probe: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_bwrap(tmp_path, 0)
    _fake_unshare(tmp_path, 1)  # as util-linux before 2.38 does with `--map-current-user`
    monkeypatch.setenv("PATH", str(tmp_path))
    assert pid_guard(str(fake)) == ()


def test_a_working_unshare_makes_bubblewrap_pid_1_of_its_own_namespace_in_both_sandboxes(
    fresh_probe: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _fake_bwrap(tmp_path, 0)
    unshare = _fake_unshare(tmp_path, 0)
    monkeypatch.setenv("PATH", str(tmp_path))
    guard = (str(unshare), "--user", "--map-current-user", "--pid", "--fork", "--kill-child")
    assert pid_guard(str(fake)) == guard
    unshare.unlink()  # cached: the probe is not run again
    assert worker_argv("/opt/deno", 96, sandbox=True)[: len(guard) + 1] == [*guard, str(fake)]
    wrapped = Sandbox.choose(tmp_path, "auto", tmp_bytes=1024**2).argv(["true"], tmp_path)
    for fd in wrapped.fds:
        os.close(fd)
    assert wrapped.argv[: len(guard) + 1] == [*guard, str(fake)]
