"""Every Python block in README.md and docs/*.md runs as written.

pytest-examples finds the blocks and runs each one as `__main__` in this process (fast: no
new interpreter per block). A block whose output is shown in `#>` lines under its `print`
calls is run with the print check, so the output the page shows is the output it prints.
An example that talks to no model runs with no API key in the environment, as it does for a
reader who has none. A block fenced as `python {continues="NAME"}` runs after the block fenced
`python {name="NAME"}` on the same page, with that block's globals. Model examples reach a
scripted loopback server through `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` (see `_models`).
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import sys
import sysconfig
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples, run_code

from tests.agent._wire import Answer

from ._models import chat_stream, messages_json, responses_json, serving

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = [example for page in PAGES for example in find_examples(page)]

MODELS: list[tuple[str, Callable[[], list[Answer]]]] = [
    ("OpenAIChatModel(", chat_stream),
    ("pydantic_ai_toolset(", responses_json),
    ("openai_agents_tools(", responses_json),
    ("anthropic_runner_tools(", messages_json),
]
"""Which scripted conversation an example's model gets, by the adapter the example uses."""

SLOW = [
    "from pydantic_ai",
    "from agents",
    "import asyncio, anthropic",
    "StdioServer(",
    "CodeModeServer(",
    "browser(settings=",
]
"""Blocks that import a large SDK, start an MCP server process or Chromium (seconds each)."""

GENERATED = [
    (re.compile(r"\bcm_[0-9A-Za-z_-]{6,}"), "cm_…"),
    (re.compile(r"""(["']counterScope["']: ?["'])[^"']+"""), r"\1…"),
]
"""Ids that differ on every run; the pages show them as `…`."""


def _params() -> list[Any]:
    return [
        pytest.param(
            example,
            id=str(example),
            marks=[pytest.mark.slow] if any(m in example.source for m in SLOW) else [],
        )
        for example in EXAMPLES
    ]


def _settings(example: CodeExample) -> dict[str, str]:
    return example.prefix_settings()


def _named(example: CodeExample) -> CodeExample:
    name = _settings(example)["continues"]
    found = [
        other
        for other in EXAMPLES
        if other.path == example.path
        and other.start_line < example.start_line
        and _settings(other).get("name") == name
    ]
    assert found, f"{example}: no earlier block on this page is fenced with name={name!r}"
    return found[-1]


def _chain(example: CodeExample) -> list[CodeExample]:
    """The blocks to run before `example`: the block it continues, and that block's own."""
    chain: list[CodeExample] = []
    while "continues" in _settings(example):
        example = _named(example)
        chain.insert(0, example)
    return chain


def _normalise(text: str) -> str:
    for pattern, shown in GENERATED:
        text = pattern.sub(shown, text)
    return text


def _no_rewrite(*_: object) -> None:
    return None


@pytest.fixture
def docs_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """A scratch directory, no real API keys, and `__main__` restored after the example."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-docs-test")
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    monkeypatch.setenv("DOCS_TOKEN", "docs-test-token")  # docs/mcp.md's HTTP server
    # as for `.venv/bin/python example.py` with the venv not activated: `mcp-server-time` and
    # friends are found beside this Python (clawcell.mcp), not on the PATH
    scripts = {str(Path(sys.executable).parent), sysconfig.get_path("scripts")}
    path = [folder for folder in os.environ["PATH"].split(os.pathsep) if folder not in scripts]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    # pytest-examples rewrites a failing example's traceback into code objects that Python
    # 3.11's traceback printer cannot walk (StopIteration); the plain one names the example's
    # file, which holds the block's source, so it reads as well.
    monkeypatch.setattr(run_code, "create_example_traceback", _no_rewrite)
    # as `python example.py < /dev/null`: a server on stdio ends when its input does
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO()))
    main = sys.modules["__main__"]
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _model_server(example: CodeExample, stack: ExitStack, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Serve `example`'s scripted model, if it talks to one; whether it does."""
    for marker, script in MODELS:
        if marker in example.source:
            server = stack.enter_context(serving(script()))
            monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            return True
    return False


