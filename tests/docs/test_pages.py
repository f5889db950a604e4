"""The non-Python blocks and install lines of README.md and docs/*.md.

TOML blocks parse (they are what a `clawcell.toml` may hold); every install command is one
that works from a checkout or a built wheel and names an extra pyproject.toml defines.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEXTS = {page.relative_to(ROOT).as_posix(): page.read_text("utf-8") for page in PAGES}
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
EXTRAS = set(PROJECT["optional-dependencies"])
WHEEL = f"dist/clawcell-{PROJECT['version']}-py3-none-any.whl"
INSTALL = rf"pip install '(?:-e \.|{re.escape(WHEEL)})\[([^\]]+)\]'"
"""The two install forms: into a checkout's editable install, or with a built wheel."""
TOML = [
    pytest.param(block, id=f"{name}:{text[: match.start()].count(chr(10)) + 1}")
    for name, text in TEXTS.items()
    for match in re.finditer(r"^```toml\n(.*?)^```", text, re.M | re.S)
    for block in [match.group(1)]
]


@pytest.mark.parametrize("block", TOML)
def test_each_toml_block_parses(block: str) -> None:
    assert isinstance(tomllib.loads(block), dict)


def test_there_are_toml_blocks_to_check() -> None:
    assert len(TOML) >= 5


def test_no_page_says_to_install_clawcell_from_an_index() -> None:
    wrong = [
        f"{name}: {line.strip()}"
        for name, text in TEXTS.items()
        for line in text.splitlines()
        if re.search(r"pip install\s+'?clawcell\b", line)
        and ".venv/bin/pip install -e" not in line  # a message that names both ways
    ]
    assert wrong == [], "say `.venv/bin/pip install -e '.[EXTRA]'` (see README, Adding an extra)"


def test_every_extra_a_page_installs_exists() -> None:
    named = {
        extra
        for text in TEXTS.values()
        for group in re.findall(INSTALL, text)
        for extra in group.split(",")
    }
    assert named, "no install line found"
    assert named <= EXTRAS


def test_the_readme_installs_the_wheel_this_version_builds() -> None:
    assert f"pip install '{WHEEL}[ui]'" in TEXTS["README.md"]


def test_the_readme_lists_every_extra_but_test() -> None:
    section = TEXTS["README.md"].split("## Adding an extra", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([a-z0-9-]+)`", section.strip().split("\n\n", 1)[0]))
    assert listed == EXTRAS - {"test"}


MODEL_NAME = re.compile(r"\b(?:gpt-\d[\w.-]*|claude-[\w.-]+|gemini-[\w.-]+|o[1-9](?:-\w+)?)\b")


def test_no_page_names_a_model_a_provider_may_deprecate() -> None:
    """Examples write `your-model`: a real name becomes one the provider's SDK warns about."""
    named = {
        name: sorted(set(MODEL_NAME.findall(text)))
        for name, text in TEXTS.items()
        if name != "docs/benchmarks.md"  # measurements name the models they were measured with
    }
    assert {name: found for name, found in named.items() if found} == {}
