"""Every failure a person can cause at the command line, as docs/cli.md's Errors table lists
it: each row runs as written, in a new process (forked from one that imported the command line
once, `_forks`), and must exit with the documented status, say one line on stderr (with the
documented words, never a traceback), and create or change no file."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from clawcell.cli._main import EXIT_BUG, EXIT_INTERRUPTED, main
from tests.cli._forks import Done, Forks
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "cli.md"
_WITHOUT_UI = "import sys; sys.modules['nh3'] = None; "
_MAIN = "from clawcell.cli._main import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class Row:
    exit: int
    when: str
    argv: list[str]
    says: str


def _code(cell: str) -> str:
    return cell.strip().strip("`").replace("``", "").strip()


def rows() -> list[Row]:
    """The rows of the Errors table in docs/cli.md."""
    text = DOC.read_text("utf-8").split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    found: list[Row] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 4 or not cells[0].isdigit():
            continue
        command = shlex.split(_code(cells[2]))
        assert command[0] == "clawcell", line
        says = _code(cells[3]) if cells[3].startswith("`") else ""
        found.append(Row(int(cells[0]), cells[1], command[1:], says))
    return found


def _make_fixtures(directory: Path) -> None:
    from clawcell.store import SQLiteStore

    files = {
        "ok.js": b"return 1;",
        "empty.js": b" \n",
        "store.js": b'await store("k", 1); return await load("k");',
        "fail.js": b"throw new Error('on purpose');",
        "latin1.js": "return 'caf\u00e9';".encode("latin-1"),
        "latin1.toml": "session = 'caf\u00e9'".encode("latin-1"),
        "corrupt.db": bytes(range(256)) * 8,
        "broken_tools.py": b"raise RuntimeError('broken on purpose')\n",
        "tools.py": b"TOOLS = []\n",
        "broken.toml": b"tools = [\n",
        "broken.json": b"{bad",
        "servers5.json": b'{"mcpServers": 5}',
        "sessions.toml": b"[builtin_tools.sessions]\nsee = ['*']\n",
    }
    for name, data in files.items():
        (directory / name).write_bytes(data)
    import sqlite3

    other = sqlite3.connect(directory / "other.db")
    other.execute("CREATE TABLE notes (body TEXT)")
    other.commit()
    other.close()

    async def new_store() -> None:
        async with SQLiteStore(directory / "clawcell.db") as store:
            await store.upgrade()

    run(new_store())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("errors")
    _make_fixtures(directory)
    return directory


def _snapshot(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _environment(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("CLAWCELL_DEBUG", None)
    env["CLAWCELL_STATE_DIR"] = str(tmp / "state")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return env


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forks]:
    forks = Forks(_environment(tmp_path_factory.mktemp("forks")))
    try:
        yield forks
    finally:
        forks.close()


def _run(forks: Forks, argv: list[str], cwd: Path, env: dict[str, str]) -> Done:
    without_ui = argv[:1] == ["serve"] and "--demo" in argv
    return forks.run(argv, cwd=cwd, env=env, without_ui=without_ui)


ROWS = rows()


def test_the_table_lists_every_kind_of_failure() -> None:
    assert len(ROWS) >= 30
    assert {r.exit for r in ROWS} == {1, 2}
    assert len({" ".join(r.argv) for r in ROWS}) == len(ROWS), "each example once"


@pytest.mark.parametrize("row", ROWS, ids=[r.when for r in ROWS])
def test_each_documented_error_is_one_line_with_its_exit_status(
    row: Row, workdir: Path, tmp_path: Path, forks: Forks
) -> None:
    before = _snapshot(workdir)
    done = _run(forks, row.argv, workdir, _environment(tmp_path))
    assert done.returncode == row.exit, done.stderr
    assert "Traceback" not in done.stderr
    if row.exit == 1:
        assert done.stderr == ""
        assert '"status": "failed"' in done.stdout
    else:
        assert done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.endswith("\n"), done.stderr
        assert done.stderr.startswith("clawcell"), done.stderr
        assert row.says in done.stderr
    assert _snapshot(workdir) == before, "a failed command must create or change nothing"
    assert not (tmp_path / "state").exists()


def test_ctrl_c_exits_130_with_one_line(workdir: Path, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; " + _MAIN, "repl"],
        cwd=workdir,
        env=_environment(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("return 1;\n\n")
    process.stdin.flush()
    assert process.stdout.readline() == "-- completed\n"  # the REPL is up and waiting
    process.send_signal(signal.SIGINT)
    # The input stays open: Ctrl-C at the prompt must end the REPL by itself. (A read on the
    # event loop's thread held the interrupt until the next line, and the end of input that
    # `communicate` gave then made the REPL exit 0.)
    assert process.wait(timeout=60) == EXIT_INTERRUPTED == 130
    assert process.stderr is not None and process.stderr.read() == "clawcell: interrupted\n"
    process.stdin.close()
    process.stdout.close()
    process.stderr.close()


def test_an_unexpected_error_is_one_line_with_the_debug_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import clawcell.cli._main as entry

    def broken(_: object) -> int:
        raise ZeroDivisionError("a bug\nover two lines")

    commands = tuple(
        c if c.name != "demo" else type(c)(name="demo", help="", configure=c.configure, run=broken)
        for c in entry.COMMANDS
    )
    monkeypatch.setattr(entry, "COMMANDS", commands)
    monkeypatch.delenv("CLAWCELL_DEBUG", raising=False)
    assert main(["demo"]) == EXIT_BUG
    assert capsys.readouterr().err == (
        "clawcell: unexpected error: ZeroDivisionError: a bug over two lines; run with "
        "CLAWCELL_DEBUG=1 for the traceback and report it.\n"
    )
    monkeypatch.setenv("CLAWCELL_DEBUG", "1")
    assert main(["demo"]) == EXIT_BUG
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("for the traceback and report it.\n")


def test_a_corrupt_store_is_refused_before_any_background_work(
    workdir: Path, tmp_path: Path, forks: Forks
) -> None:
    argv = ["run", "store.js", "--store", "corrupt.db"]
    done = _run(forks, argv, workdir, _environment(tmp_path))
    assert done.stderr == (
        f"clawcell: --store {str(workdir / 'corrupt.db')!r} is not a clawcell store; name a "
        "new file or one a clawcell command created.\n"
    )
    # and a good store in the same directory still works
    done = _run(forks, ["run", "store.js", "--store", "fresh.db"], workdir, _environment(tmp_path))
    try:
        assert (done.returncode, done.stderr) == (0, "")
        assert re.search(r'"value": 1\b', done.stdout)
    finally:
        for leftover in workdir.glob("fresh.db*"):
            leftover.unlink()


def test_serve_help_without_the_ui_extra_lists_its_options_and_names_the_extra(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_UI + _MAIN, "serve", "--help"],
        env=_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "needs the [ui] extra" in done.stdout
    for option in ("--config", "--host", "--port", "--demo", "--store", "--embed-sandbox"):
        assert option in done.stdout


def test_ctrl_c_on_serve_exits_130_after_the_server_stops(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; " + _MAIN, "serve", "--demo", "--port", "0"],
        env=_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith("http://127.0.0.1:")  # serving
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == EXIT_INTERRUPTED
    assert process.stderr.read() == "clawcell: interrupted\n"
    process.stdout.close()
    process.stderr.close()
