// clawcell V8 worker.
//
// Hand-written for clawcell; shipped in the package and run by Deno with no permissions at
// all (`deno run --no-prompt`, no `--allow-*`), inside bubblewrap when it is available. It
// runs cells in V8 for `V8Executor` (`_v8_guest.py`), one at a time, each in a fresh
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
// (`--max-old-space-size`), and running out of it ends the process.
import vm from "node:vm";

const USER_FILE = "openclaw-code-mode:user.js";
const CONTROLLER_FILE = "clawcell:controller.js";
const encoder = new TextEncoder();
const stringify = JSON.stringify;
const resolved = Promise.resolve();
const bind = (fn, self, ...args) => Function.prototype.bind.call(fn, self, ...args);

let controller = null; // the compiled controller (a context-independent script)
let installConfig = "";
let next = null; // the pristine context of the next cell: {context, host}
let current = null; // the context of the running cell
const rejections = new Map(); // promise -> reason, unhandled (see docs/divergences.md)

const isPrototypeOf = Function.prototype.call.bind(Object.prototype.isPrototypeOf);
addEventListener("unhandledrejection", (event) => {
  event.preventDefault(); // a cell's rejection must never end the worker
  // Deno may report a rejection of the previous cell after the next one started: only the
  // running cell's own promises (its context's Promise.prototype) count.
  if (current !== null && isPrototypeOf(current.promiseProto, event.promise)) {
    rejections.set(event.promise, event.reason);
  }
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

function send(message) {
  const bytes = encoder.encode(stringify(message) + "\n");
  let at = 0;
  while (at < bytes.length) at += Deno.stdout.writeSync(bytes.subarray(at));
}

function prepare() {
  const context = vm.createContext({});
  // As in a QuickJS guest, no WebAssembly: a cell computes in JavaScript only.
  vm.runInContext("delete globalThis.WebAssembly", context);
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

const decoder = new TextDecoder();
const buffer = new Uint8Array(1 << 16);
let pending = "";
for (;;) {
  const n = await Deno.stdin.read(buffer);
  if (n === null) break;
  pending += decoder.decode(buffer.subarray(0, n), { stream: true });
  let end;
  while ((end = pending.indexOf("\n")) !== -1) {
    const line = pending.slice(0, end);
    pending = pending.slice(end + 1);
    const reply = await handle(line);
    if (reply !== null) send(reply);
  }
}
channel.port1.close();
