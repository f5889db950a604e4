// MCP Apps: the host side of the extension's JSON-RPC 2.0 protocol over postMessage.
//
// surfaces.js hands over every JSON-RPC message whose source is an MCP App frame this page
// drew. Requests answered here: `ui/initialize` (host info, capabilities and context: theme,
// display mode, the tool), `tools/call` (the view's own server only, through the app's API,
// which applies the session's policy; an approval card appears under the view when a
// person must decide), `ui/open-link` (http/https, opened by the host with noopener),
// `ui/message` (a user message into the chat), `ping`,
// `ui/request-display-mode` (inline only). Notifications: `ui/notifications/initialized`
// (the host then sends the tool's input and result), `ui/notifications/size-changed`.
//
// Apps act only when the user acts (the gesture is proven by surfaces.js, `take`): a
// `tools/call` runs with a gesture in the view (up to three per gesture) or, without one,
// only after the user allows it on a card under the view (one such card at a time; other
// calls fail meanwhile, and the first five refused calls are recorded as refused rows);
// `ui/message` needs a gesture (one message per gesture, 10 a minute);
// `ui/open-link` needs a gesture. Every call is an activity row of the session, listed under
// the view; approvals a call still waits for come back after a reload.
import { postDecision } from "./stream.js";

const PROTOCOL_VERSION = "2026-01-26";
const state = new WeakMap();
const MAX_REFUSED_ROWS = 5;

const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content || "";
const session = () => document.getElementById("transcript")?.dataset.session || "";
const surfaces = () => window.clawcellSurfaces;

function api(figure, suffix = "") {
  return `/api/sessions/${encodeURIComponent(session())}/mcp-apps/`
    + `${encodeURIComponent(figure.dataset.view)}${suffix}`;
}

async function postJson(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok && !data.error) data.error = `HTTP ${response.status}`;
  return data;
}

const send = (frame, message) => frame.contentWindow?.postMessage({ jsonrpc: "2.0", ...message }, "*");
const reply = (frame, id, result) => send(frame, { id, result });
const fail = (frame, id, message, code = -32000) => send(frame, { id, error: { code, message } });

function hostContext(frame, figure) {
  const dark = matchMedia("(prefers-color-scheme: dark)").matches;
  const box = frame.getBoundingClientRect();
  return {
    theme: dark ? "dark" : "light",
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    platform: "web",
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    containerDimensions: { width: Math.round(box.width), maxHeight: 8000 },
    styles: { variables: surfaces()?.tokens() || {} },
    toolInfo: { id: figure.dataset.toolCall, tool: { name: figure.dataset.tool } },
  };
}

// The view's activity rows (its tool calls), newest last, in a closed disclosure.
function showActivity(figure, rows) {
  let box = figure.querySelector("details.mcp-activity");
  if (!rows.length) return box?.remove();
  if (!box) {
    box = document.createElement("details");
    box.className = "mcp-activity";
    box.append(document.createElement("summary"), document.createElement("ol"));
    figure.append(box);
  }
  box.querySelector("summary").textContent = `App activity: ${rows.length} tool call${rows.length === 1 ? "" : "s"}`;
  box.querySelector("ol").replaceChildren(...rows.map((row) => {
    const item = document.createElement("li");
    const how = { approved: "allowed by you", gesture: "after your click" }[row.trigger] || "without your click";
    item.textContent = `${row.tool}(${JSON.stringify(row.arguments ?? {}).slice(0, 200)}) — ${row.status}, ${how}`;
    return item;
  }));
}

async function refresh(figure) {
  const response = await fetch(api(figure));
  if (!response.ok) return null;
  const call = await response.json();
  showActivity(figure, call.activity || []);
  return call;
}

async function sendToolData(frame, figure) {
  const call = await refresh(figure);
  if (!call) return;
  send(frame, { method: "ui/notifications/tool-input", params: { arguments: call.arguments || {} } });
  send(frame, { method: "ui/notifications/tool-result", params: call.result || { content: [] } });
  // Approvals still pending from before a reload: their cards come back.
  for (const pending of call.pending || []) {
    askApproval(figure, pending).then(() => refresh(figure));
  }
}

// An approval card under the view; resolves with the continued call's answer.
function askApproval(figure, pending) {
  return new Promise((resolve) => {
    const [first] = pending.approvals;
    const card = document.createElement("form");
    card.className = "mcp-approval";
    const what = document.createElement("p");
    what.append("The app asks to run ");
    const tool = document.createElement("code");
    tool.textContent = first?.tool || "a tool";
    what.append(tool, ":");
    const input = document.createElement("pre");
    input.textContent = JSON.stringify(first?.input ?? {}, null, 2).slice(0, 2000);
    const reason = document.createElement("p");
    reason.className = "mcp-approval-reason";
    reason.textContent = first?.reason || "";
    const buttons = document.createElement("p");
    for (const [decision, label] of [["approve", "Approve"], ["deny", "Deny"]]) {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.decision = decision;
      button.textContent = label;
      buttons.append(button);
    }
    card.append(what, input, reason, buttons);
    card.addEventListener("click", async (event) => {
      const button = event.target.closest("button[data-decision]");
      if (!button || !first) return;
      const url = api(figure, `/calls/${encodeURIComponent(pending.runId)}/approvals/${encodeURIComponent(first.id)}`);
      const answer = await postDecision(url, card, button.dataset.decision)
        .catch((failure) => ({ error: failure.message }));
      card.remove();
      resolve(answer);
    });
    figure.append(card);
  });
}

