// clawcell V8 worker.
//
// Hand-written for clawcell; shipped in the package and run by Deno with no permissions at
// all (`deno run --no-prompt`, no `--allow-*`), inside bubblewrap when it is available. It
// runs cells in V8 for `V8Executor` (`_guest.py`), one at a time, each in a fresh
// `node:vm` context that has the same guest controller (`controller.js`) as the QuickJS
// executor, so the guest API, the step report and the error texts are the controller's own.
//
// The host talks to it over stdin/stdout, one JSON object per line:
//
//   {"op": "init", "controller": text, "config": text}  -> {"ok": true}
//   {"op": "start", "code": text, "seed": hex}           -> a run reply | failure
//   {"op": "run", "batch": text}                         -> a run reply | failure
//   {"op": "describe"}                                   -> {"ok": true, "text": text|null}
//   {"op": "reset", "config": text|null}                 (no reply: the next cell's context
//                                                         is prepared while the host waits;
//                                                         a config replaces the install one)
//
// A run reply is {"ok": true, "report": text, "rejected": bool}: the controller's step
// report once the cell's microtasks ran, and whether a rejection has no handler.
// `start` compiles the cell (a syntax error is the failure of kind `syntax_error`) and runs
// it, in one round trip. A failure is {"ok": false, "kind": "syntax_error"|"thrown", "message": text, "stack": text}.
// The host enforces the time budget by killing this process; the heap limit is V8's
// (`--max-old-space-size`), and running out of it ends the process. Memory outside V8's heap
// (ArrayBuffer and SharedArrayBuffer backing stores) is accounted by `memoryGuard`, installed
// in every cell's context before the controller; the host's watchdog bounds the process's
// resident memory as well (`_process.py`).
import vm from "node:vm";
import v8 from "node:v8";

const USER_FILE = "openclaw-code-mode:user.js";
const CONTROLLER_FILE = "clawcell:controller.js";
const GUARD_FILE = "clawcell:memory.js";
const REALM_FILE = "clawcell:realm.js";
const encoder = new TextEncoder();
const stringify = JSON.stringify;
const resolved = Promise.resolve();
const bind = (fn, self, ...args) => Function.prototype.bind.call(fn, self, ...args);

let controller = null; // the compiled controller (a context-independent script)
let installConfig = "";
let memoryBudget = Infinity; // bytes of heap and buffers a cell may hold (see memoryGuard)

// A full, synchronous garbage collection, for the memory guard to run before it refuses an
// allocation. `gc` is exposed only while one throwaway context is made: no cell context has it.
v8.setFlagsFromString("--expose-gc");
const collect = vm.runInNewContext("gc");
v8.setFlagsFromString("--no-expose-gc");
const heapStatistics = v8.getHeapStatistics;
// Live bytes of the isolate: its heap and the ArrayBuffer backing stores V8 accounts
// (SharedArrayBuffers are not among them: the guard counts those itself).
function measure() {
  const statistics = heapStatistics();
  return statistics.used_heap_size + statistics.external_memory;
}
let next = null; // the pristine context of the next cell: {context, host}
let current = null; // the context of the running cell
const rejections = new Map(); // promise -> reason, unhandled (see docs/divergences.md)

const isPrototypeOf = Function.prototype.call.bind(Object.prototype.isPrototypeOf);
addEventListener("unhandledrejection", (event) => {
  event.preventDefault(); // a cell's rejection must never end the worker
  // Deno may report a rejection of the previous cell after the next one started: only the
  // running cell's own promises (its context's Promise.prototype) count. (The walk up the
  // promise's prototype chain can run a cell's Proxy trap: what that throws counts too.)
  let own;
  try {
    own = current !== null && isPrototypeOf(current.promiseProto, event.promise);
  } catch {
    own = current !== null;
  }
  if (own) rejections.set(event.promise, event.reason);
});
addEventListener("rejectionhandled", (event) => {
  rejections.delete(event.promise);
});

// One macrotask turn: every microtask the cell queued has run when it resolves (a cell that
// queues microtasks forever never lets it resolve, and the host's deadline kills the worker).
const channel = new MessageChannel();
let wake = null;
channel.port1.onmessage = () => {
  const resolve = wake;
  wake = null;
  resolve();
};
function turn() {
  return new Promise((resolve) => {
    wake = resolve;
    channel.port2.postMessage(0);
  });
}

