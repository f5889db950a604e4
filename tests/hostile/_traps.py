"""Serialization traps and the places where the controller serialises guest values.

Every trap is put through every sink; `data/serialization.json` records the envelope each
pair ends in (recorded from this implementation and reviewed: the thenable check of a
returned Proxy rejects the cell, as JavaScript requires; a getter that throws while a final
value or an error's message is read fails the cell, as in the release; everything else
completes, with fallbacks such as `"[Unserializable]"`, or times out when the trap never
returns). The same pairs are recorded from the original in
`tests/conformance/code_mode/recorded/traps.json`."""

from __future__ import annotations

from typing import Final

TRAPS: Final = {
    "throwing_getter": "({ get a() { throw new Error('getter'); } })",
    "looping_getter": "({ get a() { for (;;) {} } })",
    "tool_calling_getter": "({ get a() { echo({}); return 1; } })",
    "throwing_to_json": "({ toJSON() { throw new Error('toJSON'); } })",
    "looping_to_json": "({ toJSON() { for (;;) {} } })",
    "tool_calling_to_json": "({ toJSON() { echo({}); return 'j'; } })",
    "to_primitive": (
        "({ [Symbol.toPrimitive]() { throw new Error('prim'); }, toString() { throw 1; } })"
    ),
    "throwing_proxy": (
        "new Proxy({}, { ownKeys() { throw new Error('keys'); }, "
        "get() { throw new Error('get'); } })"
    ),
    "looping_proxy": "new Proxy({}, { ownKeys() { for (;;) {} } })",
    "revoked_proxy": "(() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; })()",
    "bigint": "({ n: 1n })",
    "cycle": "(() => { const o = {}; o.o = o; return o; })()",
    "symbol_keys": "({ [Symbol('s')]: 1, a: Symbol('v') })",
    "sparse_array": "(() => { const a = []; a[5] = 1; return a; })()",
    "array_with_getter_index": (
        "(() => { const a = [1]; "
        "Object.defineProperty(a, 0, { get() { throw new Error('idx'); } }); return a; })()"
    ),
    "date": "new Date(0)",
    "map_set": "[new Map([[1, 2]]), new Set([1])]",
    "typed_array": "new Uint8Array([1, 2])",
    "promise": "Promise.resolve(1)",
    "function": "(() => 1)",
    "lone_surrogate": "'\\ud800x'",
    "nan_infinity": "[NaN, Infinity, -0]",
    "to_json_returning_self": "(() => { const o = { toJSON() { return o; } }; return o; })()",
    "error_with_getter_message": (
        "(() => { const e = new Error('m'); "
        "Object.defineProperty(e, 'message', { get() { throw 1; } }); return e; })()"
    ),
    "getter_deleting_itself": (
        "(() => { const o = { get a() { delete o.a; o.b = 2; return 1; } }; return o; })()"
    ),
    "getter_growing_the_object": (
        "(() => { const o = { get a() { for (let i = 0; i < 50; i++) o['k' + i] = i; return 1; } };"
        " return o; })()"
    ),
    "array_getter_growing_the_array": (
        "(() => { const a = [0]; Object.defineProperty(a, 0, { get() { a.push(1); return 0; } });"
        " return a; })()"
    ),
    "to_json_on_prototype": (
        "(() => { class C { toJSON() { return 'proto'; } } return new C(); })()"
    ),
    "null_prototype": "Object.assign(Object.create(null), { a: 1 })",
    "frozen_with_to_json": "Object.freeze({ a: 1, toJSON: () => 'frozen' })",
}
SINKS: Final = {
    "text": "text(V);\nreturn 'done';",
    "json": "json(V);\nreturn 'done';",
    "return": "return V;",
    "console": "console.log(V);\nreturn 'done';",
    "tool_arg": "try { return await echo({ v: V }); } catch (e) { return 'caught: ' + e.message; }",
}


def trap_code(trap: str, sink: str) -> str:
    return "const V = " + TRAPS[trap] + ";\n" + SINKS[sink]