// A call that came without a gesture: the user allows or denies it here (a click in this
// page, which the app cannot make). Resolves with "approved" or null.
function askToRun(frame, figure, name) {
  const own = state.get(frame);
  if (own.holding) return Promise.resolve(null);
  own.holding = true;
  return new Promise((resolve) => {
    const card = document.createElement("form");
    card.className = "mcp-approval mcp-hold";
    const what = document.createElement("p");
    what.append("The app wants to run ");
    const tool = document.createElement("code");
    tool.textContent = String(name).slice(0, 80);
    what.append(tool, " without a click from you.");
    const buttons = document.createElement("p");
    for (const [decision, label] of [["approve", "Allow"], ["deny", "Deny"]]) {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.decision = decision;
      button.textContent = label;
      buttons.append(button);
    }
    card.append(what, buttons);
    card.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-decision]");
      if (!button || !event.isTrusted) return;
      card.remove();
      own.holding = false;
      resolve(button.dataset.decision === "approve" ? "approved" : null);
    });
    figure.append(card);
  });
}

async function callTool(frame, figure, id, params) {
  const name = params?.name;
  const trigger = surfaces()?.take(frame, "call") ? "gesture" : await askToRun(frame, figure, name);
  if (!trigger) {
    // Recorded as refused (the first few per frame and page; never run), then failed.
    const own = state.get(frame);
    if (own.refused < MAX_REFUSED_ROWS) {
      own.refused += 1;
      await postJson(api(figure, "/calls"), { name, arguments: params?.arguments ?? {}, trigger: "none" });
      refresh(figure);
    }
    return fail(frame, id, "the user did not allow this call (an app calls tools when the user acts in it)");
  }
  let answer = await postJson(api(figure, "/calls"), { name, arguments: params?.arguments ?? {}, trigger });
  refresh(figure);
  while (answer.approval) {
    answer = await askApproval(figure, answer.approval);
    refresh(figure);
  }
  if (answer.error) fail(frame, id, String(answer.error));
  else reply(frame, id, answer.result ?? { content: [] });
}

function openLink(frame, id, params) {
  let url;
  try { url = new URL(String(params?.url)); } catch { return fail(frame, id, "not a URL", -32602); }
  if (url.protocol !== "https:" && url.protocol !== "http:") return fail(frame, id, "only http(s) links open", -32602);
  if (!surfaces()?.take(frame, "link")) return fail(frame, id, "a link opens only from a click in the app");
  window.open(url.href, "_blank", "noopener,noreferrer");
  return reply(frame, id, {});
}

function message(frame, id, params) {
  const blocks = Array.isArray(params?.content) ? params.content : [];
  const text = blocks.filter((b) => b?.type === "text").map((b) => String(b.text)).join("\n");
  const sent = state.get(frame).messages;
  const now = Date.now();
  while (sent.length && now - sent[0] > 60000) sent.shift();
  const allowed = sent.length < 10 && surfaces()?.onScreen(frame) && surfaces()?.take(frame, "prompt");
  if (!allowed || !surfaces()?.prompt(text, frame)) return fail(frame, id, "message not sent: it needs a click in the app (one message per click, 10 a minute)");
  sent.push(now);
  return reply(frame, id, {});
}

// async on purpose, with no await: a handler that throws becomes a rejection, which the
// caller's `.catch` answers to the app as an error reply.
// deno-lint-ignore require-await
async function request(frame, figure, data) {
  const { id, method, params } = data;
  switch (method) {
    case "ui/initialize":
      state.get(frame).initialized = true;
      return reply(frame, id, {
        protocolVersion: PROTOCOL_VERSION,
        hostInfo: { name: "clawcell", version: "1" },
        hostCapabilities: { openLinks: {}, serverTools: {}, message: { text: {} }, logging: {} },
        hostContext: hostContext(frame, figure),
      });
    case "ping": return reply(frame, id, {});
    case "tools/call": return callTool(frame, figure, id, params);
    case "ui/open-link": return openLink(frame, id, params);
    case "ui/message": return message(frame, id, params);
    case "ui/request-display-mode": return reply(frame, id, { mode: "inline" });
    case "ui/update-model-context": return reply(frame, id, {});
    default: return fail(frame, id, `method ${String(method).slice(0, 80)} is not supported`, -32601);
  }
}

export function receive(frame, data) {
  const figure = frame.closest("figure.mcp-app");
  if (!figure || typeof data.method !== "string" && data.id === undefined) return;
  if (!state.has(frame)) state.set(frame, { initialized: false, sent: false, holding: false, messages: [], refused: 0 });
  if (data.id !== undefined && typeof data.method === "string") {
    request(frame, figure, data).catch((error) => fail(frame, data.id, String(error?.message || error)));
    return;
  }
  if (data.method === "ui/notifications/initialized" && !state.get(frame).sent) {
    state.get(frame).sent = true;
    sendToolData(frame, figure);
  } else if (data.method === "ui/notifications/size-changed") {
    surfaces()?.fit(frame, data.params?.height);
  } else if (data.method === "notifications/message") {
    surfaces()?.notice(frame, `App log: ${String(data.params?.data ?? "").slice(0, 300)}`);
  }
}
