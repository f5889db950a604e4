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


_OBJECT = re.compile(r"c?ob=\((\d+)\)(?: (.*))?")
PARTS: tuple[str, ...] = (
    "Python interpreter",
    "guest (wasm)",
    "ctypes + libffi",
    "wasmtime",
    "other",
)


def _part(path: str) -> str:
    """Which part of the process an object file is (the compiled reactor has no file name
    callgrind can show: its code is the unnamed object)."""
    name = path.rsplit("/", 1)[-1]
    if not name or name.startswith("???") or name.endswith(".cwasm"):
        return "guest (wasm)"
    if name.startswith(("libpython", "python")):
        return "Python interpreter"
    if "ctypes" in name or "libffi" in name:
        return "ctypes + libffi"
    if "wasmtime" in name:
        return "wasmtime"
    return "other"


def parts(dump: Path) -> dict[str, int]:
    """The self cost of one dump by part of the process (`PARTS`): each cost line counts for
    the object file of the function it is in (a call line's cost, the callee's inclusive
    cost, is left out: it is counted where it ran)."""
    names: dict[str, str] = {}
    found = dict.fromkeys(PARTS, 0)
    current = "other"
    after_call = False
    with dump.open(errors="replace") as lines:
        for line in lines:
            if line.startswith(("ob=", "cob=")):
                match = _OBJECT.match(line.strip())
                if match is not None:
                    if match.group(2):
                        names[match.group(1)] = match.group(2)
                    if line.startswith("ob="):
                        current = _part(names.get(match.group(1), ""))
            elif line.startswith("calls="):
                after_call = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if after_call:
                    after_call = False
                    continue
                fields = line.split()
                if len(fields) >= 2:
                    found[current] += int(fields[1])
    return found


def dumps_by_label(scratch: Path) -> dict[str, list[Path]]:
    """The dumps of each measured stretch (as `counts` reads them), by label."""
    labels = (scratch / "labels").read_text().split()
    dumps = sorted(
        (int(m.group(1)), p) for p in scratch.iterdir() if (m := _DUMP.fullmatch(p.name))
    )
    found: dict[str, list[Path]] = {}
    for (_, dump), label in zip(dumps, labels, strict=False):
        if not label.startswith("warm:") and label != "end":
            found.setdefault(label, []).append(dump)
    return found