// The memory guard, evaluated inside each cell's context before the controller (so it sees
// the pristine intrinsics, and nothing the cell does can reach its state: it lives in this
// closure only). V8 bounds its heap itself, but ArrayBuffer backing stores live outside it;
// every way a cell can make one is wrapped here and charged after the allocation:
// ArrayBuffer, SharedArrayBuffer and the typed-array constructors (Proxies, which are also
// the prototypes' `constructor`, so species-created arrays pass through them), the methods
// that allocate (`slice`, `resize`, `transfer*`, `grow`, typed arrays' `slice`, `map`,
// `filter`, `toReversed`, `toSorted`, `with`, `Uint8Array.fromBase64`/`fromHex`). The test
// is on live bytes: the isolate's heap plus V8's own count of backing stores, re-measured
// once `slice` bytes were allocated since the last measure, and after a full garbage
// collection before an allocation is refused (so buffers a cell dropped do not count).
// SharedArrayBuffers are outside V8's count and counted here for the whole cell.
// A refused allocation throws `InternalError: out of memory`, catchable, as on QuickJS.
function memoryGuard(budget, outerMeasure, outerCollect) {
  "use strict";
  const global = globalThis;
  // `outerMeasure` and `outerCollect` are functions of another realm: whatever they throw
  // (a stack overflow when a cell recursed to the limit first) is of that realm, so it is
  // never let through; the cell gets this realm's error instead.
  const RangeErrorCtor = RangeError;
  const outer = (fn) => () => {
    let value;
    try {
      value = fn();
    } catch {
      throw new RangeErrorCtor("Maximum call stack size exceeded");
    }
    return typeof value === "number" ? value : 0;
  };
  const measure = outer(outerMeasure);
  const collect = outer(outerCollect);
  const { apply, construct, defineProperty, getOwnPropertyDescriptor, getPrototypeOf } = Reflect;
  const ProxyCtor = Proxy;
  const captureStackTrace = Error.captureStackTrace;
  const TypedArray = getPrototypeOf(Uint8Array);
  const getter = (proto, name) => getOwnPropertyDescriptor(proto, name).get;
  const bufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const sharedLength = getter(SharedArrayBuffer.prototype, "byteLength");
  const viewLength = getter(TypedArray.prototype, "byteLength");
  const includes = String.prototype.includes;
  const split = String.prototype.split;
  const slice = budget / 16;
  let measured = 0; // live bytes at the last measure
  let unmeasured = budget; // bytes allocated since (the first allocation measures)
  let shared = 0; // SharedArrayBuffer bytes of this cell

  class InternalError extends Error {}
  defineProperty(InternalError.prototype, "name", {
    value: "InternalError", writable: true, enumerable: false, configurable: true,
  });

  function charge(bytes, caller) {
    unmeasured += bytes;
    if (unmeasured < slice && measured + unmeasured + shared <= budget) return;
    measured = measure();
    unmeasured = 0;
    if (measured + shared <= budget) return;
    collect();
    measured = measure();
    if (measured + shared <= budget) return;
    const error = new InternalError("out of memory");
    captureStackTrace(error, caller);
    throw error;
  }
  function chargeShared(bytes, caller) {
    shared += bytes;
    charge(0, caller);
  }
  const sizeOf = (length, value) => {
    try {
      return apply(length, value, []);
    } catch {
      return 0;
    }
  };
  const isBuffer = (value) => {
    try {
      apply(bufferLength, value, []);
      return true;
    } catch {
      try {
        apply(sharedLength, value, []);
        return true;
      } catch {
        return false;
      }
    }
  };
  // An error thrown through a wrapped builtin (a bad length, a detached buffer, a cell's own
  // `valueOf` throwing) loses the wrapper's frames: its stack reads as if the cell had called
  // the builtin itself.
  function rethrow(error) {
    try {
      const descriptor = getOwnPropertyDescriptor(error, "stack");
      const stack = descriptor === undefined ? undefined : descriptor.value;
      if (typeof stack === "string" && apply(includes, stack, ["clawcell:memory.js"])) {
        const lines = apply(split, stack, ["\n"]);
        let kept = lines[0];
        for (let i = 1; i < lines.length; i++) {
          if (!apply(includes, lines[i], ["clawcell:memory.js"])) kept += "\n" + lines[i];
        }
        defineProperty(error, "stack", {
          value: kept, writable: true, enumerable: false, configurable: true,
        });
      }
    } catch {
      // not an object, a revoked proxy, a frozen error: thrown as it is
    }
    throw error;
  }

  function guardConstructor(name, measureMade) {
    const Target = global[name];
    if (typeof Target !== "function") return;
    const handler = {
      __proto__: null,
      construct(target, args, newTarget) {
        let made;
        try {
          made = construct(target, args, newTarget);
        } catch (error) {
          rethrow(error);
        }
        measureMade(made, args, handler.construct);
        return made;
      },
    };
    const guarded = new ProxyCtor(Target, handler);
    const spec = { value: guarded, writable: true, enumerable: false, configurable: true };
    defineProperty(Target.prototype, "constructor", spec);
    defineProperty(global, name, spec);
  }
  function guardMethod(owner, name, after, lengthBefore) {
    const descriptor = owner === undefined ? undefined : getOwnPropertyDescriptor(owner, name);
    if (descriptor === undefined || typeof descriptor.value !== "function") return;
    const original = descriptor.value;
    const guarded = {
      [name](...args) {
        const before = lengthBefore === undefined ? 0 : sizeOf(lengthBefore, this);
        let result;
        try {
          result = apply(original, this, args);
        } catch (error) {
          rethrow(error);
        }
        after(this, result, before, guarded);
        return result;
      },
    }[name];
    defineProperty(guarded, "length", { value: original.length, configurable: true });
    defineProperty(owner, name, { ...descriptor, value: guarded });
  }

  guardConstructor("ArrayBuffer", (made, _args, caller) => charge(sizeOf(bufferLength, made), caller));
  guardConstructor("SharedArrayBuffer", (made, _args, caller) =>
    chargeShared(sizeOf(sharedLength, made), caller));
  const views = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
    "Int32Array", "Uint32Array", "Float16Array", "Float32Array", "Float64Array",
    "BigInt64Array", "BigUint64Array"];
  for (let i = 0; i < views.length; i++) {
    guardConstructor(views[i], (made, args, caller) => {
      // A view of a buffer the cell passed allocates nothing (and a small typed array's
      // `buffer` is never asked for: that would move its elements off the heap).
      if (args.length > 0 && typeof args[0] === "object" && isBuffer(args[0])) return;
      charge(sizeOf(viewLength, made), caller);
    });
  }

  const newBuffer = (_self, result, _before, caller) => charge(sizeOf(bufferLength, result), caller);
  const newView = (_self, result, _before, caller) => charge(sizeOf(viewLength, result), caller);
  const grown = (length, chargeIt) => (self, _result, before, caller) => {
    const now = sizeOf(length, self);
    if (now > before) chargeIt(now - before, caller);
  };
  const bufferProto = ArrayBuffer.prototype;
  for (const name of ["slice", "transfer", "transferToFixedLength", "transferToImmutable", "sliceToImmutable"]) {
    guardMethod(bufferProto, name, newBuffer);
  }
  guardMethod(bufferProto, "resize", grown(bufferLength, charge), bufferLength);
  guardMethod(SharedArrayBuffer.prototype, "slice", (_self, result, _before, caller) =>
    chargeShared(sizeOf(sharedLength, result), caller));
  guardMethod(SharedArrayBuffer.prototype, "grow", grown(sharedLength, chargeShared), sharedLength);
  for (const name of ["slice", "map", "filter", "toReversed", "toSorted", "with"]) {
    guardMethod(TypedArray.prototype, name, newView);
  }
  for (const name of ["fromBase64", "fromHex"]) {
    guardMethod(getOwnPropertyDescriptor(global, "Uint8Array").value, name, newView);
  }
}

