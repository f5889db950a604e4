"""Scripts that read the shared oracle and corpus find them at `../shared` beside the checkout."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def _load(relative: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("script", "names"),
    [
        ("bench/bench_reply.py", ["ORACLE"]),
        ("scripts/oracle/record_code_mode.py", ["ORACLE"]),
        ("scripts/oracle/record_rich_output.py", ["ORACLE", "CORPUS"]),
    ],
)
def test_the_shared_oracle_is_looked_for_beside_the_checkout(script: str, names: list[str]) -> None:
    module = _load(script)
    for name in names:
        path: Path = getattr(module, name)
        assert path.is_relative_to(SHARED / "oracle"), f"{script}: {name} = {path}"
