"""The corpora of real cells in `tests/data/js_corpus/`: JavaScript cells and shell commands."""

from __future__ import annotations

from pathlib import Path

CORPUS = Path(__file__).parents[1] / "data" / "js_corpus"


def javascript_cells() -> list[str]:
    chunks = CORPUS.joinpath("javascript.js").read_text(encoding="utf-8").split("\n//----\n")
    return [chunk.strip("\n") for chunk in chunks[1:]]  # the first chunk is the file header


def shell_commands() -> list[str]:
    lines = CORPUS.joinpath("shell.txt").read_text(encoding="utf-8").splitlines()
    return [line.replace("\\n", "\n") for line in lines if line]