// The stack-trace hook of a cell's context, evaluated in it before anything else. V8 hands
// `Error.prepareStackTrace` the frames as CallSite objects of Deno's own realm, whose methods'
// `constructor` is the worker's `Function` (and so `Deno`, the worker's `JSON`, everything).
// The context's `Error.prepareStackTrace` becomes an accessor that Deno reads: it returns,
// per user function, a wrapper that copies each frame into an object of this realm (its
// methods are created here and answer primitives, or the frame's own `this` and function
// when they are of this realm) and keeps only the cell's own frames and those without a file
// (builtins, code the cell evaluated): never the worker's, Deno's or the controller's.
// Reading the property gives that wrapper; assigning it back restores its function.
function realmGuard(userFile) {
  "use strict";
  const ErrorCtor = Error;
  const RangeErrorCtor = RangeError;
  const { apply, defineProperty, getPrototypeOf } = Reflect;
  const create = Object.create;
  const freeze = Object.freeze;
  const ObjectProto = Object.prototype;
  const WeakMapCtor = WeakMap;
  const weakGet = WeakMap.prototype.get;
  const weakSet = WeakMap.prototype.set;

  defineProperty(ErrorCtor, "prepareStackTrace", {
    value: (_, sites) => sites, writable: true, enumerable: false, configurable: true,
  });
  const probe = new ErrorCtor().stack;
  delete ErrorCtor.prepareStackTrace;
  const siteProto = getPrototypeOf(probe[0]); // of Deno's realm: kept in this closure only
  const method = (name) => siteProto[name];
  const fileName = method("getFileName");
  const names = ["getThis", "getTypeName", "getFunction", "getFunctionName", "getMethodName",
    "getFileName", "getLineNumber", "getColumnNumber", "getEvalOrigin", "isToplevel", "isEval",
    "isNative", "isConstructor", "isAsync", "isPromiseAll", "getPromiseIndex",
    "getScriptNameOrSourceURL", "toString"];

  // A value of a frame is handed on when it is a primitive or of this realm.
  const own = (value) => {
    if ((typeof value !== "object" || value === null) && typeof value !== "function") return value;
    let last = value;
    let proto;
    while ((proto = getPrototypeOf(last)) !== null) last = proto;
    return last === ObjectProto || last === value ? value : undefined;
  };
  const call = (fn, site) => {
    try {
      return own(apply(fn, site, []));
    } catch {
      throw new RangeErrorCtor("Maximum call stack size exceeded");
    }
  };
  const frames = new WeakMapCtor(); // copied frame -> Deno's CallSite
  const Proto = create(ObjectProto);
  for (let i = 0; i < names.length; i++) {
    const fn = method(names[i]);
    if (typeof fn !== "function") continue;
    defineProperty(Proto, names[i], {
      value: {
        [names[i]]() {
          const site = apply(weakGet, frames, [this]);
          if (site === undefined) throw new TypeError("not a CallSite");
          return call(fn, site);
        },
      }[names[i]],
      writable: true, enumerable: false, configurable: true,
    });
  }
  const hidden = (site) => {
    const file = call(fileName, site);
    return typeof file === "string" && file !== "" && file !== userFile;
  };

  const wrappers = new WeakMapCtor(); // user function -> wrapper
  const users = new WeakMapCtor(); // wrapper -> user function
  let current;
  const wrap = (user) => {
    let wrapper = apply(weakGet, wrappers, [user]);
    if (wrapper !== undefined) return wrapper;
    wrapper = function prepareStackTrace(error, sites) {
      const copied = [];
      for (let i = 0; i < sites.length; i++) {
        if (hidden(sites[i])) continue;
        const frame = create(Proto);
        apply(weakSet, frames, [frame, sites[i]]);
        defineProperty(copied, copied.length, {
          __proto__: null, value: frame, writable: true, enumerable: true, configurable: true,
        });
      }
      return apply(user, ErrorCtor, [error, copied]);
    };
    apply(weakSet, wrappers, [user, wrapper]);
    apply(weakSet, users, [wrapper, user]);
    return wrapper;
  };
  defineProperty(ErrorCtor, "prepareStackTrace", {
    get: () => (typeof current === "function" ? wrap(current) : current),
    set: (value) => {
      const user = typeof value === "function" ? apply(weakGet, users, [value]) : undefined;
      current = user === undefined ? value : user;
    },
    enumerable: false,
    configurable: false,
  });
  freeze(Proto);
}

