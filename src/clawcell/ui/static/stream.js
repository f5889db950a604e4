// Reads a Server-Sent Events response of clawcell's UI and applies its page operations.
// Fragments are rendered (escaped and sanitized) by the server; this module only places them.
// Operations are queued and applied at most once per animation frame, whatever the rate of
// messages; text for one element is joined first, so a burst of deltas is one DOM write.
// A frame stops applying after FRAME_BUDGET ms, TEXT_BUDGET characters of text or HTML_BUDGET
// characters of HTML, and leaves the rest to the next one: a burst (or a long reply's rendered
// parts) never makes one long task, as the browser lays out a bounded amount of new content
// per frame (inserting is quick; the layout that follows is what costs).

export function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]').content;
}

const queue = [];
let head = 0;
const afterFrame = new Set();
let scheduled = false;
let idle = [];

// Run `hook` after each frame that applied operations (e.g. to follow the bottom).
export function onApplied(hook) {
  afterFrame.add(hook);
}

// Streamed text (an unfinished code fence's, in the draft) keeps finished lines in their own
// blocks and only the last line in a growing one, so appending text re-lays out one short
// block, not the whole fence.
const TAIL_LIMIT = 2048;
const BLOCK_CHARS = 4000;
const FRAME_BUDGET = 8;
const TEXT_BUDGET = 16000;
const HTML_BUDGET = 32000;

function appendText(target, text) {
  let tail = target.lastElementChild;
  if (!tail || !tail.classList.contains("draft-tail")) {
    tail = document.createElement("div");
    tail.className = "draft-tail";
    target.append(tail);
  }
  const combined = tail.textContent + text;
  let cut = combined.lastIndexOf("\n");
  if (cut < 0 && combined.length > TAIL_LIMIT) cut = combined.lastIndexOf(" ");
  if (cut < 0) {
    tail.textContent = combined;
    return;
  }
  const blocks = [];
  for (let start = 0; start < cut;) {  // blocks of a few lines each, cut at a newline
    let end = start + BLOCK_CHARS < cut ? combined.indexOf("\n", start + BLOCK_CHARS) : cut;
    if (end < 0 || end > cut) end = cut;
    const lines = document.createElement("div");
    lines.className = "draft-lines";
    lines.textContent = combined.slice(start, end);
    blocks.push(lines);
    start = end + 1;
  }
  tail.before(...blocks);
  tail.textContent = combined.slice(cut + 1);
}

function applyOne(op) {
  const target = document.getElementById(op.target);
  if (!target) return;
  if (op.op === "text") {
    if (target.classList.contains("draft-text")) appendText(target, op.text);
    else target.append(document.createTextNode(op.text));
  } else if (op.op === "append") {
    target.insertAdjacentHTML("beforeend", op.html);
  } else if (op.op === "before") {
    target.insertAdjacentHTML("beforebegin", op.html);
  } else if (op.op === "replace") {  // a disclosure the reader opened stays open
    const open = target.tagName === "DETAILS" && target.open;
    target.insertAdjacentHTML("afterend", op.html);
    target.remove();
    const fresh = open && document.getElementById(op.target);
    if (fresh && fresh.tagName === "DETAILS") fresh.open = true;
  } else if (op.op === "remove") {
    target.remove();
  } else if (op.op === "fold") {  // a summary: set its text and close its disclosure
    if (op.text !== undefined) target.textContent = op.text;
    const details = target.closest("details");
    if (details && !op.keepOpen) details.open = false;
  }
}

// The next queued operation (the queue is read from `head`; `flush` compacts it).
function next() {
  const op = queue[head];
  queue[head++] = undefined;
  return op;
}

