"""Run every benchmark script in `bench/` one after the other (`make bench`).

Each script prints its own table and writes `bench/results/<name>.json` (and `.md`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed: list[str] = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n## {script.stem}\n", flush=True)
        if subprocess.run([sys.executable, str(script)], check=False).returncode != 0:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
