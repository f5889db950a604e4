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


FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.M | re.S)
IMPORTED_EXTRA = {
    "openai": "openai",
    "anthropic": "anthropic",
    "pydantic_ai": "pydantic-ai",
    "agents": "openai-agents",
    "langchain_core": "langchain",
    "langchain": "langchain",
    "pydantic": "pydantic",
    "opentelemetry": "otel",
    "psycopg": "postgres",
    "playwright": "browser",
    "starlette": "ui",
    "uvicorn": "ui",
    "clawcell.ui": "ui",
    "clawcell.mcp": "mcp",
    "clawcell.mcp_server": "mcp",
}
"""The extra an example needs when it imports a module (or a package below it)."""
CALLED_EXTRA = {
    r"\bPostgresStore\(": "postgres",
    r"(?<![\w.])web\(": "web",
    r"(?<![\w.])browser\(": "browser",
    r"""executor=["']v8["']""": "v8",
}
"""The extra an example needs when it calls one of these."""
STDIO_COMMAND = re.compile(r"""StdioServer\(\s*command=["']([\w.-]+)["']""")


def _imported(source: str) -> set[str]:
    import ast

    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            names.add(node.module)
    return names


def _needs(source: str) -> set[str]:
    """The extras, and the programs a server command names, that `source` needs."""
    needed = {
        f"[{extra}]"
        for module in _imported(source)
        for prefix, extra in IMPORTED_EXTRA.items()
        if module == prefix or module.startswith(prefix + ".")
    }
    needed |= {
        f"[{extra}]" for pattern, extra in CALLED_EXTRA.items() if re.search(pattern, source)
    }
    return needed | set(STDIO_COMMAND.findall(source))


def _lead_in(text: str, start: int) -> str:
    """What a reader has read before the block: its page's introduction (before the first
    `## `), and its own section from the last heading to the block."""
    before = text[:start]
    intro = before.split("\n## ", 1)[0]
    headings = list(re.finditer(r"^#{2,6} ", before, re.M))
    section = before[headings[-1].start() :] if headings else ""
    return intro + section


SHELL_FENCE = re.compile(r"^```(?:bash|sh|shell)\n(.*?)^```", re.M | re.S)
COMMAND_EXTRA = {
    r"clawcell serve\b": "ui",
    r"clawcell mcp serve\b": "mcp",
    r"--model openai:": "openai",
    r"--model anthropic:": "anthropic",
    r"postgresql://": "postgres",
}
"""The extra a shell command needs (`serve` without `[ui]` says so and exits)."""


def _command_needs(source: str) -> set[str]:
    """The extras a shell block needs and does not install itself."""
    installed = {extra for group in re.findall(INSTALL, source) for extra in group.split(",")}
    return {
        f"[{extra}]"
        for pattern, extra in COMMAND_EXTRA.items()
        if re.search(pattern, source) and extra not in installed
    }


NEEDS = [
    pytest.param(text, match.start(), id=f"{name}:{text[: match.start()].count(chr(10)) + 1}")
    for name, text in TEXTS.items()
    for fence, needs in ((FENCE, _needs), (SHELL_FENCE, _command_needs))
    for match in fence.finditer(text)
    if needs(match.group(1))
]


@pytest.mark.parametrize(("text", "start"), NEEDS)
def test_each_block_needing_an_extra_or_a_server_says_so_before_it(text: str, start: int) -> None:
    """A reader who runs the block where it stands has been told what to install first."""
    python, shell = FENCE.match(text, start), SHELL_FENCE.match(text, start)
    block = python or shell
    assert block is not None
    needed = (_needs if python else _command_needs)(block.group(1))
    lead_in = _lead_in(text, start)
    unsaid = sorted(need for need in needed if need not in lead_in)
    assert unsaid == [], f"say before the block that it needs {unsaid} (and how to add it)"


def test_there_are_blocks_that_need_extras() -> None:
    assert len(NEEDS) >= 10


def test_shell_blocks_run_the_checkouts_command_outside_the_cli_page() -> None:
    """After `make demo` the command is `.venv/bin/clawcell`; only docs/cli.md, which says so
    first, writes it bare."""
    bare = [
        f"{name}: {line}"
        for name, text in TEXTS.items()
        if name != "docs/cli.md"
        for match in SHELL_FENCE.finditer(text)
        for line in match.group(1).splitlines()
        if re.search(r"(?:^|\|\s*)clawcell\s", line)
    ]
    assert bare == [], "write `.venv/bin/clawcell` (the command `make demo` installs)"
