// A cell body (tests/runtime/v8/test_realm.py): collects every value a cell can reach, then
// walks each one's own properties (values, getters, setters, what getters return) and its
// prototype chain, and returns the paths of those whose prototype chain ends at an
// `Object.prototype` other than this context's own, that is, objects of another realm.
"use strict";
const OWN_OBJECT = Object.prototype;
const getPrototypeOf = Object.getPrototypeOf;
const ownKeys = Reflect.ownKeys;
const describe = Object.getOwnPropertyDescriptor;
const apply = Reflect.apply;
const roots = [];
const root = (path, value) => roots.push([path, value]);
const caught = async (path, make) => {
  try {
    root(path + ":value", await make());
  } catch (error) {
    root(path + ":error", error);
  }
};

// The global object and the guest API as they are.
root("globalThis", globalThis);
for (const key of ownKeys(globalThis)) root("globalThis." + String(key), globalThis[key]);

// What the guest API hands back: handles, promises, results, ids.
const pending = echo({ n: 1 });
root("echo()", pending);
await caught("await echo", () => pending);
await caught("echo bad input", () => echo(1n));
await caught("catalog.search", () => catalog.search("echo"));
root("catalog.all", catalog.all());
await caught("API.list", () => API.list());
await caught("API.read", () => API.read("nope.d.ts"));
await caught("results.save", () => results.save({ a: [1] }));
await caught("results.load", () => results.load("result_missing"));
await caught("store", () => store("k", { v: 1 }));
await caught("load", () => load("k"));
root("setTimeout id", setTimeout(() => {}, 0));
await caught("timer", () => new Promise((resolve) => setTimeout(resolve, 0, { fired: true })));
root("text()", text("t"));
root("json()", json({ j: 1 }));
root("console.log()", console.log("c"));

// Errors of every kind the engine and the guard raise.
await caught("TypeError", () => null.x);
await caught("SyntaxError", () => new Function("return )"));
await caught("eval SyntaxError", () => (0, eval)("{"));
await caught("JSON SyntaxError", () => JSON.parse("{"));
await caught("RangeError", () => new Array(-1));
await caught("out of memory", () => new ArrayBuffer(2 ** 31));
const recurse = () => recurse();
await caught("stack overflow", () => recurse());
// Stack overflows at every depth near the limit, while the guard measures the heap: the
// deepest frames run out of stack inside whatever the guard calls.
const deep = [];
let limit = 0;
const down = (n) => {
  try {
    down(n + 1);
  } catch (error) {
    if (limit === 0) limit = n;
    if (n > limit - 64) deep.push(error);
  }
  if (n > limit - 64) {
    try {
      new ArrayBuffer(6 * 1024 * 1024);
    } catch (error) {
      deep.push(error);
    }
  }
};
down(0);
root("deep errors", deep);

// Stack frames: every CallSite and what it exposes, from frames of the cell, of the
// controller (a getter run while the value is serialized, a tool result's callback) and of
// whatever called them.
const sites = [];
Error.prepareStackTrace = (error, frames) => {
  for (const frame of frames) {
    sites.push(frame);
    for (const name of ["getThis", "getFunction", "getTypeName", "getEvalOrigin", "getFileName"]) {
      try {
        sites.push(frame[name]());
      } catch (error) {
        sites.push(error);
      }
    }
  }
  return "";
};
const capture = () => new Error("frames").stack;
capture();
await echo({}).then(capture);
await new Promise((resolve) => setTimeout(() => resolve(capture()), 0));
text({ get a() { capture(); return 1; } });
json({ toJSON() { capture(); return 1; } });
root("call sites", sites);

// The walk.
const seen = new Set();
const foreign = [];
const queue = [];
const add = (path, value) => {
  if ((typeof value !== "object" || value === null) && typeof value !== "function") return;
  if (seen.has(value)) return;
  seen.add(value);
  queue.push([path, value]);
};
for (const [path, value] of roots) add(path, value);
for (let i = 0; i < queue.length && i < 200000; i++) {
  const [path, value] = queue[i];
  let last = value;
  let proto;
  try {
    while ((proto = getPrototypeOf(last)) !== null) {
      add(path + ".__proto__", proto);
      last = proto;
    }
  } catch {
    continue; // a revoked proxy
  }
  if (last !== value && last !== OWN_OBJECT) foreign.push(path);
  add(path + ".constructor", value.constructor);
  let keys;
  try {
    keys = ownKeys(value);
  } catch {
    continue;
  }
  for (const key of keys) {
    const at = path + "." + String(key);
    let property;
    try {
      property = describe(value, key);
    } catch {
      continue;
    }
    if (property === undefined) continue;
    add(at, property.value);
    add(at + "<get>", property.get);
    add(at + "<set>", property.set);
    if (property.get !== undefined) {
      try {
        add(at + "<got>", apply(property.get, value, []));
      } catch (error) {
        add(at + "<threw>", error);
      }
    }
  }
}
Error.prepareStackTrace = undefined;
return { walked: seen.size, sites: sites.length, deep: deep.length, foreign: foreign.slice(0, 40) };
