"""Hostile cells by family, beside `_traps.py`; `data/corpus.json` records the envelope each
ends in (recorded from this implementation and reviewed case by case)."""

from __future__ import annotations

from typing import Final

# Guest code that spends its budget inside native functions or callbacks they call.
NATIVE_FLOODS: Final = {
    "sort_comparator_loops": "[3, 1, 2].sort(() => { for (;;) {} });",
    "replace_callback_loops": "'aaa'.replace(/a/g, () => { for (;;) {} });",
    "json_parse_reviver_loops": "JSON.parse('[1,2]', () => { for (;;) {} });",
    "json_stringify_replacer_loops": "JSON.stringify({ a: 1 }, () => { for (;;) {} });",
    "template_to_string_loops": "`${{ toString() { for (;;) {} } }}`;",
    "array_from_length_getter_loops": "Array.from({ get length() { for (;;) {} } });",
    "map_callback_loops": "[1].map(() => { for (;;) {} });",
    "reduce_over_a_huge_range": "Array.from({ length: 1e9 }).reduce((a) => a + 1, 0);",
    "regex_catastrophic_backtracking": "/(a+)+$/.test('a'.repeat(40) + 'b');",
    "regex_nested_quantifiers": "/^(([a-z])+.)+[A-Z]([a-z])+$/.test('a'.repeat(35) + '!');",
    "proxy_trap_recursion_loop": (
        "const p = new Proxy({}, { get(t, k, r) { for (;;) {} } });\np.x;"
    ),
    "getter_on_object_prototype_loops": (
        "Object.defineProperty(Object.prototype, 'x', { get() { for (;;) {} } });\n({}).x;"
    ),
    "string_repeat_join_flood": (
        "let s = '';\nfor (;;) s = [s, 'x'.repeat(1000)].join('').slice(-100000);"
    ),
    "bigint_power_tower": "let x = 3n;\nfor (;;) x = x * x % (10n ** 5000n);",
    "typed_array_fill_loop": "const a = new Uint8Array(1 << 20);\nfor (;;) a.fill(1).reverse();",
    "array_splice_loop": "const a = Array(1e4).fill(0);\nfor (;;) a.splice(0, 1, 1);",
    "date_loop": "for (;;) new Date().toISOString();",
    "promise_all_of_a_loop_in_then": ("await Promise.resolve().then(() => { for (;;) {} });"),
    "generator_loop": "function* g() { for (;;) yield 1; }\nfor (const x of g()) {}",
    "finally_reenters_loop": "for (;;) { try { throw 1; } catch { continue; } finally { } }",
    "error_stack_flood": "for (;;) new Error('x').stack;",
    "localecompare_sort": (
        "const a = Array.from({ length: 2e5 }, (_, i) => 'k' + (i * 7919 % 2e5));\n"
        "for (;;) a.slice().sort((x, y) => x.localeCompare(y));"
    ),
}

