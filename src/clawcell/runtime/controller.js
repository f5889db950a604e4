// clawcell guest controller.
//
// Hand-written for clawcell; shipped in the package and evaluated once per QuickJS instance,
// before any user code, as the script `clawcell:controller.js`. Its completion value is the
// private host interface (install/start/step/settle/describeError). Nothing of that interface
// is reachable from globalThis: user code sees only the Code Mode guest API.
//
// Every intrinsic the controller relies on is captured here, before user code can replace
// or pollute it, and internal records use null-prototype objects so a polluted
// Object.prototype (toJSON, getters) cannot change what the host receives.
(() => {
  "use strict";
  const G = globalThis;
  const uncurry = (fn) => Function.prototype.call.bind(fn);
  const O = Object;
  const keys = O.keys;
  const freeze = O.freeze;
  const defineProperty = O.defineProperty;
  const getPrototypeOf = O.getPrototypeOf;
  const setPrototypeOf = O.setPrototypeOf;
  const apply = Reflect.apply;
  const getOwnPropertyDescriptor = O.getOwnPropertyDescriptor;
  const objectCreate = O.create;
  const hasOwn = O.hasOwn;
  const isArray = Array.isArray;
  const ObjectProto = O.prototype;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const PromiseCtor = Promise;
  const promiseThen = uncurry(Promise.prototype.then);
  // Bound to their receiver (one native call instead of `uncurry`'s two): once per tool call.
  const newCapability = Promise.withResolvers.bind(PromiseCtor);
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const MapCtor = Map;
  const ProxyCtor = Proxy;
  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const mapHas = uncurry(Map.prototype.has);
  const mapDelete = uncurry(Map.prototype.delete);
  const WeakMapCtor = WeakMap;
  const weakGet = uncurry(WeakMap.prototype.get);
  const weakSet = uncurry(WeakMap.prototype.set);
  const weakHas = uncurry(WeakMap.prototype.has);
  // `Array.prototype.push` assigns, and an assignment past an array's end runs any setter a
  // cell put on `Array.prototype[n]`: the controller defines its elements instead. Descriptors
  // have no prototype, so `Object.prototype.get`/`set` cannot turn them into accessors.
  function push(array, ...values) {
    let n = array.length;
    for (let i = 0; i < values.length; i++) {
      defineProperty(array, n++, {
        __proto__: null, value: values[i], writable: true, enumerable: true, configurable: true,
      });
    }
    return n;
  }
  // The controller's own lists (the bridge's queues, the output not yet handed over) have no
  // prototype: an element is added by assignment, which no setter can see, at a fraction of a
  // `push`'s cost (one runs per tool call), and `splice` looks up no species constructor.
  const list = () => setPrototypeOf([], null);
  function append(array, value) {
    array[array.length] = value;
  }
  const shift = uncurry(Array.prototype.shift);
  const splice = uncurry(Array.prototype.splice);
  const join = uncurry(Array.prototype.join);
  const indexOf = uncurry(Array.prototype.indexOf);
  const split = uncurry(String.prototype.split);
  const sliceStr = uncurry(String.prototype.slice);
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const codePointAt = uncurry(String.prototype.codePointAt);
  const startsWith = uncurry(String.prototype.startsWith);
  const replaceStr = uncurry(String.prototype.replace);
  const regexExec = uncurry(RegExp.prototype.exec);
  const objectToString = uncurry(ObjectProto.toString);
  const StringCtor = String;
  const NumberCtor = Number;
  const MathFloor = Math.floor;
  const MathMax = Math.max;
  const imul = Math.imul;
  const parseIntFn = parseInt;
  const isFiniteNum = Number.isFinite;
  const fromCharCode = String.fromCharCode;
  const fromCodePoint = String.fromCodePoint;
  const Uint8ArrayCtor = Uint8Array;
  const ArrayBufferCtor = ArrayBuffer;
  const isView = ArrayBuffer.isView;
  const CONTROLLER_FILE = "clawcell:controller.js";

  // ---- Error.prepareStackTrace ----------------------------------------------------------
  // QuickJS-NG hands a user's `Error.prepareStackTrace` the call sites of every frame, and
  // `CallSite.getFunction()` returns the frame's function, even a strict one: the
  // controller's private closures were reachable that way. The user's function is kept here
  // and the engine is given a wrapper that drops the controller's own frames first. The
  // CallSite methods are captured now, before user code can replace them.
  // (On V8 the worker installed a hook of its own, not configurable, that does the same.)
  const prepareDescriptor = getOwnPropertyDescriptor(ErrorCtor, "prepareStackTrace");
  let userPrepare;
  let prepareTracked = false;
  if (
    prepareDescriptor !== undefined &&
    typeof prepareDescriptor.set === "function" &&
    prepareDescriptor.configurable
  ) {
    const setPrepare = prepareDescriptor.set;
    apply(setPrepare, ErrorCtor, [(_, sites) => sites]);
    const probeSites = new ErrorCtor().stack;
    apply(setPrepare, ErrorCtor, [undefined]);
    const siteFileName = uncurry(getPrototypeOf(probeSites[0]).getFileName);
    prepareTracked = true;
    const filteredPrepare = (error, sites) => {
      const kept = [];
      for (let i = 0; i < sites.length; i++) {
        if (siteFileName(sites[i]) !== CONTROLLER_FILE) push(kept, sites[i]);
      }
      return apply(userPrepare, ErrorCtor, [error, kept]);
    };
    defineProperty(ErrorCtor, "prepareStackTrace", {
      get: () => userPrepare,
      set: (value) => {
        userPrepare = value;
        apply(setPrepare, ErrorCtor, [typeof value === "function" ? filteredPrepare : value]);
      },
      enumerable: false,
      configurable: false,
    });
  }

  const USER_FILE = "openclaw-code-mode:user.js";
  const UNAWAITED =
    "[Unawaited Promise: use await or Promise.all(...) before emitting or returning values.]";
  const MAX_QUEUED = 128;
  const CYCLE = freeze({ __proto__: null }); // thrown by project() on a cycle

  // ---- state of the current cell (reset with the whole memory image between cells) ----
  let maxPending = 16;
  let inflight = 0;
  const waiters = new MapCtor(); // id -> [resolve, reject, site]
  const waiterGet = MapCtor.prototype.get.bind(waiters);
  const waiterSet = MapCtor.prototype.set.bind(waiters);
  const waiterDelete = MapCtor.prototype.delete.bind(waiters);
  const queue = list(); // [id, method, argsJson] waiting for an in-flight slot
  const outbox = list(); // [id, method, argsJson] admitted, not yet handed to the host
  const cancelled = list(); // ids the host must cancel
  const counters = { __proto__: null };
  const output = list(); // item JSON texts not yet handed to the host
  let state = 0; // 0 running, 1 value ready, 2 failed
  let valueJson = "null";
  let failure = "";
  let overflow = null;
  const handles = new WeakMapCtor(); // handle function -> metadata object
  const locations = new WeakMapCtor(); // bridge error -> its call-site frames, already mapped
  let consoleUnits = 0;
  let consoleClosed = false;

  // ---- errors and stack frames ----------------------------------------------------------

  const frameRe = /^\s*at (?:(.*?) \()?([^()]*):(\d+):(\d+)\)?$/;
  const nativeRe = /^\s*at (.*) \(native\)$/;

  // The frames a cell's error shows, as the release shows them: user frames mapped past the
  // wrapper line, with the native and `<input>` frames between them, through the last user
  // frame. Without a user frame (a stack overflow inside a native), the leading frames before
  // the controller's own.
  function userFrames(stack) {
    if (typeof stack !== "string") return "";
    const out = [];
    let lastUser = -1;
    let boundary = -1;
    const lines = split(stack, "\n");
    for (let i = 0; i < lines.length; i++) {
      const frame = stackFrame(lines[i]);
      if (frame === null) continue;
      if (frame === CONTROLLER_FILE) {
        if (boundary === -1) boundary = out.length;
        continue;
      }
      push(out, frame);
      if (sliceStr(frame, 0, 1) === "u") lastUser = out.length;
    }
    const n = lastUser !== -1 ? lastUser : boundary !== -1 ? boundary : out.length;
    let text = "";
    for (let i = 0; i < n; i++) text += "    at " + sliceStr(out[i], 1) + "\n";
    return text;
  }

  // `u<frame>` for a user frame, `n<frame>` for another shown frame, CONTROLLER_FILE for a frame
  // to hide, null for a line that is no frame (or the wrapper's line 1).
  function stackFrame(line) {
    const m = regexExec(frameRe, line);
    if (m === null) {
      const native = regexExec(nativeRe, line);
      return native === null ? null : "n" + native[1] + " (native)";
    }
    if (m[2] !== USER_FILE) return m[2] === "<input>" ? "n<input>:" + m[3] + ":" + m[4] : CONTROLLER_FILE;
    const row = NumberCtor(m[3]) - 1;
    if (row < 1) return CONTROLLER_FILE;
    const fn = m[1] === undefined || m[1] === "<eval>" ? "<anonymous>" : m[1];
    return "u" + fn + " (" + USER_FILE + ":" + row + ":" + m[4] + ")";
  }

  function stackOf(error) {
    try {
      const stack = error.stack;
      return typeof stack === "string" ? stack : "";
    } catch {
      return "";
    }
  }

  function safeString(value) {
    try {
      return StringCtor(value);
    } catch {
      try {
        return objectToString(value);
      } catch {
        return "[Unserializable]";
      }
    }
  }

  function safeTag(value) {
    try {
      return objectToString(value);
    } catch {
      return "[Unserializable]";
    }
  }

  function isError(value) {
    try {
      return value instanceof ErrorCtor;
    } catch {
      return false;
    }
  }

  // The text of an uncaught error: `Name: message` plus the user's frames.
  function describeError(reason) {
    if (!isError(reason)) {
      if (reason !== null && typeof reason === "object") return safeString(reason);
      return safeString(reason);
    }
    let name = "Error";
    let message = "";
    try {
      name = StringCtor(reason.name);
      message = StringCtor(reason.message);
    } catch {}
    const head = message === "" ? name : name + ": " + message;
    const frames = weakHas(locations, reason) ? weakGet(locations, reason) : userFrames(stackOf(reason));
    return frames === "" ? head : head + "\n" + frames;
  }

  // ---- projection of values for text/json and the final value (four conversion points) --

  function isPlain(value) {
    const proto = getPrototypeOf(value);
    return proto === ObjectProto || proto === null;
  }

  function isPromise(value) {
    try {
      return value instanceof PromiseCtor;
    } catch {
      return false;
    }
  }

  function setOwn(target, key, value) {
    defineProperty(target, key, {
      __proto__: null, value, enumerable: true, writable: true, configurable: true,
    });
  }

  function copyKeys(source, target, ancestors, finalValue, skipToJSON) {
    const names = keys(source);
    for (let i = 0; i < names.length; i++) {
      const key = names[i];
      if (skipToJSON && key === "toJSON") continue;
      setOwn(target, key, project(source[key], ancestors, finalValue));
    }
    return target;
  }

  function projectError(error, ancestors, finalValue) {
    const out = { __proto__: null };
    try {
      setOwn(out, "name", StringCtor(error.name));
      setOwn(out, "message", StringCtor(error.message));
    } catch (thrown) {
      // The release reads an error's name and message before serialising: what they throw
      // reaches the cell.
      throw { __proto__: null, escape: thrown };
    }
    const names = keys(error);
    for (let i = 0; i < names.length; i++) {
      const key = names[i];
      if (key === "toJSON" || key === "name" || key === "message" || key === "stack") continue;
      setOwn(out, key, project(error[key], ancestors, finalValue));
    }
    return out;
  }

  // P(v): promises -> diagnostic, handles -> metadata, plain objects/arrays -> fresh copies,
  // errors -> {name, message, ...}. Output items leave other objects to JSON.stringify
  // (toJSON honoured); final values copy their own enumerable keys (no toJSON call).
  function project(value, ancestors, finalValue) {
    if (value === null) return null;
    const type = typeof value;
    if (type === "function") {
      if (weakHas(handles, value)) return weakGet(handles, value);
      // A copied function would be dropped by JSON anyway, but an own `toJSON` copied
      // into the projection would be called: final values never call toJSON.
      return finalValue ? undefined : value;
    }
    if (type !== "object") return value;
    if (isPromise(value)) return UNAWAITED;
    if (indexOf(ancestors, value) !== -1) throw CYCLE;
    push(ancestors, value);
    try {
      if (isArray(value)) {
        // Final values never call toJSON, not even an inherited Array.prototype.toJSON.
        const out = finalValue ? setPrototypeOf([], null) : [];
        const n = value.length;
        for (let i = 0; i < n; i++) push(out, project(value[i], ancestors, finalValue));
        return out;
      }
      if (isError(value)) return projectError(value, ancestors, finalValue);
      if (isPlain(value)) return copyKeys(value, { __proto__: null }, ancestors, finalValue, false);
      if (!finalValue) return value;
      return copyKeys(value, { __proto__: null }, ancestors, finalValue, false);
    } finally {
      ancestors.length -= 1;
    }
  }

  function fallback(value, finalValue) {
    if (value === null || value === undefined) return null;
    const type = typeof value;
    if (type === "string" || type === "number" || type === "boolean") return value;
    if (isError(value)) {
      const out = { __proto__: null };
      try {
        setOwn(out, "name", StringCtor(value.name));
        setOwn(out, "message", StringCtor(value.message));
      } catch {}
      return out;
    }
    // Output items call String() unguarded, as the release does: an array cycle overflows the
    // stack in Array.prototype.join and the RangeError reaches the caller of text()/json().
    if (!finalValue) return StringCtor(value);
    return type === "object" ? safeTag(value) : safeString(value);
  }

  // Compact JSON of P(value), falling back for BigInt, cycles and throwing hooks. As in the
  // release, a final value is copied before the fallback guard (a throwing getter fails the
  // cell) and an output item that JSON leaves out (a function, a symbol) is written String().
  function toJsonText(value, finalValue) {
    if (value === undefined) return "null";
    let projected;
    if (finalValue) {
      try {
        projected = project(value, [], true);
      } catch (thrown) {
        if (thrown !== CYCLE) throw escaped(thrown);
        return stringify(fallback(value, true));
      }
    }
    try {
      const text = stringify(finalValue ? projected : project(value, [], false));
      if (text !== undefined || finalValue) return text === undefined ? "null" : text;
    } catch (thrown) {
      if (thrown !== null && typeof thrown === "object" && hasOwn(thrown, "escape")) throw thrown.escape;
    }
    return stringify(fallback(value, finalValue));
  }

  function escaped(thrown) {
    return thrown !== null && typeof thrown === "object" && hasOwn(thrown, "escape") ? thrown.escape : thrown;
  }

  // A JSON array of `values`, element by element: the controller's own arrays must not pass
  // through an `Array.prototype.toJSON` the user may have installed.
  function jsonArray(values) {
    let out = "[";
    for (let i = 0; i < values.length; i++) {
      const text = stringify(values[i]);
      out += (i ? "," : "") + (text === undefined ? "null" : text);
    }
    return out + "]";
  }

  function emit(item) {
    append(output, stringify(item));
  }

  function text(value) {
    if (typeof value === "string") emit({ __proto__: null, type: "text", text: value });
    else emit({ __proto__: null, type: "text", text: toJsonText(value, false) });
    return undefined;
  }

  function json(value) {
    // Spliced as text: re-stringifying parsed arrays would apply a polluted toJSON twice.
    append(output, '{"type":"json","value":' + toJsonText(value, false) + "}");
    return undefined;
  }

  // ---- console ----------------------------------------------------------------------

  const CONSOLE_BUDGET = 16384 - 100;
  const TRUNC = "…[truncated]";

  function clip(s, limit) {
    if (s.length <= limit) return s;
    let end = limit;
    const c = charCodeAt(s, end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end -= 1;
    return sliceStr(s, 0, end) + TRUNC;
  }

  // Inspection as the release does it (recorded in tests/conformance/code_mode/recorded/):
  // every visited value counts against the budget, and a container whose next child would pass
  // it ends with one truncation marker.
  const VISITS = 100;
  const WIDTH = 50;

  function inspect(value, depth, seen, budget) {
    budget.n++;
    if (value === undefined) return "undefined";
    if (value === null) return null;
    const type = typeof value;
    if (type === "string") return clip(value, 512);
    if (type === "number" || type === "boolean") return value;
    if (type === "bigint") return StringCtor(value) + "n";
    if (type === "symbol") return safeString(value);
    if (type === "function") return "[Function]";
    if (isPromise(value)) return UNAWAITED;
    if (indexOf(seen, value) !== -1) return "[Circular]";
    if (depth >= 4) return "[truncated]";
    push(seen, value);
    try {
      return isArray(value) ? inspectArray(value, depth, seen, budget)
        : inspectObject(value, depth, seen, budget);
    } finally {
      seen.length -= 1;
    }
  }

  function inspectArray(value, depth, seen, budget) {
    const out = setPrototypeOf([], null); // console inspection calls no toJSON
    const n = value.length;
    for (let i = 0; i < n && i < WIDTH; i++) {
      const d = getOwnPropertyDescriptor(value, i);
      if (d === undefined) continue; // holes are skipped, as forEach does
      if (budget.n >= VISITS) {
        push(out, "[truncated]");
        return out;
      }
      push(out, "value" in d ? inspect(d.value, depth + 1, seen, budget) : "[Accessor]");
    }
    if (n > WIDTH) push(out, "[truncated]");
    return out;
  }

  function inspectObject(value, depth, seen, budget) {
    const out = { __proto__: null };
    const names = keys(value);
    if (isError(value) && indexOf(names, "message") === -1) push(names, "message");
    for (let i = 0; i < names.length; i++) {
      if (i === WIDTH || budget.n >= VISITS) {
        setOwn(out, "…", "[truncated]");
        break;
      }
      const d = getOwnPropertyDescriptor(value, names[i]);
      const v = !d || !("value" in d) ? "[Accessor]" : inspect(d.value, depth + 1, seen, budget);
      setOwn(out, clip(names[i], 512), v);
    }
    return out;
  }

  function formatArg(value) {
    try {
      const inspected = inspect(value, 0, [], { n: 0 });
      if (typeof inspected === "string") return inspected;
      const text = stringify(inspected);
      return text === undefined ? "undefined" : text;
    } catch {
      return "[Unserializable]";
    }
  }

  function consoleMethod(prefix) {
    return function (...args) {
      if (consoleClosed) return undefined;
      const parts = [];
      for (let i = 0; i < args.length; i++) push(parts, formatArg(args[i]));
      const message = prefix + clip(join(parts, " "), 4096);
      const item = stringify({ __proto__: null, type: "text", text: message });
      if (consoleUnits + item.length > CONSOLE_BUDGET) {
        consoleClosed = true;
        emit({ __proto__: null, type: "text", text: "[console output truncated]" });
        return undefined;
      }
      consoleUnits += item.length;
      append(output, item);
      return undefined;
    };
  }

  // ---- the bridge ---------------------------------------------------------------------

  function overflowMessage() {
    return (
      "code mode bridge queue limit exceeded (" + MAX_QUEUED + " ordinary requests queued; " +
      maxPending + " in-flight slots). Await smaller batches before creating more tool calls or timers."
    );
  }

  // Queue one bridge request; the promise settles when the host answers it. `site` is where
  // the call was made (see `fastSite`), shown only if the call fails.
  function request(method, args, site) {
    if (overflow !== null) throw overflow;
    let argsJson;
    try {
      argsJson = jsonArray(args);
    } catch (error) {
      return new PromiseCtor((_, reject) => reject(error));
    }
    return send(method, "bridge:" + method + ":", '","' + method + '"]', "\n" + argsJson, site);
  }

  // A tool call's id is `CALL_PREFIX<n>`, and its text in the step report `["<id>` then
  // `CALL_SUFFIX` (see `send`): both made once, not per call.
  const CALL_PREFIX = "bridge:callValue:";
  const CALL_SUFFIX = '","callValue"]';

  // `request("callValue", [name, input], site)` of a tool handle, whose name's JSON text
  // (`headLine`: a newline, then `[<name>,`) is made once per handle: only the input is
  // stringified per call.
  function callValue(headLine, input, site) {
    if (overflow !== null) throw overflow;
    let text;
    try {
      text = stringify(input);
    } catch (error) {
      return new PromiseCtor((_, reject) => reject(error));
    }
    return send("callValue", CALL_PREFIX, CALL_SUFFIX, headLine + (text === undefined ? "null" : text) + "]", site);
  }

  // Number the request (`bridge:<method>:<n>`, which is `prefix` and `n`), admit it (in flight
  // while fewer than `maxPending` are, else queued, up to MAX_QUEUED), and make the promise its
  // reply settles. An entry is `[id, report, argsLine]`: `report` the request's text in the step
  // report (`["<id>","<method>"]`, `suffix` being `","<method>"]`) and `argsLine` a newline and
  // its arguments' JSON, so `step` only joins them. This runs once per tool call, so it is
  // written out here rather than split into helpers, and the waiter is `[resolve, reject,
  // site]` from `Promise.withResolvers` (no executor).
  function send(method, prefix, suffix, argsLine, site) {
    const n = (counters[method] || 0) + 1;
    counters[method] = n;
    const id = prefix + n;
    const entry = [id, '["' + id + suffix, argsLine];
    if (inflight < maxPending) {
      inflight += 1;
      outbox[outbox.length] = entry;
    } else if (queue.length < MAX_QUEUED) {
      queue[queue.length] = entry;
    } else {
      overflow = new ErrorCtor(overflowMessage());
      throw overflow;
    }
    const capability = newCapability();
    waiterSet(id, [capability.resolve, capability.reject, site]);
    return capability.promise;
  }

  function promote() {
    while (queue.length > 0 && inflight < maxPending) {
      inflight += 1;
      append(outbox, shift(queue));
    }
  }

  function toolError(payload, site) {
    const message = payload !== null && typeof payload === "object" ? StringCtor(payload.message) : StringCtor(payload);
    const code = payload !== null && typeof payload === "object" ? payload.code : undefined;
    const Ctor = code === "store_type" ? TypeErrorCtor : code === "store_range" ? RangeErrorCtor : ErrorCtor;
    const error = new Ctor(message);
    const location = userFrames(siteText(site));
    if (payload !== null && typeof payload === "object" && payload.code !== undefined) {
      setOwn(error, "location", location);
      setOwn(error, "code", StringCtor(payload.code));
      setOwn(error, "effectStatus", "unknown");
    }
    defineProperty(error, "stack", {
      __proto__: null, value: location, writable: true, configurable: true,
    });
    weakSet(locations, error, location);
    return error;
  }

  // Host -> guest: [[id, ok, payload], ...]. Replies for unknown ids are ignored.
  function settle(batchText) {
    const batch = parse(batchText);
    for (let i = 0; i < batch.length; i++) {
      const reply = batch[i];
      const id = reply[0];
      const waiter = waiterGet(id);
      if (waiter === undefined) continue;
      waiterDelete(id);
      inflight -= 1;
      if (reply[1]) waiter[0](reply[2]);
      else waiter[1](toolError(reply[2], waiter[2]));
    }
    if (queue.length > 0) promote();
  }

  // Guest -> host: one JSON text with new output, admitted requests and the cell state.
  // Built by hand: this runs once per bridge round trip, and empty parts are left out.
  // The report's opening in each state when no request waits in the queue (the usual case).
  const OPENINGS = freeze(['{"s":0,"q":0', '{"s":1,"q":0', '{"s":2,"q":0', '{"s":3,"q":0']);

  function step() {
    const status = overflow !== null ? 3 : state;
    let text = queue.length === 0 ? OPENINGS[status] : '{"s":' + status + ',"q":' + queue.length;
    if (output.length > 0) {
      text += ',"o":' + jsonArray(output);
      output.length = 0;
    }
    if (cancelled.length > 0) {
      text += ',"c":' + jsonArray(cancelled);
      cancelled.length = 0;
    }
    // The value's JSON text follows the report on the first line of its own (see below), so
    // a large value is neither escaped into a second copy here nor unescaped on the host.
    if (status === 1) text += ',"v":0';
    if (status === 2) text += ',"e":' + stringify(failure);
    if (status === 3) text += ',"e":' + stringify(overflow.message);
    text += ',"r":[';
    let args = status === 1 ? "\n" + valueJson : "";
    // Each request is `["<id>","<method>"]` here (an id is `bridge:<method>:<n>` and a method
    // one of the controller's own names: letters, digits and colons, which JSON writes as they
    // are), and its arguments follow the report on a line of their own (JSON text never holds
    // a raw newline), so the host can size them before it parses them. `send` made both texts.
    for (let i = 0; i < outbox.length; i++) {
      const r = outbox[i];
      text += i ? "," + r[1] : r[1];
      args += r[2];
    }
    outbox.length = 0;
    return text + "]}" + args;
  }

  // ---- timers ---------------------------------------------------------------------------

  let timerSeq = 0;
  const timers = new MapCtor(); // timer id -> bridge request id

  function setTimeout(callback, delay, ...args) {
    if (typeof callback !== "function") throw new TypeErrorCtor("setTimeout callback must be a function");
    let ms = NumberCtor(delay);
    ms = isFiniteNum(ms) ? MathMax(0, MathFloor(ms)) : 0;
    const timerId = ++timerSeq;
    const requestId = "bridge:sleep:" + ((counters.sleep || 0) + 1);
    const sleeping = request("sleep", [ms], "");
    mapSet(timers, timerId, requestId);
    promiseThen(sleeping, () => {
      if (!mapHas(timers, timerId)) return undefined;
      mapDelete(timers, timerId);
      return apply(callback, undefined, args);
    });
    return timerId;
  }

  function clearTimeout(timerId) {
    const requestId = mapGet(timers, timerId);
    if (requestId === undefined) return undefined;
    mapDelete(timers, timerId);
    // A sleep that already settled gave its in-flight slot back in `settle`.
    if (!mapHas(waiters, requestId)) return undefined;
    mapDelete(waiters, requestId);
    for (let i = 0; i < queue.length; i++) {
      if (queue[i][0] === requestId) {
        splice(queue, i, 1);
        return undefined;
      }
    }
    for (let i = 0; i < outbox.length; i++) {
      if (outbox[i][0] === requestId) {
        splice(outbox, i, 1);
        inflight -= 1;
        promote();
        return undefined;
      }
    }
    inflight -= 1;
    append(cancelled, requestId);
    promote();
    return undefined;
  }

  // ---- text encoding (QuickJS has no TextEncoder/TextDecoder) ---------------------------

  class TextEncoder {
    get encoding() {
      return "utf-8";
    }
    encode(input = "") {
      const s = StringCtor(input);
      const bytes = [];
      for (let i = 0; i < s.length; i++) {
        let c = charCodeAt(s, i);
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
          const d = charCodeAt(s, i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
            i += 1;
          }
        }
        if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
        if (c < 0x80) push(bytes, c);
        else if (c < 0x800) push(bytes, 0xc0 | (c >> 6), 0x80 | (c & 63));
        else if (c < 0x10000) push(bytes, 0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
        else push(bytes, 0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      }
      return new Uint8ArrayCtor(bytes);
    }
  }

  class TextDecoder {
    get encoding() {
      return "utf-8";
    }
    decode(input) {
      if (input === undefined) return "";
      let bytes;
      if (input instanceof ArrayBufferCtor) bytes = new Uint8ArrayCtor(input);
      else if (isView(input)) bytes = new Uint8ArrayCtor(input.buffer, input.byteOffset, input.byteLength);
      else throw new TypeErrorCtor("TextDecoder.decode expects an ArrayBuffer or a view");
      let out = "";
      let i = 0;
      while (i < bytes.length) {
        const b = bytes[i];
        const need = b < 0x80 ? 0 : b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : -1;
        let cp = need === 0 ? b : need === 1 ? b & 31 : need === 2 ? b & 15 : b & 7;
        let ok = need >= 0;
        for (let k = 1; ok && k <= need; k++) {
          const n = bytes[i + k];
          if (n === undefined || (n & 0xc0) !== 0x80) ok = false;
          else cp = (cp << 6) | (n & 63);
        }
        if (ok && ((need === 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (need === 3 && (cp < 0x10000 || cp > 0x10ffff)))) ok = false;
        if (!ok) {
          out += "\ufffd";
          i += 1;
          continue;
        }
        out += fromCodePoint(cp);
        i += need + 1;
      }
      return out;
    }
  }

  // ---- the guest API ----------------------------------------------------------------

  function callSite() {
    return stackOf(new ErrorCtor());
  }

  // Where a tool call was made, for the location its error shows if it fails (most never do).
  // `callSite()` formats the whole stack, the controller's two frames (`callSite` and the
  // handle) included, on every call. When nothing a cell set can take part in formatting (no
  // `Error.prepareStackTrace` of its own, the default `Error.stackTraceLimit`), the frames
  // below the handle are captured instead with `Error.captureStackTrace`, under a limit of 8
  // (the 10 less the two frames it leaves out), into a record `siteText` reads if the call
  // fails: the same frames, two fewer to format, and no `Error` object. The limit is set and
  // restored around the capture, where no user code can run (QuickJS reads a frame's name
  // from its own data property, and the limit is a number).
  const captureStackTrace = ErrorCtor.captureStackTrace;
  const limitDescriptor = getOwnPropertyDescriptor(ErrorCtor, "stackTraceLimit");
  const DEFAULT_LIMIT = 10;
  const fastSites =
    prepareTracked &&
    typeof captureStackTrace === "function" &&
    limitDescriptor !== undefined &&
    typeof limitDescriptor.get === "function" &&
    typeof limitDescriptor.set === "function" &&
    apply(limitDescriptor.get, ErrorCtor, []) === DEFAULT_LIMIT;
  const getLimit = fastSites ? limitDescriptor.get.bind(ErrorCtor) : undefined;
  const setLimit = fastSites ? limitDescriptor.set.bind(ErrorCtor) : undefined;
  const HIDDEN_FRAME = "    at callSite (" + CONTROLLER_FILE + ":1:1)\n";

  // The captured site of a call made by `fn`, or `undefined` when a cell's settings rule it out:
  // then `fn` calls `callSite()` itself (`fastSite(fn) ?? callSite()`), so that the stack has
  // the same frames as before.
  function fastSite(fn) {
    if (!fastSites || userPrepare !== undefined || getLimit() !== DEFAULT_LIMIT) return undefined;
    const site = objectCreate(null); // (a literal's `__proto__: null` copies its shape)
    setLimit(DEFAULT_LIMIT - 2);
    try {
      captureStackTrace(site, fn);
    } finally {
      // Also when the capture throws (a call at the stack's end overflows it).
      setLimit(DEFAULT_LIMIT);
    }
    return site;
  }

  // The stack text `callSite()` would have returned for `site` (for `userFrames`, which hides
  // the controller's frames: one stands for both).
  function siteText(site) {
    if (typeof site === "string") return site;
    const stack = site.stack;
    return typeof stack === "string" ? HIDDEN_FRAME + stack : "";
  }

  // A model that forgets `await` reads a property of the Promise (`catalog.search("x").map`).
  // The Promises of the guest API say so instead of answering `undefined`: their prototype,
  // one per API name and below Promise.prototype, has getters for the names models reach for.
  const MISUSED = ["map", "filter", "forEach", "find", "findIndex", "some", "every", "reduce",
    "slice", "includes", "indexOf", "join", "flatMap", "sort", "at", "length", "files",
    "content", "id", "value", "keys", "values", "entries"];
  const hintProtos = new MapCtor();

  function hinted(promise, label) {
    setPrototypeOf(promise, hintProto(label));
    return promise;
  }

  function hintProto(label) {
    let proto = mapGet(hintProtos, label);
    if (proto === undefined) {
      proto = { __proto__: PromiseCtor.prototype };
      for (let i = 0; i < MISUSED.length; i++) {
        const name = MISUSED[i];
        defineProperty(proto, name, {
          __proto__: null,
          get() {
            throw new TypeErrorCtor(
              label + " returns a Promise; use await: (await " + label + "(...))." + name);
          },
        });
      }
      mapSet(hintProtos, label, freeze(proto));
    }
    return proto;
  }

  function makeHandle(meta) {
    const name = meta.callableName;
    const headLine = "\n[" + stringify(name) + ",";
    let proto;
    // The call site is `fastSite(handle) ?? callSite()` written out (a frame fewer on every
    // call; `callValue` stays a function: written out too, it made a call cost more).
    const handle = function (input) {
      const value = input === undefined ? {} : input;
      let site;
      if (fastSites && userPrepare === undefined && getLimit() === DEFAULT_LIMIT) {
        site = objectCreate(null);
        setLimit(DEFAULT_LIMIT - 2);
        try {
          captureStackTrace(site, handle);
        } finally {
          setLimit(DEFAULT_LIMIT);
        }
      } else {
        site = callSite();
      }
      const promise = callValue(headLine, value, site);
      if (proto === undefined) proto = hintProto(name);
      setPrototypeOf(promise, proto);
      return promise;
    };
    defineProperty(handle, "name", { value: name });
    const names = keys(meta);
    for (let i = 0; i < names.length; i++) {
      defineProperty(handle, names[i], { value: meta[names[i]], enumerable: true });
    }
    defineProperty(handle, "describe", {
      value: () => hinted(request("describe", [name], callSite()), name + ".describe"),
      enumerable: true,
    });
    defineProperty(handle, "toJSON", { value: () => meta });
    weakSet(handles, handle, meta);
    return freeze(handle);
  }

  function define(name, value) {
    defineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });
  }

  // ---- the MCP namespace (spec §9): MCP.<server>.<method>, built from the install tree ----

  const MISSING_ONE = "Missing required MCP namespace argument: ";
  const MISSING_MANY = "Missing required MCP namespace arguments: ";

  function rejected(error) {
    return new PromiseCtor((_, reject) => reject(error));
  }

  function mcpError(Ctor, message) {
    const error = new Ctor(message);
    setOwn(error, "code", "mcp_error");
    return error;
  }

  // A server that could not be listed: every method of its scope rejects with the cause.
  function unavailableScope(server) {
    const fail = () => rejected(mcpError(ErrorCtor, server.unavailable));
    const scope = { __proto__: null };
    setOwn(scope, "$serverName", server.serverName);
    setOwn(scope, "$api", fail);
    return new ProxyCtor(freeze(scope), {
      get(target, key) {
        if (typeof key !== "string" || key in target || key === "then" || key === "toJSON") return target[key];
        return fail;
      },
    });
  }

  function hasValue(object, key) {
    const d = getOwnPropertyDescriptor(object, key);
    return d !== undefined && d.value !== undefined;
  }

  // One object argument (or none); top-level defaults applied; missing required keys named.
  function mcpInput(args, entry) {
    if (args.length > 1) return null;
    const given = args.length === 0 || args[0] === undefined ? {} : args[0];
    if (given === null || typeof given !== "object" || isArray(given)) return null;
    const input = {};
    const names = keys(given);
    for (let i = 0; i < names.length; i++) setOwn(input, names[i], given[names[i]]);
    const defaults = keys(entry.defaults);
    for (let i = 0; i < defaults.length; i++) {
      const key = defaults[i];
      if (!hasValue(input, key)) setOwn(input, key, parse(stringify(entry.defaults[key])));
    }
    return input;
  }

  function makeMcpMethod(entry) {
    const meta = freeze(entry.meta);
    const name = meta.callableName;
    const method = function (...args) {
      const input = mcpInput(args, entry);
      if (input === null) return rejected(new TypeErrorCtor("MCP namespace tools accept one object argument."));
      const missing = [];
      for (let i = 0; i < entry.required.length; i++) {
        if (!hasValue(input, entry.required[i])) push(missing, entry.required[i]);
      }
      if (missing.length > 0) {
        return rejected(mcpError(ErrorCtor, (missing.length === 1 ? MISSING_ONE : MISSING_MANY) + join(missing, ", ")));
      }
      return request("callValue", [name, input], fastSite(method) ?? callSite());
    };
    defineProperty(method, "name", { value: name });
    const names = keys(meta);
    for (let i = 0; i < names.length; i++) {
      defineProperty(method, names[i], { value: meta[names[i]], enumerable: true });
    }
    defineProperty(method, "describe", { value: () => request("describe", [name], callSite()) });
    defineProperty(method, "toJSON", { value: () => meta });
    weakSet(handles, method, meta);
    return freeze(method);
  }

  function installMcp(tree, byName) {
    const root = { __proto__: null };
    for (let s = 0; s < tree.servers.length; s++) {
      const server = tree.servers[s];
      if (server.unavailable !== undefined) {
        setOwn(root, server.identifier, unavailableScope(server));
        continue;
      }
      const scope = { __proto__: null };
      const groups = { __proto__: null };
      setOwn(scope, "$serverName", server.serverName);
      setOwn(scope, "$api", (toolName, options) => request("namespace", [
        server.identifier, toolName === undefined ? null : toolName, options === undefined ? null : options,
      ], callSite()));
      for (let m = 0; m < server.methods.length; m++) {
        const entry = server.methods[m];
        const handle = makeMcpMethod(entry);
        mapSet(byName, entry.meta.callableName, handle);
        if (entry.path.length === 1) {
          setOwn(scope, entry.path[0], handle);
          continue;
        }
        if (groups[entry.path[0]] === undefined) groups[entry.path[0]] = { __proto__: null };
        setOwn(groups[entry.path[0]], entry.path[1], handle);
      }
      const groupNames = keys(groups);
      for (let g = 0; g < groupNames.length; g++) setOwn(scope, groupNames[g], freeze(groups[groupNames[g]]));
      setOwn(root, server.identifier, freeze(scope));
    }
    setOwn(root, "$api", () => request("namespace", [], callSite()));
    const MCP = freeze(root);
    define("MCP", MCP);
    return freeze({ MCP });
  }

  function install(configText) {
    const config = parse(configText);
    maxPending = config.maxPending;
    const byName = new MapCtor();
    const all = [];
    for (let i = 0; i < config.bindings.length; i++) {
      const meta = freeze(config.bindings[i]);
      const handle = makeHandle(meta);
      mapSet(byName, meta.callableName, handle);
      push(all, handle);
      define(meta.callableName, handle);
    }
    freeze(all);
    const resolveHandles = (names) => {
      const out = [];
      for (let i = 0; i < names.length; i++) {
        const h = mapGet(byName, names[i]);
        if (h !== undefined) push(out, h);
      }
      return freeze(out);
    };
    define("catalog", freeze({
      search(query, options) {
        const found = request("search", [query, options === undefined ? null : options], callSite());
        return hinted(promiseThen(found, resolveHandles), "catalog.search");
      },
      all() {
        return all;
      },
    }));
    define("API", freeze({
      list(prefix) {
        return hinted(request("apiList", [prefix === undefined ? null : prefix], callSite()), "API.list");
      },
      read(path) {
        return hinted(request("apiRead", [path === undefined ? null : path], callSite()), "API.read");
      },
    }));
    define("results", freeze({
      save(value) {
        return hinted(request("resultSave", [value === undefined ? null : value], callSite()), "results.save");
      },
      load(id) {
        return hinted(request("resultLoad", [id === undefined ? null : id], callSite()), "results.load");
      },
      delete(id) {
        return hinted(request("resultDelete", [id === undefined ? null : id], callSite()), "results.delete");
      },
    }));
    define("store", (key, value) =>
      request("store", value === undefined ? [key] : [key, value], callSite()));
    // The host answers `[value]`, or `[]` for a missing key, which reads as `undefined`.
    define("load", (key) =>
      promiseThen(request("load", [key], callSite()), (found) => (found.length ? found[0] : undefined)));
    define("namespaces", config.mcp && config.mcp.servers.length > 0 ? installMcp(config.mcp, byName) : freeze({}));
  }

  define("text", text);
  define("json", json);
  define("console", freeze({
    log: consoleMethod(""),
    info: consoleMethod("[info] "),
    warn: consoleMethod("[warn] "),
    error: consoleMethod("[error] "),
    debug: consoleMethod("[debug] "),
  }));
  define("setTimeout", setTimeout);
  define("clearTimeout", clearTimeout);
  define("yield_control", (reason) =>
    request("yield", [reason === undefined ? null : reason], ""));
  define("TextEncoder", TextEncoder);
  define("TextDecoder", TextDecoder);

  // ---- the cell ---------------------------------------------------------------------

  function finish(value) {
    try {
      valueJson = toJsonText(value, true);
    } catch (error) {
      failure = describeError(error); // a getter of the final value threw
      state = 2;
      return;
    }
    state = 1;
  }

  // ---- Math.random ----------------------------------------------------------------------
  // QuickJS keeps its generator state in the context, which every cell restores from the
  // same image, so every cell would draw the same numbers. Cells use xoshiro128** instead,
  // seeded by the host for each cell; its state lives in this closure, so it also survives
  // snapshots.
  let r0 = 1, r1 = 2, r2 = 3, r3 = 4;
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  function next32() {
    const result = imul(rotl(imul(r1, 5), 7), 9) >>> 0;
    const t = r1 << 9;
    r2 ^= r0;
    r3 ^= r1;
    r1 ^= r2;
    r0 ^= r3;
    r2 ^= t;
    r3 = rotl(r3, 11);
    return result;
  }
  function seedRandom(hex) {
    r0 = parseIntFn(sliceStr(hex, 0, 8), 16) | 0;
    r1 = parseIntFn(sliceStr(hex, 8, 16), 16) | 0;
    r2 = parseIntFn(sliceStr(hex, 16, 24), 16) | 0;
    r3 = parseIntFn(sliceStr(hex, 24, 32), 16) | 0;
    if ((r0 | r1 | r2 | r3) === 0) r0 = 1;
  }
  defineProperty(Math, "random", {
    value: function random() {
      return (next32() * 2097152 + (next32() >>> 11)) / 9007199254740992;
    },
    writable: true,
    configurable: true,
  });

  function start(cell, seed) {
    seedRandom(seed);
    let promise;
    try {
      promise = cell();
    } catch (error) {
      failure = describeError(error);
      state = 2;
      return;
    }
    // The cell is an async function, so `promise` is native: no `then` lookup that a
    // polluted Promise.prototype.then could intercept.
    promiseThen(promise, finish, (error) => {
      failure = describeError(error);
      state = 2;
    });
  }

  return freeze({ install, start, step, settle, describeError });
})()
