"""The generated declarations of the built-in tools, as `docs/tools.md` shows them."""

from __future__ import annotations

import tempfile

from clawcell import Tool
from clawcell.catalog import Catalog
from clawcell.store import MemoryStore
from clawcell.tools import SearxngProvider, automations, browser, shell, web, workspace

ORDER = [
    "read", "write", "edit", "apply_patch", "list", "grep", "find", "exec", "process",
    "automations", "web_fetch", "web_search", "browser",
]  # fmt: skip
HINTLESS = ["automations", "process"]
"""Tools whose whole result union is over the 800-character hint budget: `-> ?` (spec §8.2)."""


def builtin_tools() -> list[Tool]:
    """Every built-in tool (the workspace root does not change the contracts)."""
    with tempfile.TemporaryDirectory() as root:
        tools = [*workspace(root), *shell(root), *automations(MemoryStore())]
    return [*tools, *web(search=SearxngProvider(url="http://127.0.0.1:8888")), browser()]


def declarations() -> dict[str, str]:
    """`tools/<name>.d.ts` of each built-in tool, in the order the docs use."""
    catalog = Catalog(builtin_tools())
    return {name: catalog.api_read(f"tools/{name}.d.ts")["content"] for name in ORDER}


def quick_index() -> list[str]:
    """The quick-index lines the `exec` description carries for the built-in tools."""
    description = Catalog(builtin_tools()).model_tools("anthropic")[0]["description"]
    return [line for line in description.splitlines() if line.startswith("- ")]


if __name__ == "__main__":
    for name, text in declarations().items():
        print(f"### `{name}`\n\n```ts\n{text.rstrip()}\n```\n")
    print("\n".join(quick_index()))
