"""Where a failed tool call says it was made (the controller's call sites).

A tool handle captures the frames below itself with `Error.captureStackTrace` when the cell
left `Error.prepareStackTrace` and `Error.stackTraceLimit` alone, and builds a whole `Error`
otherwise; both must show the frames a full `new Error()` at the call showed, the controller's
two frames counted against the limit of 10. These are the texts of the tree before the
capture (`git show c2766f1:src/clawcell/runtime/controller.js`), in the cases where the two
ways could part: more frames than the limit, a limit of the cell's own (below and above 10, or
10 written as a float), native frames between the handle and the cell, a call that no user
frame made, a `prepareStackTrace` set and unset.
"""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import CodeMode, Tool
from tests.conftest import echo_tool, with_mode

USER = "openclaw-code-mode:user.js"
RECURSE = "function a(n) { return n ? a(n - 1) : boom({}); }\n"
DEEP = "try { await a(12); } catch (e) { return e.stack; }"


def frames(*lines: str) -> str:
    return "".join(f"    at {line}\n" for line in lines)


async def _boom(params: dict[str, Any]) -> dict[str, Any]:
    raise ValueError(f"bad {params!r}")


CASES: dict[str, tuple[str, Any]] = {
    "deeper_than_the_limit": (
        RECURSE + DEEP,
        frames(f"a ({USER}:1:39)", *[f"a ({USER}:1:34)"] * 7),
    ),
    "exactly_the_limit": (
        RECURSE + "try { await a(6); } catch (e) { return e.stack; }",
        frames(f"a ({USER}:1:39)", *[f"a ({USER}:1:34)"] * 6, f"<anonymous> ({USER}:2:13)"),
    ),
    "a_lower_limit_of_the_cells_own": (
        "Error.stackTraceLimit = 3;\n" + RECURSE + DEEP.replace("12", "2"),
        frames(f"a ({USER}:2:39)"),
    ),
    "a_higher_limit_of_the_cells_own": (
        "Error.stackTraceLimit = 12;\n" + RECURSE + DEEP,
        frames(f"a ({USER}:2:39)", *[f"a ({USER}:2:34)"] * 9),
    ),
    "the_default_limit_written_as_a_float": (
        "Error.stackTraceLimit = 10.0;\n" + RECURSE + DEEP,
        frames(f"a ({USER}:2:39)", *[f"a ({USER}:2:34)"] * 7),
    ),
    "a_native_frame_between": (
        "try { await [{}].map(boom)[0]; } catch (e) { return e.stack; }",
        frames("map (native)", f"<anonymous> ({USER}:1:22)"),
    ),
    "called_through_call": (
        "try { await boom.call(null, {}); } catch (e) { return e.stack; }",
        frames("call (native)", f"<anonymous> ({USER}:1:23)"),
    ),
    "called_through_reflect_apply": (
        "try { await Reflect.apply(boom, null, [{}]); } catch (e) { return e.stack; }",
        frames("apply (native)", f"<anonymous> ({USER}:1:27)"),
    ),
    "called_from_a_timer": (
        "const p = new Promise((r) => setTimeout(() => r(boom({})), 0));\n"
        "try { await p; } catch (e) { return e.stack; }",
        frames(f"<anonymous> ({USER}:1:49)"),
    ),
    "the_error_fields": (
        "try { await boom({ x: 1 }); } catch (e) { return [e.message, e.location, e.code]; }",
        ["bad {'x': 1}", frames(f"<anonymous> ({USER}:1:13)"), "tool_error"],
    ),
    "prepare_stack_trace_set_then_unset": (
        "Error.prepareStackTrace = (e, s) => 'x';\nError.prepareStackTrace = undefined;\n"
        "try { await boom({}); } catch (e) { return e.stack; }",
        frames(f"<anonymous> ({USER}:3:13)"),
    ),
    "prepare_stack_trace_of_the_cells_own": (
        "Error.prepareStackTrace = (e, s) => s.map((c) => c.getFunctionName()).join('|');\n"
        "try { await boom({}); } catch (e) { return e.stack; }",
        "",
    ),
    "the_limit_after_calls": (
        "await echo({}); try { await boom({}); } catch {}\nreturn Error.stackTraceLimit;",
        10,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_failed_call_shows_the_frames_a_full_error_at_the_call_showed(name: str) -> None:
    code, expected = CASES[name]
    tools = [echo_tool(), Tool(name="boom", execute=_boom, parameters={"type": "object"})]

    async def body(mode: CodeMode) -> dict[str, Any]:
        return await mode.exec(code)

    envelope = with_mode(body, tools=tools, guest_thread=False)
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == expected


UNCAUGHT = {
    "from_the_cell": (
        "function f() { return boom({ a: 1 }); }\nawait f();",
        "Error: bad {'a': 1}\n" + frames(f"f ({USER}:1:23)", f"<anonymous> ({USER}:2:7)"),
    ),
    # The timer's callback is the handle itself: no user frame below it, and no location.
    "made_by_the_controller_alone": (
        "setTimeout(boom, 0);\nawait new Promise((r) => setTimeout(r, 5));",
        "Error: bad {}",
    ),
}


@pytest.mark.parametrize("name", list(UNCAUGHT))
@pytest.mark.parametrize("guest_thread", [True, False])
def test_an_uncaught_failed_call_names_the_cells_frames(name: str, guest_thread: bool) -> None:
    code, expected = UNCAUGHT[name]
    tools = [Tool(name="boom", execute=_boom, parameters={"type": "object"})]

    async def body(mode: CodeMode) -> dict[str, Any]:
        return await mode.exec(code)

    envelope = with_mode(body, tools=tools, guest_thread=guest_thread)
    assert envelope["status"] == "failed"
    assert envelope["error"] == expected
