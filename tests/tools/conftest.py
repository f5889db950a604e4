"""Fixtures of the built-in tool tests: a workspace directory, a local server, a tool caller."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog

from ._server import LocalServer, local_server


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace root inside a parent that holds a `secret.txt` outside it."""
    (tmp_path / "secret.txt").write_text("outside\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with local_server() as state:
        yield state


def call(tools: Sequence[Tool], name: str, arguments: dict[str, Any] | None = None) -> Any:
    """Call one tool through a `Catalog` (contracts checked), on a fresh event loop."""
    return asyncio.run(Catalog(list(tools)).call(name, arguments or {}))
