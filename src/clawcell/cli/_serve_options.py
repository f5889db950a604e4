"""The options of `clawcell serve`, declared without the `[ui]` extra.

`clawcell serve --help` lists them (and says which extra serving needs) on an install without
the extra; `clawcell.cli._serve`, which needs it, runs the command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._values import bind_host, port_number

__all__ = ["configure"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the `serve` command's options to `parser`."""
    parser.add_argument("--config", type=Path, help="a clawcell.toml with a [ui] table")
    parser.add_argument("--host", type=bind_host, help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, help="TCP port (default 8787; 0 picks a free one)"
    )
    parser.add_argument(
        "--embed-sandbox", choices=["strict", "scripts", "trusted"], help="canvas sandbox tier"
    )
    parser.add_argument(
        "--demo", action="store_true", help="serve a scripted demo agent (no model key needed)"
    )
    parser.add_argument(
        "--store",
        metavar="PATH_OR_URL",
        help="a SQLite file or postgresql:// URL for the [agent] table's agent (default: "
        "the config file's `store`, else memory)",
    )