# Cells that replace or pollute what the controller relies on, then use the guest API.
TAMPERING: Final = {
    "object_prototype_then": (
        "Object.prototype.then = (r) => r('forged');\nreturn await echo({ n: 1 });"
    ),
    "object_prototype_setters": (
        "for (const k of ['resolve', 'reject', 'site', 'method', 'type', 'text', 'value'])\n"
        "  Object.defineProperty(Object.prototype, k, { set() { throw new Error('set ' + k); },"
        " configurable: true });\n"
        "text('t');\njson({ j: 1 });\nreturn await echo({ n: 1 });"
    ),
    "object_prototype_getters": (
        "for (const k of ['code', 'message', 'payload', 'length', '0', '1', '2'])\n"
        "  Object.defineProperty(Object.prototype, k, { get() { return 'forged'; },"
        " configurable: true });\n"
        "return await echo({ n: 1 });"
    ),
    "array_prototype_index_setter": (
        "Object.defineProperty(Array.prototype, '0', { set() { throw new Error('idx'); } });\n"
        "text('t');\nreturn await echo({ n: [1] });"
    ),
    "array_prototype_index_setters": (
        "for (let i = 0; i < 10; i++) Object.defineProperty(Array.prototype, i, "
        "{ set() { throw new Error('idx ' + i); }, configurable: true });\n"
        "text('t');\nconsole.log('c', [1]);\nawait new Promise((r) => setTimeout(r, 0));\n"
        "try { await echo(1n); } catch (e) { text(e.message); }\nreturn await echo({ n: [1, 2] });"
    ),
    "object_prototype_descriptor_keys": (
        "for (const k of ['get', 'set', 'value', 'writable', 'enumerable', 'configurable'])\n"
        "  Object.defineProperty(Object.prototype, k, { __proto__: null,"
        " get() { throw new Error(k); }, configurable: true });\n"
        "text({ a: 1 });\ntry { await echo(1n); } catch (e) { text(e.message); }\n"
        "return await echo({ n: 1 });"
    ),
    "weak_map_prototype": (
        "WeakMap.prototype.get = WeakMap.prototype.has = WeakMap.prototype.set = () => "
        "{ throw new Error('weak'); };\ntext(echo);\ntry { await echo(2n); } catch (e) "
        "{ text(e.message); }\nreturn await echo({ n: 1 });"
    ),
    "promise_constructor_replaced": (
        "globalThis.Promise = function () { throw new Error('no promises'); };\n"
        "return await echo({ n: 1 });"
    ),
    "promise_resolve_replaced": (
        "Promise.resolve = () => { throw new Error('resolve'); };\n"
        "Promise.prototype.catch = null;\nreturn await echo({ n: 1 });"
    ),
    "symbol_to_primitive_on_string": (
        "String.prototype[Symbol.toPrimitive] = () => 'forged';\n"
        "String.prototype.toString = () => 'forged';\ntext('t');\nreturn await echo({ s: 'x' });"
    ),
    "object_keys_replaced": (
        "Object.keys = () => ['forged'];\nObject.getOwnPropertyNames = () => [];\n"
        "text({ a: 1 });\nreturn await echo({ n: 1 });"
    ),
    "object_define_property_replaced": (
        "Object.defineProperty = () => { throw new Error('dp'); };\n"
        "try { await echo(1n); } catch (e) { text(e.message); }\nreturn await echo({ n: 1 });"
    ),
    "error_constructor_replaced": (
        "globalThis.Error = function () { return { forged: true }; };\n"
        "try { await echo(1n); } catch (e) { text(String(e instanceof TypeError)); }\n"
        "return await echo({ n: 1 });"
    ),
    "error_prototype_to_string": (
        "Error.prototype.toString = () => 'forged';\nError.prototype.name = 'Forged';\n"
        "await echo(1n);"
    ),
    "math_random_replaced": "Math.random = () => 4;\nreturn [Math.random(), await echo({ n: 1 })];",
    "string_from_char_code_replaced": (
        "String.fromCharCode = String.fromCodePoint = () => 'forged';\n"
        "return new TextDecoder().decode(new TextEncoder().encode('é'));"
    ),
    "uint8array_replaced": (
        "globalThis.Uint8Array = function () { return [9]; };\n"
        "return Array.from(new TextEncoder().encode('ab'));"
    ),
    "reflect_replaced": (
        "for (const k of Object.getOwnPropertyNames(Reflect)) Reflect[k] = null;\n"
        "await new Promise((r) => setTimeout(r, 0, 1));\nreturn await echo({ n: 1 });"
    ),
    "handle_properties_tampered": (
        "try { echo.callableName = 'other'; } catch (e) { text(e.name); }\n"
        "try { Object.defineProperty(echo, 'name', { value: 'x' }); } catch (e) { text(e.name); }\n"
        "return [echo.name, await echo({ n: 1 })];"
    ),
    "catalog_and_api_tampered": (
        "try { catalog.search = null; } catch (e) { text(e.name); }\n"
        "try { API.read = null; } catch (e) { text(e.name); }\n"
        "return typeof catalog.search;"
    ),
    "global_this_prototype_swapped": (
        "Object.setPrototypeOf(globalThis, { forged: 1 });\nreturn await echo({ n: 1 });"
    ),
    "json_to_json_on_array_and_object": (
        "Object.prototype.toJSON = function () { return 'o'; };\n"
        "Array.prototype.toJSON = function () { return 'a'; };\n"
        "text([1, { a: 1 }]);\nreturn await echo({ l: [1] });"
    ),
    "set_timeout_with_string_callback": "setTimeout('globalThis.__leak = 1', 0);",
    "clear_timeout_with_forged_ids": (
        "for (const id of [-1, 0, 'bridge:sleep:1', {}, null, 1e9]) clearTimeout(id);\n"
        "return await new Promise((r) => setTimeout(r, 0, 'fired'));"
    ),
}