def _shown_output(example: CodeExample) -> Any:
    """The JSON block right after `example` when the page introduces it as the output."""
    after = example.path.read_text("utf-8")[example.end_index :]
    found = re.match(r"```\n\nOutput\b[^\n]*\n\n```json\n(.*?)```", after, re.S)
    return None if found is None else json.loads(found.group(1))


@pytest.mark.parametrize("example", _params())
def test_the_example_runs_as_written(
    example: CodeExample,
    eval_example: EvalExample,
    docs_env: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    eval_example.set_config(line_length=100)
    eval_example.print_callback = _normalise
    namespace: dict[str, Any] = {}
    with ExitStack() as stack:
        talks = [_model_server(block, stack, monkeypatch) for block in [*_chain(example), example]]
        if not any(talks):  # an example without a model runs for a reader without a key
            monkeypatch.delenv("OPENAI_API_KEY")
            monkeypatch.delenv("ANTHROPIC_API_KEY")
        for block in _chain(example):
            namespace = eval_example.run(block, module_globals=namespace)
        if "#>" not in example.source:
            capsys.readouterr()
            eval_example.run(example, module_globals=namespace)
            if (shown := _shown_output(example)) is not None:
                assert ast.literal_eval(capsys.readouterr().out) == shown
        elif eval_example.update_examples:  # `pytest --update-examples` rewrites the `#>` lines
            eval_example.run_print_update(example, module_globals=namespace)
        else:
            eval_example.run_print_check(example, module_globals=namespace)


def _statements(example: CodeExample) -> list[ast.stmt]:
    return ast.parse(example.source).body


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_no_top_level_expression_is_left_unprinted(example: CodeExample) -> None:
    bare = [
        ast.get_source_segment(example.source, node)
        for node in _statements(example)
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call | ast.Constant)
    ]
    assert bare == [], f"{example}: a script does not show a bare expression; print it"


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_no_example_passes_an_ellipsis_for_a_value(example: CodeExample) -> None:
    values = [
        element
        for node in ast.walk(ast.parse(example.source))
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Call)
        for element in (
            [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node, ast.Call)
            else node.elts
        )
        if isinstance(element, ast.Constant) and element.value is Ellipsis
    ]
    assert values == [], f"{example}: `...` is not a value a user can pass"


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_printed_output_is_shown_in_checked_comments(example: CodeExample) -> None:
    claimed = [line for line in example.source.splitlines() if re.search(r"print\(.*\)\s+#", line)]
    assert claimed == [], f"{example}: show output in `#>` lines under the print (they are checked)"


def test_every_python_fence_is_collected() -> None:
    fences = sum(len(re.findall(r"^```python", page.read_text("utf-8"), re.M)) for page in PAGES)
    assert len(EXAMPLES) == fences > 30


def test_each_continuation_says_which_block_it_continues() -> None:
    continuations = [e for e in EXAMPLES if "continues" in _settings(e)]
    assert continuations, "no continuation to check"
    for example in continuations:
        name = _settings(example)["continues"]
        _named(example)
        first = example.source.lstrip("\n").splitlines()[0]
        assert first.startswith("#") and name in first, f"{example}: say `# ... {name} ...` first"


def _subscripts(source: str, key: str) -> int:
    return sum(
        1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == key
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_an_example_that_reads_a_value_shows_a_failed_cells_error(example: CodeExample) -> None:
    """A failed envelope has `error` and no `value`: reading `["value"]` alone would answer a
    reader whose cell failed with `KeyError: 'value'` instead of the reason."""
    if _subscripts(example.source, "value"):
        assert _subscripts(example.source, "error"), (
            f'{example}: check `envelope["status"] == "failed"` and show `envelope["error"]` '
            'before reading `envelope["value"]`'
        )
