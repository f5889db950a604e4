"""The cells `record_code_mode.py` runs through the original (issue 16).

Each generator yields `(group, name, cell)`: `cell` holds `steps` (`{"op": "exec", "code"}` or
`{"op": "wait", "runId": "$last"}`) and optionally `catalog` (a key of `CATALOGS`, default the
oracle's eight-tool catalog), `config` (merged over `{"executor": "quickjs"}`) and
`contextTokenBudget`. The ids in the recorded files are `<group>/<name>`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

Json = Any
Cell = dict[str, Json]

EMPTY_CLOSED = {"type": "object", "properties": {}, "additionalProperties": False}

# Catalogs beside the oracle's default one ("default", filled in by the recorder from `--tools`).
CATALOGS: dict[str, list[Json]] = {
    "empty-input": [
        {
            "name": "empty_closed",
            "description": "Takes no input.",
            "parameters": EMPTY_CLOSED,
            "behavior": {"return": {"ok": True}},
        },
        {
            "name": "empty_closed_bare",
            "description": "Closed object without properties.",
            "parameters": {"type": "object", "additionalProperties": False},
            "behavior": {"return": 1},
        },
        {
            "name": "empty_open",
            "description": "Any object.",
            "parameters": {"type": "object", "properties": {}},
            "behavior": {"echo": True},
        },
        {
            "name": "empty_closed_required",
            "description": "Closed, with a required list that names nothing.",
            "parameters": {**EMPTY_CLOSED, "required": []},
            "outputSchema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"],
                "additionalProperties": False,
            },
            "behavior": {"return": {"ok": True}},
        },
        {
            "name": "nested_empty",
            "description": "A closed object holding an empty closed object.",
            "parameters": {
                "type": "object",
                "properties": {"opts": EMPTY_CLOSED, "open": {"type": "object"}},
                "required": ["opts"],
                "additionalProperties": False,
            },
            "outputSchema": EMPTY_CLOSED,
            "behavior": {"return": {}},
        },
        {
            "name": "array_of_empty",
            "description": "Takes a list of empty closed objects.",
            "parameters": {
                "type": "object",
                "properties": {"items": {"type": "array", "items": EMPTY_CLOSED}},
                "additionalProperties": False,
            },
            "outputSchema": {"type": "array", "items": EMPTY_CLOSED},
            "behavior": {"return": [{}]},
        },
        {
            "name": "one_field",
            "description": "One optional field, closed.",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "additionalProperties": False,
            },
            "behavior": {"echo": True},
        },
    ],
}


def _exec(code: str, **extra: Json) -> Cell:
    return {"steps": [{"op": "exec", "code": code, **extra}]}


# ---- console formatting of top-level arguments ---------------------------------------------

CONSOLE_VALUES: list[tuple[str, str]] = [
    ("undefined", "undefined"),
    ("null", "null"),
    ("true", "true"),
    ("number", "42"),
    ("float", "1.5"),
    ("negative-zero", "-0"),
    ("nan", "NaN"),
    ("infinity", "Infinity"),
    ("minus-infinity", "-Infinity"),
    ("bigint", "12n"),
    ("bigint-negative", "-5n"),
    ("bigint-huge", "2n ** 80n"),
    ("function-named", "function foo() {}"),
    ("function-arrow", "() => 1"),
    ("function-async", "async function af() {}"),
    ("function-generator", "function* g() {}"),
    ("class", "class K {}"),
    ("tool-global", "shipping_list"),
    ("symbol", "Symbol('s')"),
    ("symbol-bare", "Symbol()"),
    ("symbol-for", "Symbol.for('reg')"),
    ("symbol-well-known", "Symbol.iterator"),
    ("empty-string", "''"),
    ("string-quotes", "'say \"hi\"'"),
    ("string-newline", "'a\\nb'"),
    ("string-percent", "'%s %d'"),
    ("empty-object", "({})"),
    ("empty-array", "[]"),
    ("flat-object", "({a: 1, b: 'x', c: null})"),
    ("object-undefined-field", "({a: undefined, b: 1})"),
    ("object-bigint-field", "({n: 3n})"),
    ("object-function-field", "({f() {}, g: () => 1})"),
    ("object-symbol-field", "({s: Symbol('x')})"),
    ("object-symbol-key", "({[Symbol('k')]: 1, a: 2})"),
    ("object-nan-field", "({n: NaN, i: Infinity})"),
    ("array-holes", "[1, , 3]"),
    ("array-undefined", "[undefined, null]"),
    ("array-mixed", "[1, 'a', 2n, Symbol('q'), () => 0, {x: [1]}]"),
    ("nested-object", "({a: {b: {c: 1}}})"),
    ("nested-arrays", "[[1, [2, [3]]]]"),
    ("map", "new Map([[1, 2]])"),
    ("set", "new Set([1, 2])"),
    ("date", "new Date(0)"),
    ("regexp", "/re/g"),
    ("error", "new Error('boom')"),
    ("type-error", "new TypeError('bad type')"),
    ("error-with-field", "Object.assign(new Error('e'), {code: 'E1'})"),
    ("error-empty", "new Error()"),
    ("typed-array", "new Uint8Array([1, 2])"),
    ("array-buffer", "new ArrayBuffer(4)"),
    ("promise", "Promise.resolve(1)"),
    ("unawaited-tool", "shipping_list({})"),
    ("boxed-number", "new Number(3)"),
    ("boxed-string", "new String('s')"),
    ("null-prototype", "Object.create(null)"),
    ("null-prototype-field", "Object.assign(Object.create(null), {a: 1})"),
    ("class-instance", "new (class P { constructor() { this.x = 1; } })()"),
    ("getter", "({get g() { return 1; }, v: 2})"),
    ("to-json", "({toJSON() { return 'json!'; }, a: 1})"),
    ("non-enumerable", "Object.defineProperty({a: 1}, 'h', {value: 2})"),
    ("proxy", "new Proxy({a: 1}, {})"),
    ("arguments", "(function () { return arguments; })(1, 2)"),
    ("cyclic-object", "(() => { const o = {a: 1}; o.self = o; return o; })()"),
    ("cyclic-array", "(() => { const a = [1]; a.push(a); return a; })()"),
    ("shared-reference", "(() => { const s = {k: 1}; return {x: s, y: s}; })()"),
    ("catalog", "catalog"),
    ("console", "console"),
    ("globalThis-math", "Math"),
    ("json-global", "JSON"),
    ("string-emoji", "'\\u{1F600}'"),
    ("lone-surrogate", "'\\uD800'"),
]


def _console_formatting() -> Iterator[tuple[str, str, Cell]]:
    for name, expr in CONSOLE_VALUES:
        yield "console", f"log/{name}", _exec(f"console.log({expr}); return null;")
    for name, expr in CONSOLE_VALUES[:40]:
        yield "console", f"between/{name}", _exec(f"console.log('a', {expr}, 'z'); return null;")
    for method in ("info", "warn", "error", "debug"):
        yield (
            "console",
            f"{method}/mixed",
            _exec(f"console.{method}('m', undefined, 1n, {{a: 1}}, [2]); return null;"),
        )
        yield "console", f"{method}/none", _exec(f"console.{method}(); return null;")
    yield "console", "log/none", _exec("console.log(); return null;")
    yield (
        "console",
        "log/many-args",
        _exec("console.log(...Array.from({length: 30}, (_, i) => i)); return null;"),
    )
    yield "console", "log/returns-undefined", _exec("return console.log('x') === undefined;")
    yield (
        "console",
        "log/interleaved-with-text",
        _exec("text('t1'); console.log('c1'); json({j: 1}); console.warn('c2'); return 0;"),
    )
    yield (
        "console",
        "log/after-throw-caught",
        _exec(
            "try { throw new Error('x'); } catch (e) { console.error(e); console.log(e.message); }"
            " return null;"
        ),
    )


# ---- inspection limits -----------------------------------------------------------------------


def _nested(depth: int, leaf: str = "1") -> str:
    expr = leaf
    for _ in range(depth):
        expr = "{k: " + expr + "}"
    return "(" + expr + ")"


def _inspection_limits() -> Iterator[tuple[str, str, Cell]]:
    for depth in range(1, 8):
        yield "inspect", f"depth/object-{depth}", _exec(f"console.log({_nested(depth)}); return 0;")
        arrays = "[" * depth + "1" + "]" * depth
        yield "inspect", f"depth/array-{depth}", _exec(f"console.log({arrays}); return 0;")
        yield (
            "inspect",
            f"depth/inner-{depth}",
            _exec(f"console.log('p', [{_nested(depth)}]); return 0;"),
        )
    for count in (49, 50, 51, 60, 120):
        yield (
            "inspect",
            f"properties/{count}",
            _exec(
                f"const o = {{}}; for (let i = 0; i < {count}; i++) o['p' + i] = i;"
                " console.log(o); return 0;"
            ),
        )
        yield (
            "inspect",
            f"array-items/{count}",
            _exec(f"console.log(Array.from({{length: {count}}}, (_, i) => i)); return 0;"),
        )
    for count in (30, 33, 34, 49, 98, 99, 100, 101, 150):
        yield (
            "inspect",
            f"visited/objects-{count}",
            _exec(f"console.log(Array.from({{length: {count}}}, (_, i) => ({{i}}))); return 0;"),
        )
    for count in (48, 49, 50, 99):
        yield (
            "inspect",
            f"visited/wide-nested-{count}",
            _exec(
                f"const rows = Array.from({{length: {count}}}, (_, i) => [i, [i]]);"
                " console.log(rows); return 0;"
            ),
        )
    yield (
        "inspect",
        "visited/two-args-share-budget",
        _exec(
            "const a = Array.from({length: 45}, (_, i) => i);"
            " const b = Array.from({length: 45}, (_, i) => i); console.log(a, b); return 0;"
        ),
    )
    for length in (500, 511, 512, 513, 600, 2000):
        yield (
            "inspect",
            f"string-clip/field-{length}",
            _exec(f"console.log({{s: 'x'.repeat({length})}}); return 0;"),
        )
        yield (
            "inspect",
            f"string-clip/top-level-{length}",
            _exec(f"console.log('y'.repeat({length})); return 0;"),
        )
        yield (
            "inspect",
            f"string-clip/top-level-second-{length}",
            _exec(f"console.log('a', 'y'.repeat({length})); return 0;"),
        )
        yield (
            "inspect",
            f"key-clip/{length}",
            _exec(f"console.log({{['k'.repeat({length})]: 1}}); return 0;"),
        )
    for offset in (510, 511, 512):
        yield (
            "inspect",
            f"string-clip/surrogate-at-{offset}",
            _exec(
                f"console.log({{s: 'x'.repeat({offset}) + '\\u{{1F600}}'.repeat(4)}}); return 0;"
            ),
        )
        yield (
            "inspect",
            f"key-clip/surrogate-at-{offset}",
            _exec(
                f"console.log({{['k'.repeat({offset}) + '\\u{{1F600}}'.repeat(4)]: 1}}); return 0;"
            ),
        )
        yield (
            "inspect",
            f"string-clip/top-level-surrogate-at-{offset}",
            _exec(f"console.log('y'.repeat({offset}) + '\\u{{1F600}}'.repeat(4)); return 0;"),
        )
    for length in (4000, 4095, 4096, 4097, 5000, 20000):
        yield (
            "inspect",
            f"message-clip/pieces-{length}",
            _exec(
                f"const parts = []; let n = 0; while (n < {length}) {{ const p = 'w'.repeat("
                f"Math.min(400, {length} - n)); parts.push(p); n += p.length + 1; }}"
                " console.log(...parts); return 0;"
            ),
        )
        yield (
            "inspect",
            f"message-clip/object-{length}",
            _exec(
                f"const o = {{}}; for (let i = 0; i < 49; i++) o['f' + i] = 'v'.repeat("
                f"Math.max(1, Math.floor({length} / 49) - 8)); console.log(o); return 0;"
            ),
        )
    for offset in (4094, 4095, 4096):
        yield (
            "inspect",
            f"message-clip/surrogate-at-{offset}",
            _exec(
                f"const s = 'w'.repeat(400); const parts = []; for (let i = 0; i < 10; i++)"
                f" parts.push(s); const base = parts.join(' ').slice(0, {offset} - 2);"
                " console.log(base.slice(0, 300), base.slice(301) + '\\u{1F600}'.repeat(3));"
                " return 0;"
            ),
        )
    for lines in (10, 15, 16, 17, 40, 200):
        yield (
            "inspect",
            f"console-budget/lines-{lines}",
            _exec(
                f"for (let i = 0; i < {lines}; i++) console.log(i + ':' + 'z'.repeat(1000));"
                " return 0;"
            ),
        )
    yield (
        "inspect",
        "console-budget/small-lines",
        _exec("for (let i = 0; i < 2000; i++) console.log(i); return 0;"),
    )
    yield (
        "inspect",
        "console-budget/then-text",
        _exec(
            "for (let i = 0; i < 40; i++) console.log('z'.repeat(1000)); text('after'); return 0;"
        ),
    )
    yield (
        "inspect",
        "console-budget/across-wait",
        {
            "config": {"timeoutMs": 2000},
            "steps": [
                {
                    "op": "exec",
                    "code": "for (let i = 0; i < 12; i++) console.log('q'.repeat(1000));"
                    " await yield_control('r'); for (let i = 0; i < 12; i++)"
                    " console.log('r'.repeat(1000)); return 0;",
                },
                {"op": "wait", "runId": "$last"},
            ],
        },
    )
    yield (
        "inspect",
        "accessor/getter-not-called",
        _exec(
            "let called = false; const o = {get g() { called = true; return 1; }};"
            " console.log(o); return called;"
        ),
    )
    yield "inspect", "accessor/setter-only", _exec("console.log({set s(v) {}, a: 1}); return 0;")
    yield "inspect", "error/nested-error", _exec("console.log({e: new RangeError('r')}); return 0;")
    yield (
        "inspect",
        "error/message-not-string",
        _exec("const e = new Error('m'); e.message = {x: 1}; console.log(e); return 0;"),
    )
    yield (
        "inspect",
        "throwing-proxy",
        _exec(
            "const p = new Proxy({}, {ownKeys() { throw new Error('no keys'); }});"
            " console.log('before', p, 'after'); return 0;"
        ),
    )


# ---- declarations of a tool whose input schema is an empty closed object -------------------


def _declarations() -> Iterator[tuple[str, str, Cell]]:
    names = [tool["name"] for tool in CATALOGS["empty-input"]]
    for name in names:
        cell = _exec(f"return (await API.read('tools/{name}.d.ts')).content;")
        yield "declarations", f"api-read/{name}", {**cell, "catalog": "empty-input"}
        cell = _exec(f"return await {name}.describe();")
        yield "declarations", f"describe/{name}", {**cell, "catalog": "empty-input"}
        cell = _exec(f"return await {name}();")
        yield "declarations", f"call-without-input/{name}", {**cell, "catalog": "empty-input"}
        cell = _exec(f"return await {name}({{extra: 1}});")
        yield "declarations", f"call-extra-field/{name}", {**cell, "catalog": "empty-input"}
    cell = _exec("return (await API.list('tools')).files;")
    yield "declarations", "api-list", {**cell, "catalog": "empty-input"}
    cell = _exec("const [t] = await catalog.search('empty_closed'); return await t.describe();")
    yield "declarations", "search-then-describe", {**cell, "catalog": "empty-input"}


# ---- search telemetry when `catalog.search` rejects its arguments -------------------------

BAD_SEARCHES = [
    ("number-query", "1"),
    ("no-query", ""),
    ("null-query", "null"),
    ("object-query", "{q: 'x'}"),
    ("limit-zero", "'ship', {limit: 0}"),
    ("limit-negative", "'ship', {limit: -1}"),
    ("limit-fraction", "'ship', {limit: 1.5}"),
    ("limit-string", "'ship', {limit: '3'}"),
    ("limit-nan", "'ship', {limit: NaN}"),
    ("limit-null", "'ship', {limit: null}"),
    ("options-null", "'ship', null"),
    ("options-number", "'ship', 5"),
    ("limit-huge", "'ship', {limit: 1e9}"),
    ("limit-true", "'ship', {limit: true}"),
    ("limit-two", "'ship', {limit: 2}"),
    ("empty-query", "''"),
    ("blank-query", "'   '"),
]


def _search() -> Iterator[tuple[str, str, Cell]]:
    for name, args in BAD_SEARCHES:
        yield (
            "search",
            f"caught/{name}",
            _exec(
                f"try {{ const r = await catalog.search({args}); text('ok ' + r.length); }}"
                " catch (e) { text('caught ' + e.message); } return null;"
            ),
        )
        yield "search", f"uncaught/{name}", _exec(f"return (await catalog.search({args})).length;")
    yield (
        "search",
        "bad-then-good",
        _exec(
            "try { await catalog.search(7); } catch {}"
            " return (await catalog.search('ship')).length;"
        ),
    )
    yield (
        "search",
        "sync-throw-not-awaited",
        _exec(
            "const p = catalog.search(1); text(typeof p); try { await p; } catch (e)"
            " { text(e.message); } return null;"
        ),
    )
    yield "search", "map-without-await", _exec("return catalog.search('ship').map((t) => t.name);")


# ---- values retained automatically in restart-safe cells ----------------------------------


def _restart_safe() -> Iterator[tuple[str, str, Cell]]:
    values = [
        ("string-100k", "'x'.repeat(100000)"),
        ("string-70k", "'x'.repeat(70000)"),
        ("string-65k", "'x'.repeat(65000)"),
        ("string-60k", "'x'.repeat(60000)"),
        ("string-multibyte", "'\\u00e9'.repeat(50000)"),
        ("array-numbers", "Array.from({length: 20000}, (_, i) => i)"),
        ("array-rows", "Array.from({length: 2000}, (_, i) => ({i, label: 'x'.repeat(40)}))"),
        ("object-wide", "Object.fromEntries(Array.from({length: 5000}, (_, i) => ['k' + i, i]))"),
        ("nested", "({rows: Array.from({length: 3000}, (_, i) => ({i, t: 'yy'.repeat(10)}))})"),
        ("small", "({a: 1})"),
    ]
    for name, expr in values:
        yield "restart-safe", f"value/{name}", _exec(f"return {expr};", restartSafe=True)
        yield "restart-safe", f"json/{name}", _exec(f"json({expr}); return 1;", restartSafe=True)
    for size in (1024, 4096, 20000):
        for name, expr in values[:3] + values[6:7]:
            yield (
                "restart-safe",
                f"max-output-{size}/{name}",
                {
                    **_exec(f"return {expr};", restartSafe=True),
                    "config": {"maxOutputBytes": size},
                },
            )
    yield (
        "restart-safe",
        "value-with-output",
        _exec("text('hello'); return 'x'.repeat(90000);", restartSafe=True),
    )
    yield "restart-safe", "ordinary-cell-same-value", _exec("return 'x'.repeat(100000);")
    yield (
        "restart-safe",
        "context-budget",
        {
            **_exec("return 'x'.repeat(100000);", restartSafe=True),
            "contextTokenBudget": 4096,
        },
    )


# ---- serialization of cyclic values emitted with json() / text() ---------------------------

CYCLIC = [
    ("self-array", "const a = [1]; a.push(a);"),
    ("self-array-only", "const a = []; a.push(a);"),
    ("array-in-object", "const a = [1]; const o = {a}; a.push(o);"),
    ("object-in-array", "const o = {}; const a = [o]; o.a = a;"),
    ("deep-array", "const a = [[[1]]]; a[0][0].push(a);"),
    ("two-arrays", "const a = [1]; const b = [a]; a.push(b);"),
    ("self-object", "const a = {x: 1}; a.self = a;"),
    ("shared-not-cyclic", "const s = [1]; const a = [s, s];"),
]


def _cyclic() -> Iterator[tuple[str, str, Cell]]:
    for name, setup in CYCLIC:
        yield "cyclic", f"json/{name}", _exec(f"{setup} json(a); return 1;")
        yield (
            "cyclic",
            f"json-caught/{name}",
            _exec(
                f"{setup} try {{ json(a); }} catch (e) {{ text('caught ' + e.name); }} return 1;"
            ),
        )
        yield "cyclic", f"text/{name}", _exec(f"{setup} text(a); return 1;")
        yield "cyclic", f"return/{name}", _exec(f"{setup} return a;")
        yield "cyclic", f"json-nested/{name}", _exec(f"{setup} json({{v: a}}); return 1;")


# ---- where guest errors point (native frames, callbacks, bridge rejections) ----------------

ERRORS = [
    ("json-parse", "JSON.parse('x');"),
    ("map-callback", "[1].map(() => { null.x; });"),
    ("sort-callback", "[2, 1].sort(() => { throw new Error('cmp'); });"),
    (
        "nested-functions",
        "function a() { b(); } function b() { throw new TypeError('deep'); } a();",
    ),
    ("line-three", "const x = 1;\nconst y = 2;\nundefinedName.z;"),
    ("reference-error", "missingVariable + 1;"),
    ("not-a-function", "const o = {}; o.f();"),
    ("not-a-function-on-promise", "shipping_list({}).map((r) => r.id);"),
    ("search-not-awaited", "catalog.search('ship').map((t) => t.name);"),
    ("describe-not-awaited", "shipping_list.describe().input;"),
    ("api-list-not-awaited", "API.list().files.length;"),
    ("api-read-injected-not-awaited", "API.read('results.d.ts').content.length;"),
    ("api-read-tool-not-awaited", "API.read('tools/echo.d.ts').content.length;"),
    ("api-read-unknown-not-awaited", "API.read('nope').content.length;"),
    ("results-load-not-awaited", "results.load('x').length;"),
    ("property-of-unawaited", "const r = shipping_list({}); return r.length;"),
    ("length-of-unawaited", "return shipping_list({})[0].id;"),
    ("throw-string", "throw 'plain';"),
    ("throw-object", "throw {code: 1};"),
    ("throw-null", "throw null;"),
    ("throw-error-no-message", "throw new Error();"),
    ("custom-error-class", "class MyErr extends Error {}; throw new MyErr('mine');"),
    ("error-name-changed", "const e = new Error('n'); e.name = 'Custom'; throw e;"),
    ("promise-reject", "await Promise.reject(new Error('rejected'));"),
    ("async-function", "async function f() { await null; throw new Error('later'); } await f();"),
    ("then-callback", "await Promise.resolve(1).then(() => { throw new Error('in then'); });"),
    (
        "timer-callback",
        "setTimeout(() => { throw new Error('in timer'); }, 0);"
        " await new Promise((r) => setTimeout(r, 5));",
    ),
    ("tool-failure", "await failing_tool({});"),
    ("tool-failure-in-map", "await Promise.all([1].map(() => failing_tool({})));"),
    ("bad-input", "await fleet_query({});"),
    (
        "unknown-tool-via-search",
        "const [t] = await catalog.search('zzzz_missing_tool'); await t({});",
    ),
    ("range-error", "new Array(-1);"),
    ("stack-overflow", "function r() { return r(); } r();"),
    ("uri-error", "decodeURIComponent('%');"),
    ("bigint-mix", "1n + 1;"),
    ("assign-const", "const c = 1; c = 2;"),
    ("frozen-catalog", "'use strict'; catalog.x = 1; return catalog.x;"),
    ("json-stringify-bigint", "JSON.stringify({a: 1n});"),
    ("caught-stack", "try { null.x; } catch (e) { return e.stack; }"),
    ("caught-tool-stack", "try { await failing_tool({}); } catch (e) { return e.stack; }"),
]


def _errors() -> Iterator[tuple[str, str, Cell]]:
    for name, code in ERRORS:
        yield "errors", name, _exec(code)


# ---- syntax errors: the release words them with acorn ---------------------------------------

SYNTAX_ERRORS: list[str] = [
    "import fs from 'fs';",
    "import {a} from 'b'",
    "export const x = 1;",
    "export default 1",
    "return 1 +",
    "const = 1",
    "let x = ;",
    "foo(",
    "foo)",
    "{",
    "}",
    "[1, 2",
    "if (x { }",
    "'abc",
    '"abc',
    "`abc",
    "`${1",
    "/* unterminated",
    "const x = 1\nconst x = 2",
    "let let = 1",
    "function () {}",
    "await = 1",
    "function f() { await x; }",
    "() => { await 1 }",
    "const a = 1; a++ ++",
    "x => { return }}",
    "1 = 2",
    "a + = b",
    "new",
    "class { }",
    "return return",
    "for (;;",
    "while true {}",
    "const {a = 1;",
    "obj.?x",
    "x ?. y",
    "#priv",
    "@decorator class A {}",
    "const x: number = 1;",
    "interface A {}",
    "def f(): pass",
    "print 'hi'",
    "<div/>",
    "yield 1",
    "function* g() { yield }\nyield 2",
    "break;",
    "continue;",
    "label: label: 1",
    "'use strict'; with (a) {}",
    "'use strict'; delete x;",
    "0777n",
    "1__0",
    "\\u{110000}",
    "const s = '\\x';",
    "/[/",
    "/a/gg",
    "a\xa0+ b",
    "x = 08n",
    "async () => await",
    "let [a, ...b,] = c",
    "({a:1} = 1)",
    "super()",
    "new.target",
    "import.meta",
    "for (let x of y, z) {}",
    "try {}",
    "catch (e) {}",
    "else {}",
    "case 1:",
    "switch (x) { case }",
    "const a = 1;;;\n}\n",
    "return 1;\n\n  )",
    "function f(a, a) { 'use strict' }",
    "({ get x(a) {} })",
    "var \\u0061wait = 1",
    "x = {,}",
    "[,,] = 1",
    "f(...)",
    "`${}`",
    "a ? b",
    "a ?? b || c",
    "-1 ** 2",
    "const a = 1;\n\n\nlet b = ;",
    "\tconst = 1",
    "const s = '😀'; let = ;",
    "const x = 1;\r\nconst = 2;",
    "if (a) {\n  b();\n",
    "function f() {\n  return 1;\n}\n}",
    "const o = { a: 1, b: 2 ",
    "foo(1, 2;",
    "const t = `line1\nline2",
    "await;",
    "for await (const x of y) {}",
    "return await;",
    "const f = async x => await x; f(",
    "let x = 1; let x = 2;",
    "var x; let x;",
    "class A { constructor() {} constructor() {} }",
    "class A extends B { constructor() { super.x; } }",
    "({ a, b } = 1, 2) = 3",
    "[a, b] = [b, a]",
    "const [a, b] = ",
    "throw",
    "throw\nnew Error('x')",
    "do {} while",
    "label: for (;;) { continue nolabel; }",
    "new Promise((r) => r(1)",
    "JSON.parse('{'",
    "x = 1 +* 2",
    "'\\u{}'",
    "'\\u00g0'",
    "0b12",
    "0o9",
    "0x",
    "1e",
    ".5.5",
    "a.b.",
    "a..b",
    "a?.b = 1",
    "async function f() { yield 1 }",
    "function* g() { await 1 }",
    "arguments = 1",
    "'use strict'; eval = 1",
    "'use strict'; var public = 1",
    "enum E {}",
    "const fn = function() { return }; fn(",
    "console.log('a' 'b')",
    "const a = [1 2]",
    "let {a, b} = c; let {a} = d;",
    "x =>",
    "(x, y) =>",
    "async",
    "async function",
    "{ a: 1, b: 2 }",
    "return {a: 1,, b: 2}",
    "typeof",
    "void",
    "delete",
    "in",
    "1 in",
    "a = b = ",
    "a ||= ",
    "a &&= b ??= ",
    "#!shebang\nreturn 1",
    "<!-- html comment\nreturn 1",
]


def _syntax() -> Iterator[tuple[str, str, Cell]]:
    for code in SYNTAX_ERRORS:
        digest = hashlib.sha1(code.encode("utf-8")).hexdigest()[:10]
        yield "syntax", digest, _exec(code)


def _traps() -> Iterator[tuple[str, str, Cell]]:
    """The hostile corpus's serialization traps (`tests/hostile/_traps.py`) in every sink."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.hostile._traps import SINKS, TRAPS, trap_code

    for trap in TRAPS:
        for sink in SINKS:
            cell = _exec(trap_code(trap, sink))
            if "looping" in trap:
                cell["config"] = {"timeoutMs": 500}
            yield "traps", f"{trap}/{sink}", cell


def cells() -> Iterator[tuple[str, str, Cell]]:
    """Every recorded cell, in file order."""
    yield from _console_formatting()
    yield from _inspection_limits()
    yield from _declarations()
    yield from _search()
    yield from _restart_safe()
    yield from _cyclic()
    yield from _errors()
    yield from _traps()
    yield from _syntax()


def describes() -> Iterator[tuple[str, Json]]:
    """Catalogs whose `exec` description (the quick index) is recorded."""
    yield "empty-input", CATALOGS["empty-input"]
    for tool in CATALOGS["empty-input"]:
        yield f"empty-input/{tool['name']}", [tool]


if __name__ == "__main__":
    print(json.dumps(sum(1 for _ in cells())))
