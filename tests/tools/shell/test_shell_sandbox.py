"""Inside bubblewrap a command can neither reach the network nor write outside the workspace.

`make test` installs bubblewrap (`scripts/ensure-bubblewrap.sh`); `sandbox="required"` makes
these tests fail, not skip, where it is missing.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from clawcell.errors import ConfigurationError
from clawcell.tools import ShellSettings, shell
from clawcell.tools._shell._sandbox import Sandbox, check_root_visible, warn_if_vulnerable

from .test_shell import run

CONNECT = (
    "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); "
    "print('connected')\""
)


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on the host's loopback that accepts and closes connections."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except TimeoutError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _exec(root: Path, sandbox: Literal["required", "off"], command: str) -> dict[str, Any]:
    settings = ShellSettings(approval="never", sandbox=sandbox)
    [done] = run(shell(root, settings=settings), ("exec", {"command": command}))
    return done


def test_outside_the_sandbox_the_host_listener_is_reachable(root: Path, listener: int) -> None:
    done = _exec(root, "off", CONNECT.format(port=listener))
    assert (done["sandbox"], done["stdout"]) == ("none", "connected\n")


def test_inside_bubblewrap_the_network_is_unreachable(root: Path, listener: int) -> None:
    done = _exec(root, "required", CONNECT.format(port=listener))
    assert (done["sandbox"], done["status"]) == ("bwrap", "failed")
    assert "ConnectionRefusedError" in done["stderr"] or "OSError" in done["stderr"]
    interfaces = _exec(root, "required", "cat /proc/net/dev")["stdout"]
    assert [line.split(":")[0].strip() for line in interfaces.splitlines()[2:]] == ["lo"]


def test_inside_bubblewrap_only_the_workspace_is_writable(root: Path) -> None:
    outside = root.parent / "secret.txt"
    command = (
        f"echo changed > {outside} ; echo $? ; touch /usr/clawcell-x ; echo $? ; "
        "echo kept > inside.txt ; echo $? ; echo tmp > /tmp/t && cat /tmp/t"
    )
    done = _exec(root, "required", command)
    # The workspace's parent is a directory of the private `/tmp` inside the sandbox, so the
    # first write succeeds there and is gone with it; the host's file never changes.
    assert done["stdout"].split() == ["0", "1", "0", "tmp"]
    assert outside.read_text() == "outside\n"
    assert not Path("/tmp/t").exists() or Path("/tmp/t").read_text() != "tmp\n"
    assert (root / "inside.txt").read_text() == "kept\n"
    assert not Path("/usr/clawcell-x").exists()


def test_inside_bubblewrap_host_directories_outside_the_system_are_absent(root: Path) -> None:
    done = _exec(root, "required", f"ls -d {Path.home()} /work /var 2>&1; echo x > /clawcell-x")
    assert done["stdout"].count("No such file or directory") == 3
    assert not Path("/clawcell-x").exists()  # the sandbox's own root is a throwaway tmpfs


def test_inside_bubblewrap_the_command_sees_only_its_own_processes(root: Path) -> None:
    done = _exec(root, "required", "ls /proc | grep -c '^[0-9]'; hostname")
    count, hostname = done["stdout"].split()
    assert int(count) <= 4 and hostname == "clawcell"


def test_the_private_tmp_and_shared_memory_are_capped_at_tmp_bytes(root: Path) -> None:
    settings = ShellSettings(approval="never", sandbox="required", tmp_bytes=1024**2)
    command = (
        "head -c 2000000 /dev/zero > /tmp/big; echo $?; "
        "head -c 2000000 /dev/zero > /dev/shm/big; echo $?; "
        "rm /tmp/big; head -c 500000 /dev/zero > /tmp/small; echo $?"
    )
    [done] = run(shell(root, settings=settings), ("exec", {"command": command}))
    assert done["stdout"].split() == ["1", "1", "0"]
    assert done["stderr"].count("No space left on device") == 2


@pytest.mark.parametrize(
    ("printed", "warned"),
    [("bubblewrap 0.8.0", True), ("bubblewrap 0.11.9", True), ("bubblewrap 0.12.0", False)],
)
def test_a_bubblewrap_older_than_0_12_is_warned_about_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, printed: str, warned: bool
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text(f"#!/bin/sh\necho '{printed}'\n")
    fake.chmod(0o755)
    with caplog.at_level(logging.WARNING, logger="clawcell.tools"):
        assert warn_if_vulnerable(str(fake)) is warned
        assert warn_if_vulnerable(str(fake)) is warned
    messages = [r.getMessage() for r in caplog.records if "CVE-2026-87766" in r.getMessage()]
    assert len(messages) == (1 if warned else 0)


@pytest.mark.parametrize("bad", ["/", "/usr/src/proj", "/etc/app", "/proc/1", "/dev/shm/w"])
def test_a_workspace_that_is_or_holds_a_mount_target_is_refused(bad: str) -> None:
    with pytest.raises(ConfigurationError, match=r"[cC]hoose a root"):
        check_root_visible(Path(bad))


def test_a_workspace_under_tmp_is_accepted_its_mount_target_is_in_a_fresh_tmpfs() -> None:
    check_root_visible(Path("/tmp/project"))


def _no_user_namespaces(_bwrap: str) -> bool:
    return False


def test_without_user_namespaces_auto_runs_unsandboxed_with_a_warning_and_required_refuses(
    root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("clawcell.tools._shell._sandbox._user_namespaces_work", _no_user_namespaces)
    with caplog.at_level(logging.WARNING, logger="clawcell.tools"):
        auto = Sandbox.choose(root, "auto", tmp_bytes=1024**2)
    assert (auto.bwrap, auto.kind) == (None, "none")
    assert any("cannot create a user namespace" in r.getMessage() for r in caplog.records)
    with pytest.raises(ConfigurationError, match="cannot create user namespaces here"):
        Sandbox.choose(root, "required", tmp_bytes=1024**2)
