// clawcell widget bridge: runs first in every widget document, before the widget's own code.
//
// It offers the embedding chat one private MessageChannel port (the only channel the chat
// listens to for this frame) and keeps that port in this closure, so widget code can use the
// port only through the checks below. Every built-in it relies on is captured before widget
// code can replace it. Reports: `size` (content height), `error` (uncaught errors, at most
// three distinct per load, capped), `prompt` (from `sendPrompt`, only within transient user
// activation). Receives: `theme` (design tokens as CSS variables).
(() => {
  "use strict";
  const apply = Reflect.apply;
  const post = MessagePort.prototype.postMessage;
  const now = Date.now;
  const trim = String.prototype.trim;
  const slice = String.prototype.slice;
  const setProperty = CSSStyleDeclaration.prototype.setProperty;
  const test = RegExp.prototype.test;
  const activation = navigator.userActivation;
  const isActive = activation
    ? Object.getOwnPropertyDescriptor(Object.getPrototypeOf(activation), "isActive")?.get
    : undefined;
  const root = document.documentElement;
  const channel = new MessageChannel();
  const port = channel.port1;
  const send = (message) => apply(post, port, [message]);
  window.parent.postMessage({ type: "clawcell:widget", version: 1 }, "*", [channel.port2]);

  const TOKEN = /^--[a-z][a-z-]{0,40}$/;
  port.onmessage = (event) => {
    const data = event.data;
    if (!data || data.type !== "theme" || typeof data.tokens !== "object") return;
    for (const [name, value] of Object.entries(data.tokens)) {
      if (apply(test, TOKEN, [name]) && typeof value === "string" && value.length <= 200) {
        apply(setProperty, root.style, [name, value]);
      }
    }
  };

  // sendPrompt(text): one user message into the widget's session; dropped silently unless
  // the user is interacting with this document right now (fails closed without the API).
  const sent = [];
  const sendPrompt = (text) => {
    if (typeof text !== "string" || !isActive || !apply(isActive, activation, [])) return false;
    const prompt = apply(trim, text, []);
    if (!prompt || prompt.length > 4000 || prompt[0] === "/") return false;
    const at = now();
    while (sent.length && at - sent[0] > 60000) sent.shift();
    if (sent.length >= 10) return false;
    sent.push(at);
    send({ type: "prompt", text: prompt });
    return true;
  };
  Object.defineProperty(window, "sendPrompt", { value: sendPrompt, enumerable: false });

  let reported = 0;
  const seen = new Set();
  const report = (message, source, line, column) => {
    const text = apply(slice, String(message || "Error"), [0, 500]);
    if (reported >= 3 || seen.has(text)) return;
    seen.add(text);
    reported += 1;
    const name = apply(slice, String(source || "").split("/").pop(), [0, 200]);
    const int = (n) => (Number.isInteger(n) && n >= 0 ? n : undefined);
    send({ type: "error", message: text, source: name, line: int(line), column: int(column) });
  };
  window.addEventListener("error", (e) => report(e.message, e.filename, e.lineno, e.colno));
  window.addEventListener("unhandledrejection", (e) => {
    const reason = e.reason;
    report(reason && reason.message ? reason.message : `Unhandled rejection: ${String(reason)}`);
  });

  let last = 0;
  let queued = false;
  const measure = () => {
    queued = false;
    // The body's own height (the root always fills the frame, so it cannot shrink it).
    const body = document.body;
    const height = body ? Math.ceil(body.getBoundingClientRect().height) : 0;
    if (height !== last) {
      last = height;
      send({ type: "size", height });
    }
  };
  const schedule = () => {
    if (!queued) {
      queued = true;
      requestAnimationFrame(measure);
    }
  };
  const observer = new ResizeObserver(schedule);
  observer.observe(root);
  document.addEventListener("DOMContentLoaded", () => observer.observe(document.body));
  window.addEventListener("load", schedule);
})();
