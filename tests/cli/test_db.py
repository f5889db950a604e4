"""`clawcell db upgrade --store PATH_OR_URL`, through the real command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clawcell.cli._main import main
from tests.store.test_schema import version_1_file


def test_db_upgrade_brings_a_version_1_file_up_and_then_reports_it_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sessions.db"
    version_1_file(path)

    first = main(["db", "upgrade", "--store", str(path)])
    first_out = capsys.readouterr().out
    second = main(["db", "upgrade", "--store", str(path)])

    assert (first, first_out) == (0, f"{path}: schema version 1 → 4\n")
    assert (second, capsys.readouterr().out) == (0, f"{path}: schema version 4, up to date\n")


def test_db_upgrade_on_postgres_names_the_schema_and_never_the_url(
    postgres_dsn: str, postgres_schema: str
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "clawcell",
            "db",
            "upgrade",
            "--store",
            postgres_dsn,
            "--schema",
            postgres_schema,
        ],
        capture_output=True,
        text=True,
        check=False,
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"PostgreSQL schema {postgres_schema!r}: schema version 0 → 4\n"


def test_db_upgrade_of_an_unusable_file_fails_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"not a database" * 200)

    assert main(["db", "upgrade", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"clawcell db upgrade: --store {str(path)!r} is not a clawcell store; " + (
        "name a new file or one a clawcell command created.\n"
    )
    assert path.read_bytes() == b"not a database" * 200


def test_the_readme_command_upgrades_an_existing_file_and_refuses_a_missing_one(
    tmp_path: Path,
) -> None:
    clawcell = Path(sys.executable).with_name("clawcell")
    missing = subprocess.run(
        [clawcell, "db", "upgrade", "--store", "state.db"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and "so there is nothing to upgrade" in missing.stderr
    assert not (tmp_path / "state.db").exists()  # a typo must not start a new store
    version_1_file(tmp_path / "state.db")
    done = subprocess.run(
        [clawcell, "db", "upgrade", "--store", "state.db"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )

    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "state.db: schema version 1 → 4\n",
        "",
    )
    assert (tmp_path / "state.db").is_file()
