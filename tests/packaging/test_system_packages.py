"""What `make test` installs through apt is said before it happens, and without root it says
what to run instead. The scripts run with a PATH of fakes (`id`, `apt-get`), so nothing is
installed and no root is needed; `pg-test-env`'s throwaway cluster really starts, once with
a faked first port pick."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash") or "/bin/bash"


def _fake_bin(directory: Path, *, uid: int) -> Path:
    """`id -u` answers `uid`; `apt-get` only says, on stderr, that it was called."""
    directory.mkdir()
    (directory / "id").write_text(f"#!{BASH}\necho {uid}\n", "utf-8")
    (directory / "apt-get").write_text(f'#!{BASH}\necho "APT-GET $*" >&2\n', "utf-8")
    for fake in directory.iterdir():
        fake.chmod(0o755)
    return directory


def _script(name: str, path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `scripts/<name>` with only `path` on PATH (and `env`)."""
    return subprocess.run(
        [BASH, str(ROOT / "scripts" / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": str(path), **env},
    )


def _ensure_chromium(path: Path) -> subprocess.CompletedProcess[str]:
    return _script("ensure-chromium.sh", path)


def test_without_root_a_missing_chromium_is_one_line_naming_the_command(tmp_path: Path) -> None:
    done = _ensure_chromium(_fake_bin(tmp_path / "bin", uid=1000))
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "sudo apt-get install chromium chromium-headless-shell fonts-dejavu-core" in line
    assert "APT-GET" not in done.stderr


def test_as_root_what_apt_installs_is_said_before_apt_runs(tmp_path: Path) -> None:
    done = _ensure_chromium(_fake_bin(tmp_path / "bin", uid=0))
    said, *apt = done.stderr.splitlines()
    assert said.startswith(
        "ensure-chromium: installing chromium chromium-headless-shell fonts-dejavu-core with apt"
    )
    assert [line.split()[:2] for line in apt] == [["APT-GET", "update"], ["APT-GET", "install"]]
    assert done.returncode == 1  # the fake installed nothing


def test_a_given_postgres_dsn_is_used_instead_of_a_throwaway_cluster() -> None:
    dsn = "postgresql://someone@127.0.0.1:1/elsewhere"
    done = subprocess.run(
        [str(ROOT / "scripts" / "pg-test-env"), "sh", "-c", 'echo "$CLAWCELL_TEST_POSTGRES_DSN"'],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "CLAWCELL_TEST_POSTGRES_DSN": dsn},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, dsn + "\n", "")


def test_a_throwaway_cluster_whose_port_was_taken_starts_on_another(tmp_path: Path) -> None:
    # The script picks a port free a moment ago; here its first pick is one this test holds,
    # as another process could have taken it before the server bound it.
    python = shutil.which("python3") or sys.executable
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        fakes = tmp_path / "bin"
        fakes.mkdir()
        (fakes / "python3").write_text(
            f'#!{BASH}\nif [ ! -e "{tmp_path}/picked" ]; then : > "{tmp_path}/picked"; '
            f'echo {port}; exit 0; fi\nexec {python} "$@"\n',
            "utf-8",
        )
        (fakes / "python3").chmod(0o755)
        env = {k: v for k, v in os.environ.items() if k != "CLAWCELL_TEST_POSTGRES_DSN"}
        done = subprocess.run(
            [
                str(ROOT / "scripts" / "pg-test-env"),
                "sh",
                "-c",
                'echo "$CLAWCELL_TEST_POSTGRES_DSN"',
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**env, "PATH": f"{fakes}:{env.get('PATH', '')}"},
        )
    assert (tmp_path / "picked").exists()  # the taken port was tried first
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("postgresql://clawcell@127.0.0.1:")
    assert f":{port}/" not in done.stdout


def _ensure_test_system(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return _script("ensure-test-system.sh", path, **env)


def test_make_test_installs_what_is_missing_with_one_apt_run_said_first(tmp_path: Path) -> None:
    done = _ensure_test_system(_fake_bin(tmp_path / "bin", uid=0))  # no chromium, no bwrap
    said, *apt = done.stderr.splitlines()
    assert said.startswith(
        "ensure-test-system: installing chromium chromium-headless-shell fonts-dejavu-core"
        " bubblewrap"
    )
    assert [line.split()[:2] for line in apt] == [["APT-GET", "update"], ["APT-GET", "install"]]
    assert done.returncode == 0  # the fake apt-get succeeds


def test_without_root_make_test_says_what_to_run_and_installs_nothing(tmp_path: Path) -> None:
    done = _ensure_test_system(_fake_bin(tmp_path / "bin", uid=1000))
    assert done.returncode == 1
    assert "sudo apt-get install chromium chromium-headless-shell fonts-dejavu-core" in done.stderr
    assert "APT-GET" not in done.stderr


def test_without_root_a_missing_postgresql_is_named_unless_a_dsn_is_given(tmp_path: Path) -> None:
    fake = _fake_bin(tmp_path / "bin", uid=1000)
    # present: only PostgreSQL can be missing
    for name in ("chromium", "chromium-headless-shell", "bwrap"):
        (fake / name).write_text(f"#!{BASH}\n", "utf-8")
        (fake / name).chmod(0o755)
    done = _ensure_test_system(fake)
    has_server = any(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    assert done.returncode == (0 if has_server else 1)
    assert ("sudo apt-get install postgresql" in done.stderr) is not has_server
    with_dsn = _ensure_test_system(fake, CLAWCELL_TEST_POSTGRES_DSN="postgresql://x@127.0.0.1:1/y")
    assert (with_dsn.returncode, with_dsn.stderr) == (0, "")
