"""The README's commands and its agent example do what the README says.

`tests/docs` runs every Python block and checks the output shown in `#>` lines; the agent
example is also checked here event by event."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
MAKEFILE = README.with_name("Makefile")


def _python_blocks() -> list[str]:
    return re.findall(r"```python[^\n]*\n(.*?)```", README.read_text("utf-8"), re.S)


def test_the_quick_start_names_exactly_the_two_make_targets_first() -> None:
    text = README.read_text("utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make demo", "make test"]


def test_the_makefile_has_the_targets_the_readme_promises() -> None:
    targets = set(re.findall(r"^([a-z]+):", MAKEFILE.read_text("utf-8"), re.M))
    assert {"demo", "test", "bench"} <= targets


def test_the_agent_example_runs_a_turn_against_an_openai_compatible_server(tmp_path: Path) -> None:
    from tests.agent.readme import run_agent_example

    example = _python_blocks()[0]
    assert "from clawcell.agent import Agent, OpenAIChatModel" in example
    out = run_agent_example(example, tmp_path)
    assert out[0] == {"type": "turn_started", "sessionId": "chat-42", "turnId": out[0]["turnId"],
                      "text": "Which shipments are unpaid?"}  # fmt: skip
    assert [e["type"] for e in out[1:4]] == ["cell_started", "cell_finished", "text_delta"]
    assert out[2]["envelope"]["value"] == ["b-202"]
    assert out[-3]["payloads"][0]["text"] == "b-202 is unpaid."
    assert out[-2]["type"] == "turn_finished"
    assert [m["role"] for m in out[-1]] == ["user", "assistant", "toolResult", "assistant"]
    assert (tmp_path / "state.db").exists()
