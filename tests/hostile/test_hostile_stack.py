"""Stack-trace hooks never reach the controller's private closures (D6)."""

from __future__ import annotations

import pytest

from tests.conftest import exec_one

PRIVATE = frozenset(
    {"request", "start", "step", "settle", "install", "describeError", "project", "copyKeys"}
    | {"toJsonText", "jsonArray", "callSite", "text", "json", "emit", "finish", "toolError"}
)
COLLECT = r"""
const seen = [];
Error.prepareStackTrace = (err, sites) => {
  for (const s of sites) {
    let f;
    try { f = s.getFunction(); } catch { f = undefined; }
    let source = "";
    try { source = Function.prototype.toString.call(f); } catch {}
    // The cell's own functions are recognised by their source, never by what a (possibly
    // tampered) CallSite says about itself.
    const user = /seen\.push|Error\('[pt]'\)|captureStackTrace/.test(source);
    const native = !f || /\[native code\]/.test(source);
    seen.push({ name: f ? f.name : null, own: user || native });
  }
  return "stack";
};
"""
REPORT = "\nreturn [seen.length > 0, seen.filter((s) => !s.own)];"
TRIGGERS = {
    "error_in_tool_argument_to_json": (
        "await echo({ a: { toJSON() { new Error('p').stack; return 1; } } });"
    ),
    "error_in_text_to_json": "text({ toJSON() { new Error('p').stack; return 2; } });",
    "error_in_json_to_json": "json({ toJSON() { new Error('p').stack; return 2; } });",
    "error_in_then_callback": "await echo({}).then(() => new Error('p').stack);",
    "error_in_nested_to_json": "text([{ toJSON() { new Error('p').stack; return 1; } }]);",
    "throwing_to_json_of_a_tool_argument": (
        "try { await echo({ toJSON() { throw new Error('t'); } }); } catch (e) { e.stack; }"
    ),
    "tool_error": "try { await echo(1n); } catch (e) { e.stack; }",
    "capture_stack_trace": (
        "const o = {};\n"
        "await echo({ a: { toJSON() { Error.captureStackTrace(o); o.stack; return 1; } } });"
    ),
    "timer_callback": (
        "await new Promise((r) => setTimeout(() => { new Error('p').stack; r(); }, 0));"
    ),
    "promise_then_in_search": (
        "await catalog.search({ toJSON() { new Error('p').stack; return 'q'; } });"
    ),
    "results_save": "await results.save({ toJSON() { new Error('p').stack; return 1; } });",
    "store": "await store('k', { toJSON() { new Error('p').stack; return 1; } });",
    "call_site_prototype_lies": (
        "const collector = Error.prepareStackTrace;\n"
        "Error.prepareStackTrace = (e, s) => s;\nconst site = new Error().stack[0];\n"
        "Object.getPrototypeOf(site).getFileName = () => 'openclaw-code-mode:user.js';\n"
        "Error.prepareStackTrace = collector;\n"
        "await echo({ a: { toJSON() { new Error('p').stack; return 1; } } });"
    ),
}


@pytest.mark.parametrize("trigger", [pytest.param(v, id=k) for k, v in TRIGGERS.items()])
def test_call_sites_never_expose_controller_functions(trigger: str) -> None:
    envelope = exec_one(COLLECT + trigger + REPORT)
    assert envelope["status"] == "completed", envelope
    hooked, leaked = envelope["value"]
    assert hooked is True
    assert leaked == []


def test_the_user_prepare_stack_trace_reads_back_and_formats_errors() -> None:
    code = (
        "const f = (e, sites) => 'custom:' + sites.length;\nError.prepareStackTrace = f;\n"
        "const same = Error.prepareStackTrace === f;\nconst s = new Error('x').stack;\n"
        "Error.prepareStackTrace = undefined;\n"
        "return [same, s.startsWith('custom:'), typeof new Error('y').stack];"
    )
    assert exec_one(code)["value"] == [True, True, "string"]


def test_the_prepare_stack_trace_property_cannot_be_redefined() -> None:
    code = (
        "try { Object.defineProperty(Error, 'prepareStackTrace', { value: 1 }); return 'no'; }\n"
        "catch (e) { return e.name; }"
    )
    assert exec_one(code)["value"] == "TypeError"


def test_private_names_are_not_in_any_reachable_function_name() -> None:
    code = (
        COLLECT + TRIGGERS["error_in_tool_argument_to_json"] + "\nreturn seen.map((s) => s.name);"
    )
    names = exec_one(code)["value"]
    assert not set(names) & PRIVATE, names
