"""The model-facing `exec` and `wait` tool definitions (spec §2.1, §2.2, §2.6).

The `exec` description is regenerated from the catalog: budgets from `Limits`, optional
guidance for a shell tool and API files, then the quick index. Definitions are plain dicts with
a JSON Schema `input_schema`; `to_openai` / `to_anthropic` give the two common wire shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._limits import Limits

__all__ = ["exec_description", "exec_tool", "to_anthropic", "to_openai", "wait_tool"]

WAIT_DESCRIPTION: Final = (
    'Resume only when the outer exec result has status "waiting", using its top-level runId. '
    "A completed exec may return a still-running tool operation inside value; manage that "
    "operation through its enabled tool in a new exec. Never pass a nested sessionId or "
    "process ID to wait."
)
_CODE_DESCRIPTION: Final = (
    "Required JavaScript; no TypeScript annotations, Python, shell, `require`, or `import`. "
    "Use `return value`; a trailing expression yields `null`."
)
_RESTART_DESCRIPTION: Final = (
    "Do not set on a new exec. Set true only when OpenClaw explicitly requests replay after a "
    "gateway restart; never for write, edit, exec, or any mutation. True rejects unmarked or "
    "namespace surfaces."
)
_TITLE_DESCRIPTION: Final = (
    'Short purpose of this program for display, at most 120 characters (e.g. "Inspect the '
    'dependency graph").'
)


def exec_description(
    limits: Limits, *, quick_index: str, has_tools: bool, shell_tool: str | None = None
) -> str:
    """The generated `exec` description (content of spec §2.6, recorded wording)."""
    shell = f" Use the shell tool `{shell_tool}` for heavier computation." if shell_tool else ""
    api = (
        " Read types with `API.list(prefix?)` and `API.read(path)`; native tools: `tools/`. "
        "Types are documentation; write plain JavaScript."
        if has_tools
        else ""
    )
    text = (
        "Run JavaScript in OpenClaw code mode. Guest work and inline tool waits share a "
        f"{limits.timeout_ms} ms wall-clock budget per `exec`/`wait`; approvals pause it. Guest "
        "computation over this budget times out; pending tools may return `waiting` for `wait`."
        f"{shell} Enabled tools are async global functions. Await dependent calls in order; "
        "independent calls may run with Promise.all. Declared output fields may feed later "
        "calls in the same program; avoid extra inspection calls. Emit output with "
        "`text(value)` or `json(value)`. Return the final value, otherwise `null`. Oversized "
        "final objects/arrays may return `value.reference`. `-> ?` means unknown output: do "
        "not feed it into guessed field-dependent logic in the same program. Return it raw or "
        "`await results.save(value)`; use a later `exec` for dependent composition. Save "
        "returns `{id,bytes,count,shape,preview,previewTruncated}`: emit that descriptor "
        "directly; full JSON stays stored. Load/delete this run via `results.load(id)`/"
        '`results.delete(id)`; contract: `API.read("results.d.ts")`. For omitted tools, use '
        "`catalog.search(query)`; results are callable: `const [tool] = await "
        'catalog.search("..."); return await tool({...});`. Use handle `describe()` for '
        "schemas. `setTimeout` and `clearTimeout` work. `TextEncoder`/`TextDecoder` convert "
        "local text and bytes. Console log/info/warn/error/debug emit bounded text. Nested "
        "calls enforce normal tool policy and approvals. Tool failures are catchable; inspect "
        "possible effects before retrying. Nested results are intact or throw resource errors. "
        f"Cell reply inbox: {limits.inbox_bytes} bytes; consume replies or paginate if full. "
        f"Output/value/errors share {limits.max_output_bytes} bytes across waits. Other "
        "truncation reports original JSON prefixes/omitted bytes; rerun with narrower args. "
        "Output is incremental; changed cumulative summaries replace earlier ones. Node.js "
        "modules and `require`/`import` are NOT available; use tools for external actions."
        f"{api} `code` is JavaScript, never a shell command; do not retry failed shell source."
    )
    return f"{text}\n\n{quick_index}" if quick_index else text


def exec_tool(description: str) -> dict[str, Any]:
    """The `exec` definition: `code` required, `title` ≤ 120 chars and `restartSafe` optional."""
    return {
        "name": "exec",
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "maxLength": 120, "description": _TITLE_DESCRIPTION},
                "code": {"type": "string", "description": _CODE_DESCRIPTION},
                "restartSafe": {"type": "boolean", "description": _RESTART_DESCRIPTION},
            },
            "required": ["code"],
        },
    }


def wait_tool() -> dict[str, Any]:
    """The `wait` definition: `runId` required."""
    return {
        "name": "wait",
        "description": WAIT_DESCRIPTION,
        "input_schema": {
            "type": "object",
            "properties": {
                "runId": {
                    "type": "string",
                    "description": (
                        'Top-level runId from an exec result with status "waiting", never a '
                        "nested tool sessionId."
                    ),
                }
            },
            "required": ["runId"],
        },
    }


def to_openai(definition: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI Chat Completions / Responses `{"type": "function", "function": {...}}` shape."""
    return {
        "type": "function",
        "function": {
            "name": definition["name"],
            "description": definition["description"],
            "parameters": definition["input_schema"],
        },
    }


def to_anthropic(definition: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic Messages API `{"name", "description", "input_schema"}` shape."""
    return {
        "name": definition["name"],
        "description": definition["description"],
        "input_schema": definition["input_schema"],
    }
