// MCP Apps: the host side of the extension's JSON-RPC 2.0 protocol over postMessage.
//
// surfaces.js hands over every JSON-RPC message whose source is an MCP App frame this page
// drew. Requests answered here: `ui/initialize` (host info, capabilities and context: theme,
// display mode, the tool), `tools/call` (the view's own server only, through the app's API,
// which applies the session's policy; an approval card appears under the view when a
// person must decide), `ui/open-link` (http/https, opened by the host with noopener),
// `ui/message` (a user message into the chat, only while the view has focus), `ping`,
// `ui/request-display-mode` (inline only). Notifications: `ui/notifications/initialized`
// (the host then sends the tool's input and result), `ui/notifications/size-changed`.
const PROTOCOL_VERSION = "2026-01-26";
const state = new WeakMap();

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

async function sendToolData(frame, figure) {
  const response = await fetch(api(figure));
  if (!response.ok) return;
  const call = await response.json();
  send(frame, { method: "ui/notifications/tool-input", params: { arguments: call.arguments || {} } });
  send(frame, { method: "ui/notifications/tool-result", params: call.result || { content: [] } });
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
      for (const b of card.querySelectorAll("button")) b.disabled = true;
      const url = api(figure, `/calls/${encodeURIComponent(pending.runId)}/approvals/${encodeURIComponent(first.id)}`);
      const answer = await postJson(url, { decision: button.dataset.decision });
      card.remove();
      resolve(answer);
    });
    figure.append(card);
  });
}

async function callTool(frame, figure, id, params) {
  let answer = await postJson(api(figure, "/calls"), { name: params?.name, arguments: params?.arguments ?? {} });
  while (answer.approval) answer = await askApproval(figure, answer.approval);
  if (answer.error) fail(frame, id, String(answer.error));
  else reply(frame, id, answer.result ?? { content: [] });
}

function openLink(frame, id, params) {
  let url;
  try { url = new URL(String(params?.url)); } catch { return fail(frame, id, "not a URL", -32602); }
  if (url.protocol !== "https:" && url.protocol !== "http:") return fail(frame, id, "only http(s) links open", -32602);
  window.open(url.href, "_blank", "noopener,noreferrer");
  return reply(frame, id, {});
}

function message(frame, id, params) {
  const blocks = Array.isArray(params?.content) ? params.content : [];
  const text = blocks.filter((b) => b?.type === "text").map((b) => String(b.text)).join("\n");
  const focused = document.activeElement === frame && surfaces()?.onScreen(frame);
  if (!focused || !surfaces()?.prompt(text)) return fail(frame, id, "message not sent");
  return reply(frame, id, {});
}

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
  if (!state.has(frame)) state.set(frame, { initialized: false, sent: false });
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
