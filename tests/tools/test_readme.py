"""The README's built-in tools example prints what its comment says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_tools_example_lists_the_tools_it_promises(tmp_path: Path) -> None:
    blocks = re.findall(r"```python[^\n]*\n(.*?)```", README.read_text("utf-8"), re.S)
    example = next(block for block in blocks if "from clawcell.tools import" in block)
    promised = example.strip().splitlines()[-1].removeprefix("#> ")
    done = subprocess.run(
        [sys.executable, "-c", example],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == promised