// Compiled once, like the controller: each context evaluates it to its own guard function.
const guardScript = new vm.Script("(" + memoryGuard + ")", { filename: GUARD_FILE });
const realmScript = new vm.Script("(" + realmGuard + ")", { filename: REALM_FILE });

function send(message) {
  const bytes = encoder.encode(stringify(message) + "\n");
  let at = 0;
  while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
}

// A context whose global object is an ordinary one of its own realm: not an object of this
// worker's realm behind interceptors (`vm.createContext({})` made `globalThis.constructor`
// the worker's `Object`, and its `constructor` the worker's `Function`).
const OWN_GLOBAL = vm.constants?.DONT_CONTEXTIFY;

function prepare() {
  const context = vm.createContext(OWN_GLOBAL ?? Object.create(null));
  realmScript.runInContext(context)(USER_FILE);
  // As in a QuickJS guest, no WebAssembly: a cell computes in JavaScript only.
  vm.runInContext("delete globalThis.WebAssembly", context);
  guardScript.runInContext(context)(memoryBudget, measure, collect);
  const host = controller.runInContext(context);
  host.install(installConfig);
  const promiseProto = vm.runInContext("Promise.prototype", context);
  return { context, host, promiseProto };
}

function failure(kind, error) {
  let message;
  let stack = "";
  try {
    message = String(error);
  } catch {
    message = "[Unserializable]";
  }
  try {
    if (error !== null && typeof error === "object" && typeof error.stack === "string") {
      stack = error.stack;
    }
  } catch {
    stack = "";
  }
  return { ok: false, kind, message, stack };
}