OUTPUT_FLOODS: Final = {
    "ten_thousand_text_items": "for (let i = 0; i < 1e4; i++) text('line ' + i);\nreturn 1;",
    "one_huge_text_item": "text('x'.repeat(5e6));\nreturn 1;",
    "huge_json_item": "json(Array.from({ length: 2e5 }, (_, i) => i));\nreturn 1;",
    "console_flood": "for (let i = 0; i < 1e4; i++) console.log('c', i, { i });\nreturn 1;",
    "huge_return_value": "return Array.from({ length: 3e5 }, (_, i) => ({ i }));",
    "huge_error_message": "throw new Error('e'.repeat(1e6));",
    "output_then_timeout": "for (let i = 0; i < 100; i++) text('t' + i);\nfor (;;) {}",
    "output_between_tool_calls": (
        "for (let i = 0; i < 200; i++) { text('x'.repeat(1000)); await echo({ i }); }\nreturn 1;"
    ),
    "surrogate_pairs_at_the_cut": "text('🦞'.repeat(1e5));\nreturn '🦞'.repeat(1e5);",
    "many_json_items_with_nesting": (
        "for (let i = 0; i < 2000; i++) json({ i, deep: [[[[{ i }]]]] });\nreturn 1;"
    ),
    "every_console_level_floods": (
        "for (let i = 0; i < 2000; i++)\n"
        "  for (const f of ['log', 'info', 'warn', 'error', 'debug'])\n"
        "    console[f]('x'.repeat(50), i);\n"
        "return 1;"
    ),
    "one_huge_console_message": "console.log('c'.repeat(1e6));\nreturn 1;",
    "huge_json_string_item": "json('j'.repeat(3e6));\nreturn 1;",
    "huge_string_value": "return 'v'.repeat(5e6);",
    "huge_object_value": (
        "return Object.fromEntries(Array.from({ length: 1e5 }, (_, i) => ['k' + i, i]));"
    ),
    "output_then_throw": "for (let i = 0; i < 1e4; i++) text('t' + i);\nthrow new Error('late');",
    "output_then_huge_throw": "text('x'.repeat(6e4));\nthrow new Error('e'.repeat(1e5));",
    "output_from_timers_after_the_value": (
        "for (let i = 0; i < 100; i++) setTimeout(() => text('late ' + i), 0);\nreturn 'early';"
    ),
    "output_from_parallel_tool_callbacks": (
        "await Promise.all(Array.from({ length: 100 }, (_, i) =>\n"
        "  echo({ i }).then(() => text('cb'.repeat(500) + i))));\nreturn 1;"
    ),
    "throw_an_object_with_a_huge_message": "throw { message: 'm'.repeat(2e5), name: 'N' };",
    "error_with_many_frames": (
        "function f(n) { if (n === 0) throw new Error('bottom'); return f(n - 1) + 1; }\nf(2000);"
    ),
    "rejection_with_huge_reason": "await Promise.reject('r'.repeat(1e6));",
    "multibyte_text_at_the_budget": (
        "for (let i = 0; i < 3e4; i++) text('é日🦞');\nreturn 'é'.repeat(4e4);"
    ),
    "nested_arrays_in_the_value": (
        "let o = [];\nfor (let i = 0; i < 100; i++) o = [o, 'x'.repeat(1000)];\nreturn o;"
    ),
}

