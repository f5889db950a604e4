"""What the README's quick start says about `make demo` and `make test` is what they do."""

from __future__ import annotations

import re
from pathlib import Path

from clawcell.cli import _demo  # pyright: ignore[reportPrivateUsage]

ROOT = Path(__file__).resolve().parents[2]


def _quick_start() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    match = re.search(r"^## Quick start\n(.*?)^## ", text, re.S | re.M)
    assert match is not None
    return " ".join(match.group(1).split())


def _apt_packages(script: str) -> set[str]:
    """The packages a script's `apt-get install` commands (not its messages) install."""
    text = (ROOT / "scripts" / script).read_text("utf-8")
    arrays: dict[str, str] = {}
    for name, words in re.findall(r"(\w+)\+?=\(([^)]*)\)", text):  # `a=(...)` and `a+=(...)`
        arrays[name] = f"{arrays.get(name, '')} {words}"
    found: set[str] = set()
    for line in re.findall(r"^\s*(?:\w+=\w+ )?apt-get install ([^\n>]*)", text, re.M):
        for word in line.split():
            if word.startswith('"${') and word.endswith('[@]}"'):
                found |= set(arrays[word[3:-5]].split())
            elif not word.startswith("-"):
                found.add(word)
    return found


def test_the_demo_is_four_cells_and_an_agent_turn_as_the_readme_says() -> None:
    quick_start = _quick_start()
    assert len(_demo._STEPS) == 4  # pyright: ignore[reportPrivateUsage]
    assert "`make demo` prints four cells and their envelopes" in quick_start
    assert "then one agent turn" in quick_start


def test_the_readme_names_every_package_make_test_installs_and_the_command_without_root() -> None:
    packages = _apt_packages("ensure-test-system.sh")
    assert packages == {
        "chromium",
        "chromium-headless-shell",
        "fonts-dejavu-core",
        "bubblewrap",
        "postgresql",
    }
    # the scripts each test file's own setup names install nothing else
    alone = {"ensure-chromium.sh", "ensure-bubblewrap.sh", "pg-test-env"}
    assert set().union(*(_apt_packages(script) for script in alone)) == packages
    [command] = re.findall(r"`sudo apt-get install ([^`]*)`", _quick_start())
    assert set(command.split()) == packages
    assert "CLAWCELL_TEST_POSTGRES_DSN" in _quick_start()
