"""No object of the V8 worker's own realm is reachable from a cell (issue 35).

Each cell's context has a global object of its own realm (not the worker's object behind
interceptors), its stack hook hands a cell copies of the frames made in its realm, and what
the worker's functions throw is never let through. `realm_walk.js` walks every value a cell
can reach and lists those whose prototype chain ends in another realm's `Object.prototype`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawcell import CodeMode, Limits
from tests.conftest import echo_tool, run

WALK = Path(__file__).with_name("realm_walk.js").read_text("utf-8")


def _cells(*codes: str) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        async with CodeMode([echo_tool()], executor="v8", limits=Limits(timeout_ms=60_000)) as mode:
            return [await mode.exec(code) for code in codes]

    return run(main())


def test_no_value_a_cell_can_reach_is_of_the_worker_s_realm() -> None:
    [envelope] = _cells(WALK)
    assert envelope["status"] == "completed", envelope.get("error")
    value = envelope["value"]
    assert value["foreign"] == []
    # The walk reached what it set out to: the globals and the API, frames, deep errors.
    assert value["walked"] > 1000
    assert value["sites"] > 0
    assert value["deep"] > 0


def test_the_worker_s_function_and_deno_are_out_of_reach() -> None:
    [envelope] = _cells(
        "const F = globalThis.constructor.constructor;\n"
        "Error.prepareStackTrace = (e, s) => s;\nconst site = new Error().stack[0];\n"
        "Error.prepareStackTrace = undefined;\n"
        "return [F === Function, F('return typeof Deno')(),\n"
        "  site.getThis.constructor === Function, Object.getPrototypeOf(site) !== null,\n"
        "  typeof Deno, typeof process];"
    )
    assert envelope["value"] == [True, "undefined", True, True, "undefined", "undefined"]


def test_a_stack_hook_sees_the_cell_s_frames_only_and_can_be_restored() -> None:
    [envelope] = _cells(
        "const f = (e, sites) => sites.map((s) => s.getFileName() + ':' + s.getLineNumber());\n"
        "Error.prepareStackTrace = f;\nconst saved = Error.prepareStackTrace;\n"
        "const frames = await echo({}).then(() => new Error('x').stack);\n"
        "Error.prepareStackTrace = undefined;\nconst plain = typeof new Error('y').stack;\n"
        "Error.prepareStackTrace = saved;\nconst again = new Error('z').stack;\n"
        "return [frames, plain, again.length];"
    )
    frames, plain, again = envelope["value"]
    # The callback's frame and the cell's (the cell's line 4 is the file's 5th: the wrapper
    # adds one), and none of the controller, the worker or Deno.
    assert frames == ["openclaw-code-mode:user.js:5"] * 2
    assert (plain, again) == ("string", 1)