CAPS: Final = {
    "reply_over_the_inbox": (
        "try { await big({ n: 11 * 1024 * 1024 }); } catch (e) { return e.message; }"
    ),
    "replies_just_inside_the_inbox": "return (await big({ n: 1024 * 1024 })).length;",
    "sixteen_in_flight_then_more": (
        "return (await Promise.all(Array.from({ length: 144 }, (_, i) => echo({ i })))).length;"
    ),
    "one_more_than_the_queue": (
        "try { Array.from({ length: 145 }, (_, i) => echo({ i })); } catch (e) { text(e.message); }"
    ),
    "timers_and_tools_share_the_queue": (
        "for (let i = 0; i < 100; i++) setTimeout(() => {}, 1);\n"
        "try { for (let i = 0; i < 100; i++) echo({ i }); } catch (e) { return 'overflow'; }"
    ),
    "results_save_until_full": (
        "let n = 0;\ntry { for (;;) { await results.save({ n, pad: 'x'.repeat(1e5) }); n++; } }\n"
        "catch (e) { return [n > 0, e.message.slice(0, 40)]; }"
    ),
    "store_a_huge_value": (
        "try { await store('k', 'x'.repeat(12 * 1024 * 1024)); return 'stored'; }\n"
        "catch (e) { return e.name; }"
    ),
    "cancelled_timers_do_not_leak_slots": (
        "for (let i = 0; i < 1000; i++) clearTimeout(setTimeout(() => {}, 1e6));\n"
        "return (await Promise.all(Array.from({ length: 144 }, (_, i) => echo({ i })))).length;"
    ),
    "exactly_the_queue_after_a_dispatch": (
        "await echo({});\n"
        "return (await Promise.all(Array.from({ length: 144 }, (_, i) => echo({ i })))).length;"
    ),
    "one_more_than_the_queue_after_a_dispatch": (
        "await echo({});\nArray.from({ length: 145 }, (_, i) => echo({ i }));\nreturn 1;"
    ),
    "timers_alone_fill_the_queue": (
        "try { for (let i = 0; i < 200; i++) setTimeout(() => {}, 1e6); }\n"
        "catch (e) { return e.message.slice(0, 38); }"
    ),
    "yields_beyond_the_queue": (
        "try { for (let i = 0; i < 200; i++) void yield_control('y' + i); }\n"
        "catch (e) { return e.message.slice(0, 38); }"
    ),
    "store_just_under_the_value_cap": (
        "await store('k', 'x'.repeat(256 * 1024 - 2));\nreturn (await load('k')).length;"
    ),
    "store_just_over_the_value_cap": (
        "try { await store('k', 'x'.repeat(256 * 1024 - 1)); }\n"
        "catch (e) { return [e.name, e.message]; }"
    ),
    "store_past_the_session_total": (
        "let n = 0;\ntry { for (; n < 10; n++) await store('k' + n, 'x'.repeat(200 * 1024)); }\n"
        "catch (e) { return [n, e.name]; }"
    ),
    "results_descriptor_beyond_64_entries": (
        "const ids = [];\nfor (let i = 0; i < 70; i++) ids.push((await results.save({ i })).id);\n"
        "return [ids.length, new Set(ids).size, await results.load(ids[0]).then(() => 'kept', "
        "(e) => e.message.slice(0, 30))];"
    ),
    "results_load_of_forged_ids": (
        "const out = [];\n"
        "for (const id of ['', 'result_', '../x', 'result_' + 'f'.repeat(1e4), {}, 1])\n"
        "  out.push(await results.load(id).then(() => 'loaded', (e) => e.name));\nreturn out;"
    ),
    "catalog_search_with_a_huge_query": (
        "try { return (await catalog.search('q'.repeat(2e6))).length; }\n"
        "catch (e) { return e.message.slice(0, 40); }"
    ),
    "api_read_of_forged_paths": (
        "const out = [];\n"
        "for (const p of ['../../etc/passwd', '/etc/passwd', 'tools/../x', '', 'x'.repeat(1e5)])\n"
        "  out.push(await API.read(p).then(() => 'read', (e) => e.message.slice(0, 24)));\n"
        "return out;"
    ),
}