function flush() {
  scheduled = false;
  const start = performance.now();
  let text = 0;
  let html = 0;
  const room = () => text < TEXT_BUDGET && html < HTML_BUDGET
    && performance.now() - start < FRAME_BUDGET;
  while (head < queue.length && room()) {
    const op = next();
    if (op.op !== "text") {
      html += op.html?.length ?? 0;
      applyOne(op);
      continue;
    }
    const left = TEXT_BUDGET - text;
    let joined = op.text;  // join the texts for one element that follow each other
    while (joined.length < left && queue[head]?.op === "text" && queue[head].target === op.target) {
      joined += next().text;
    }
    if (joined.length > left) {  // the rest waits for the next frame
      queue[--head] = { ...op, text: joined.slice(left) };
      joined = joined.slice(0, left);
    }
    text += joined.length;
    applyOne({ ...op, text: joined });
  }
  for (const hook of afterFrame) hook();
  if (head < queue.length) {
    if (head > 4096) {
      queue.splice(0, head);
      head = 0;
    }
    schedule();
    return;
  }
  queue.length = 0;
  head = 0;
  const waiting = idle;
  idle = [];
  for (const resolve of waiting) resolve();
}

function schedule() {
  if (!scheduled) {
    scheduled = true;
    requestAnimationFrame(flush);
  }
}

export function applyOps(ops) {
  if (!ops.length) return;
  for (const op of ops) queue.push(op);
  schedule();
}

// Resolves once every queued operation is on the page.
export function applied() {
  if (!scheduled) return Promise.resolve();
  return new Promise((resolve) => idle.push(resolve));
}

function parseMessage(block) {
  let name = "message";
  let id = null;
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("id: ")) id = line.slice(4);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  return { name, id, data: data.length ? JSON.parse(data.join("\n")) : null };
}

// A refusal's message: the `error` of a JSON body, else the body's text.
async function refusal(response) {
  const text = await response.text();
  try {
    return JSON.parse(text).error ?? text;
  } catch {
    return text;
  }
}

// POST `body` as JSON to `url` and apply each streamed message; `onMessage` sees them too.
// `signal` (an AbortSignal) stops reading; the promise then resolves.
export async function postStream(url, body, onMessage, signal) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw new Error(`${response.status}: ${await refusal(response)}`);
  await readStream(response, onMessage);
}

// POST `body` as JSON to `url`; the JSON answer (a refusal throws with its message).
export async function postJson(url, body, method = "POST") {
  const response = await fetch(url, {
    method,
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${response.status}: ${await refusal(response)}`);
  return response.json();
}

// An approval decision, as every card posts it (chat, playground, an MCP App's call): `card`
// is the card's form, `decision` "approve" or "deny"; its `note` and `remember` fields go too
// when the card has them (the server reads the body with one helper, `ui/_approvals.py`
// `read_decision`). Its buttons are disabled while the decision is posted, and enabled again
// with the refusal in its `.approval-error` when the server refuses (the promise then
// rejects). With `onMessage` the answer is a stream (applied as `postStream` does), else the
// JSON answer is returned.
export async function postDecision(url, card, decision, onMessage) {
  const field = (name) => card.elements.namedItem(name);
  const body = {
    decision: decision === "approve" ? "approve" : "deny",
    note: field("note")?.value ?? "",
    remember: field("remember")?.checked ?? false,
  };
  const buttons = card.querySelectorAll("button");
  const error = card.querySelector(".approval-error");
  for (const button of buttons) button.disabled = true;
  if (error) error.textContent = "";
  try {
    return await (onMessage ? postStream(url, body, onMessage) : postJson(url, body));
  } catch (failure) {
    if (error) error.textContent = `⚠ ${failure.message}`;
    for (const button of buttons) button.disabled = false;
    throw failure;
  }
}

// Apply each message of an SSE `response` (`onMessage` sees them too, with their `id`)
// until it ends; an aborted read resolves. `onData` hears of every chunk (keepalives too).
export async function readStream(response, onMessage, onData) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let scanned = 0;  // a long message arrives in many reads: search only the new text
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onData?.();
      buffer += value;
      let start = 0;
      let end;
      while ((end = buffer.indexOf("\n\n", Math.max(start, scanned - 1))) >= 0) {
        const block = buffer.slice(start, end);
        start = end + 2;
        if (block.startsWith(":")) continue;  // a keepalive comment
        const message = parseMessage(block);
        applyOps(message.data?.ops ?? []);
        onMessage?.(message);
      }
      buffer = buffer.slice(start);
      scanned = buffer.length;
    }
  } catch (error) {
    if (error.name !== "AbortError") throw error;
  }
  await applied();
}
