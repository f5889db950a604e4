"""Realm escapes and cross-session tampering, on both executors with the same outcomes.

A cell of one session tries every way out of its realm that a V8 context offered (the global
object's constructor, call sites, caught errors, the guest API's functions) and replaces, in
every realm it reaches, what a worker or controller relies on: `JSON.parse`,
`JSON.stringify`, `Promise.prototype.then`, `Array.prototype.push`,
`String.prototype.charCodeAt`. A cell of another session on the same executor, later or
while the first is parked, must get exactly its own results, see pristine intrinsics, and
leave nothing of its data for the first to read.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime import Executor, QuickJSExecutor, V8Executor
from tests.conftest import run

LIMITS = Limits(timeout_ms=60_000)
SECRET = "SECRET-of-session-B"

ESCAPE = r"""
const realms = new Set([globalThis]);
const reach = (how) => {
  try {
    const found = how();
    if (found !== null && typeof found === "object") realms.add(found);
  } catch {}
};
const globalOf = (fn) => fn.constructor("return globalThis")();
const sites = () => {
  Error.prepareStackTrace = (e, s) => s;
  const s = new Error().stack;
  Error.prepareStackTrace = undefined;
  return s;
};
reach(() => globalOf(globalThis.constructor));
reach(() => globalOf(Object.getPrototypeOf(globalThis).constructor));
reach(() => globalOf(sites()[0].getThis));
reach(() => globalOf(Object.getPrototypeOf(sites()[0]).constructor));
reach(() => globalOf(echo));
reach(() => globalOf(catalog.search));
reach(() => globalOf(console.log));
reach(() => globalOf(setTimeout));
for (const fail of [() => null.x, () => new ArrayBuffer(2 ** 31), () => JSON.parse("{")]) {
  try { fail(); } catch (e) { reach(() => globalOf(e.constructor)); }
}
const deep = () => deep();
try { deep(); } catch (e) { reach(() => globalOf(e.constructor)); }
"""
TAMPER = r"""
const seen = [];
const note = (text) => { seen[seen.length] = String(text); };
for (const g of realms) {
  try {
    g.__seen = seen;
    const parse = g.JSON.parse;
    g.JSON.parse = function (text, reviver) { note(text); return parse.call(this, text, reviver); };
    const stringify = g.JSON.stringify;
    g.JSON.stringify = function (...args) {
      const out = stringify.apply(this, args);
      note(out);
      return out;
    };
    const then = g.Promise.prototype.then;
    g.Promise.prototype.then = function (a, b) { note("then"); return then.call(this, a, b); };
    g.Array.prototype.push = function (...values) { note(values); return 0; };
    g.String.prototype.charCodeAt = function () { return 49; };
  } catch {}
}
"""
# What the realms reached now hold of what they saw (a later cell reads an earlier one's).
REPORT = r"""
let leaked = 0;
for (const g of realms) {
  try { leaked += g.__seen.filter((s) => s.includes("SECRET")).length; } catch {}
}
return [realms.size, leaked];
"""
VICTIM = (
    "const r = await secret({});\ntext(r.token);\n"
    "const native = [JSON.parse, JSON.stringify, Promise.prototype.then, Array.prototype.push,\n"
    "  String.prototype.charCodeAt].every((f) => /\\[native code\\]/.test(String(f)));\n"
    "return [r, native, [3, 1, 2].sort(), typeof Deno];"
)
VICTIM_VALUE = [{"token": SECRET}, True, [1, 2, 3], "undefined"]


async def _secret(_: dict[str, Any]) -> Any:
    return {"token": SECRET}


def _executor(name: str) -> Executor:
    # No spare: a worker given back is the next one handed out, the most a session could
    # get of another's.
    return V8Executor(spares=0) if name == "v8" else QuickJSExecutor()


def _check_victim(envelope: dict[str, Any]) -> None:
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == VICTIM_VALUE
    assert envelope["output"] == [{"type": "text", "text": SECRET}]


@pytest.mark.parametrize("executor", ["quickjs", "v8"])
def test_a_later_cell_of_another_session_sees_nothing_of_a_tampering_one(executor: str) -> None:
    shared = _executor(executor)

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        tools = [Tool(name="secret", execute=_secret)]
        async with CodeMode(tools, executor=shared, limits=LIMITS, session_id="a") as attacker:
            tampered = await attacker.exec(ESCAPE + TAMPER + REPORT)
            async with CodeMode(tools, executor=shared, limits=LIMITS, session_id="b") as victim:
                first = await victim.exec(VICTIM)
            again = await attacker.exec(ESCAPE + REPORT)
        return tampered, first, again

    try:
        tampered, victim, again = run(main())
    finally:
        shared.close()
    assert tampered["value"] == [1, 0]  # one realm, its own
    _check_victim(victim)
    assert again["value"] == [1, 0]  # nothing of B


@pytest.mark.parametrize("executor", ["quickjs", "v8"])
def test_a_parked_tampering_cell_reads_nothing_of_a_session_that_runs_meanwhile(
    executor: str,
) -> None:
    shared = _executor(executor)
    entered, go_on = asyncio.Event(), asyncio.Event()

    async def gate(_: dict[str, Any]) -> Any:
        entered.set()
        await go_on.wait()
        return {"opened": True}

    async def main() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        tools = [Tool(name="gate", execute=gate), Tool(name="secret", execute=_secret)]
        async with (
            CodeMode(tools, executor=shared, limits=LIMITS, session_id="a") as attacker,
            CodeMode(tools, executor=shared, limits=LIMITS, session_id="b") as victim,
        ):
            parked = asyncio.create_task(
                attacker.exec(ESCAPE + TAMPER + "await gate({});" + REPORT)
            )
            await entered.wait()
            victims = [await victim.exec(VICTIM) for _ in range(3)]
            go_on.set()
            return await parked, victims

    try:
        tampered, victims = run(main())
    finally:
        shared.close()
    assert tampered["status"] == "completed", tampered
    assert tampered["value"] == [1, 0]
    for envelope in victims:
        _check_victim(envelope)