function init(request) {
  controller = new vm.Script(request.controller, { filename: CONTROLLER_FILE });
  installConfig = request.config;
  if (typeof request.memoryLimit === "number") {
    // The worker's own heap and buffers (this module, the controller, a prepared context)
    // are not the cell's: the budget is the cell's limit above them.
    collect();
    memoryBudget = request.memoryLimit + measure();
  }
  next = prepare();
  return { ok: true };
}

async function start(request) {
  current = next === null ? prepare() : next;
  next = null;
  rejections.clear();
  let compiled;
  try {
    compiled = new vm.Script("(async () => {\n" + request.code + "\n})", { filename: USER_FILE });
  } catch (error) {
    return failure("syntax_error", error);
  }
  let cell;
  try {
    cell = compiled.runInContext(current.context);
  } catch (error) {
    return failure("thrown", error); // code that closed the wrapper early threw
  }
  // Started from a promise job with a bound function, so no frame of this worker is on the
  // cell's stack (its errors show the user's frames and the controller's, as on QuickJS).
  resolved.then(bind(current.host.start, current.host, cell, request.seed));
  return await report();
}

async function run(request) {
  current.host.settle(request.batch);
  return await report();
}

async function report() {
  const host = current.host;
  await turn();
  const report = host.step();
  // A rejection is reported at the event loop's turn after it happened.
  if (report.charCodeAt(5) === 49 /* "s":1 */) await turn();
  return { ok: true, report, rejected: rejections.size > 0 };
}

function describe() {
  for (const reason of rejections.values()) return { ok: true, text: current.host.describeError(reason) };
  return { ok: true, text: null };
}

function reset(request) {
  if (typeof request.config === "string") installConfig = request.config;
  current = null;
  rejections.clear();
  next = prepare();
}

async function handle(line) {
  const request = JSON.parse(line);
  switch (request.op) {
    case "init":
      return init(request);
    case "start":
      return await start(request);
    case "run":
      return await run(request);
    case "describe":
      return describe();
    case "reset":
      reset(request);
      return null;
    default:
      throw new Error("unknown op " + stringify(request.op));
  }
}

// The request loop. Its own failure (a request it cannot handle, a context it cannot build)
// ends the process, which the host sees as a dead worker: the unhandled-rejection handler
// above swallows cells' rejections, and must not swallow this one, or the worker would hang.
async function serve() {
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(1 << 16);
  let pending = "";
  for (;;) {
    const n = await Deno.stdin.read(buffer);
    if (n === null) return;
    pending += decoder.decode(buffer.subarray(0, n), { stream: true });
    let end;
    while ((end = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      const reply = await handle(line);
      if (reply !== null) send(reply);
    }
  }
}

let status = 0;
try {
  await serve();
} catch (error) {
  status = 70;
  try {
    Deno.stderr.writeSync(encoder.encode("clawcell V8 worker failed: " + String(error) + "\n"));
  } catch {
    // stderr is gone: the exit status says it
  }
}
// The host closed the pipe (it ended, or it let this worker go): exit now, whatever a cell
// left pending (timers, a parked cell's promises, the turn channel).
Deno.exit(status);
