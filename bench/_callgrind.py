"""Instructions by stretch under callgrind, for `compare_instructions.py` and
`compare_leg_split.py`: the child (`_instructions_child.py`, `_leg_split_child.py`) ends each
stretch by calling `math.lgamma`, which callgrind dumps before, and writes the stretches'
labels, in order, to the file `$LABELS`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
_DUMP = re.compile(r"out\.(\d+)")


def start(source: Path, child: Path, args: list[str], scratch: Path) -> subprocess.Popen[bytes]:
    """`child` with `args` under callgrind, importing clawcell from `source`; its dumps and
    labels go to `scratch`."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    env = {
        **os.environ,
        "PYTHONPATH": f"{source}{os.pathsep}{BENCH}",
        "PYTHONHASHSEED": "0",
        "LABELS": str(scratch / "labels"),
    }
    command = [valgrind, "--tool=callgrind", "--dump-before=math_lgamma"]
    command += [f"--callgrind-out-file={scratch}/out", sys.executable, str(child), *args]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(name: str, process: subprocess.Popen[bytes]) -> None:
    """Wait for a `start`ed run; exit with the end of its output if it failed."""
    _, stderr = process.communicate()
    if process.returncode != 0:
        sys.exit(f"{name}: callgrind run failed:\n{stderr.decode()[-2000:]}")


def counts(scratch: Path) -> dict[str, list[int]]:
    """Instructions of each dump, by the label of its stretch (`warm:` stretches and the
    closing `end` left out)."""
    labels = (scratch / "labels").read_text().split()
    dumps = sorted(
        (int(m.group(1)), p) for p in scratch.iterdir() if (m := _DUMP.fullmatch(p.name))
    )
    found: dict[str, list[int]] = {}
    for (_, dump), label in zip(dumps, labels, strict=False):
        with dump.open() as lines:
            total = next(int(line.split()[1]) for line in lines if line.startswith("summary:"))
        if not label.startswith("warm:") and label != "end":
            found.setdefault(label, []).append(total)
    return found
