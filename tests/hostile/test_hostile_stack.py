"""Stack-trace hooks never reach the controller's private closures (D6)."""

from __future__ import annotations

from typing import Any

import pytest

from clawcell import CodeMode
from tests.conftest import echo_tool, exec_one, with_mode

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


# Patched built-ins that the controller might call with its own callbacks: every hook records
# the functions it is handed, and none may be a controller closure (the controller captures its
# primordials at install, so user patches never see its calls).
PATCHED_BUILTINS = {
    "then_args": (
        "const got=[]; const t = Promise.prototype.then; Promise.prototype.then = functio"
        "n(a,b){ for (const f of [a,b]) if (typeof f==='function') got.push(Function.prot"
        "otype.toString.call(f).slice(0,60)); return t.call(this,a,b); }; await echo({});"
        " text('x'); await new Promise(r=>setTimeout(r,0)); Promise.prototype.then = t; r"
        "eturn got;"
    ),
    "catch_args": (
        "const got=[]; const c = Promise.prototype.catch; Promise.prototype.catch = funct"
        "ion(a){ if (typeof a==='function') got.push(String(a).slice(0,60)); return c.cal"
        "l(this,a); }; await echo({}); Promise.prototype.catch = c; return got;"
    ),
    "finally_args": (
        "const got=[]; const c = Promise.prototype.finally; Promise.prototype.finally = f"
        "unction(a){ if (typeof a==='function') got.push(String(a).slice(0,60)); return c"
        ".call(this,a); }; await echo({}); Promise.prototype.finally = c; return got;"
    ),
    "array_map_args": (
        "const got=[]; for (const m of ['map','forEach','filter','some','every','reduce',"
        "'find','findIndex','sort','join']) { const o = Array.prototype[m]; Array.prototy"
        "pe[m] = function(...a){ for (const f of a) if (typeof f==='function') got.push(m"
        "+':'+String(f).slice(0,50)); return o.apply(this,a); }; } await echo({a:[1,2]});"
        " text([1]); try { await echo(1n); } catch(e) { e.stack; } return got;"
    ),
    "promise_ctor": (
        "const got=[]; const P = Promise; globalThis.Promise = function(ex){ got.push(Str"
        "ing(ex).slice(0,60)); return new P(ex); }; Object.setPrototypeOf(globalThis.Prom"
        "ise, P); globalThis.Promise.prototype = P.prototype; await echo({}); globalThis."
        "Promise = P; return got;"
    ),
    "map_set_args": (
        "const got=[]; const s = Map.prototype.set; Map.prototype.set = function(k,v){ if"
        " (typeof v==='function' || (v && typeof v==='object')) got.push(typeof v + ':' +"
        " Object.keys(v||{}).join(',')); return s.call(this,k,v); }; const p = echo({}); "
        "await p; Map.prototype.set = s; return got;"
    ),
    "weakmap_set": (
        "const got=[]; const s = WeakMap.prototype.set; WeakMap.prototype.set = function("
        "k,v){ got.push(typeof k + '/' + typeof v); return s.call(this,k,v); }; await ech"
        "o({}); WeakMap.prototype.set = s; return got;"
    ),
    "object_define": (
        "const got=[]; const d = Object.defineProperty; Object.defineProperty = function("
        "o,k,desc){ got.push(String(k)); return d(o,k,desc); }; await echo({}); text('y')"
        "; Object.defineProperty = d; return got;"
    ),
    "json_stringify_replacer": (
        "const got=[]; const js = JSON.stringify; JSON.stringify = function(v, r, s){ if "
        "(typeof r==='function') got.push(String(r).slice(0,60)); return js(v,r,s); }; aw"
        "ait echo({a:1}); text({b:2}); JSON.stringify = js; return got;"
    ),
    "json_parse_reviver": (
        "const got=[]; const jp = JSON.parse; JSON.parse = function(t, r){ if (typeof r=="
        "='function') got.push(String(r).slice(0,60)); return jp(t,r); }; await echo({a:1"
        "}); JSON.parse = jp; return got;"
    ),
    "string_replace_fn": (
        "const got=[]; const rp = String.prototype.replace; String.prototype.replace = fu"
        "nction(a,b){ if (typeof b==='function') got.push(String(b).slice(0,60)); return "
        "rp.call(this,a,b); }; try { await echo(1n); } catch(e) { e.stack; e.message; } t"
        "ext('z'); String.prototype.replace = rp; return got;"
    ),
}


@pytest.mark.parametrize("code", PATCHED_BUILTINS.values(), ids=PATCHED_BUILTINS.keys())
def test_patched_builtins_are_never_handed_a_controller_function(code: str) -> None:
    async def body(mode: CodeMode) -> list[Any]:
        envelope = await mode.exec(code)
        clean = await mode.exec("return await echo({ clean: true });")
        return [envelope["status"], envelope.get("value"), clean.get("value")]

    assert with_mode(body, tools=[echo_tool()]) == ["completed", [], {"clean": True}]
