"""The README's commands and first example work as the README says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

README = Path(__file__).resolve().parents[1] / "README.md"
MAKEFILE = README.with_name("Makefile")


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text("utf-8"), re.S)


def test_the_quick_start_names_exactly_the_two_make_targets_first() -> None:
    text = README.read_text("utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make demo", "make test"]


def test_the_makefile_has_the_targets_the_readme_promises() -> None:
    targets = set(re.findall(r"^([a-z]+):", MAKEFILE.read_text("utf-8"), re.M))
    assert {"demo", "test", "bench"} <= targets


def test_the_first_python_example_prints_what_its_comment_says() -> None:
    example = _python_blocks()[0]
    done = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, timeout=120, check=True
    )
    first_line = done.stdout.splitlines()[0]
    assert first_line == "completed [{'id': 'a-101', 'eur': 145.25}]"
    assert done.stdout.splitlines()[1].startswith('{"status":"completed","replaySafe":false,')


def test_the_rich_output_example_builds_the_payload_it_shows() -> None:
    example = next(block for block in _python_blocks() if "build_reply" in block)
    namespace: dict[str, object] = {}
    exec(example, namespace)  # the README's own example code
    payloads = cast(Any, namespace["reply"]).payloads
    assert payloads[0]["text"] == "Weekly chart."
    assert payloads[0]["mediaUrls"] == ["/tmp/chart.png"]
