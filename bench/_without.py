"""Run a module as `python -m` does, with some installed modules made unimportable.

`python bench/_without.py httptools,uvloop clawcell mcp serve ...` runs `clawcell` as if
httptools and uvloop were not installed (an import of either raises `ImportError`), so
`compare_fastmcp.py` can measure each optional speed-up alone in one environment.
"""

from __future__ import annotations

import runpy
import sys


def main() -> None:
    blocked, module, *args = sys.argv[1:]
    for name in filter(None, blocked.split(",")):
        # `None` in `sys.modules` is how Python marks a module unimportable.
        sys.modules[name] = None  # pyright: ignore[reportArgumentType]
    sys.argv = [module, *args]
    sys.path[0] = ""  # the current directory, as `python -m` has it (not this file's)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
