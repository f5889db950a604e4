// The chat view: sends a turn and streams its reply into the transcript.
import { applied, onApplied, postDecision, postJson, readStream } from "./stream.js";
import "./media.js";  // the image viewer
import * as attachments from "./attachments.js";

const transcript = document.getElementById("transcript");
const form = document.getElementById("composer");
const session = transcript.dataset.session;

function listSession() {
  if (document.getElementById("sessions").dataset.titled) {
    document.dispatchEvent(new CustomEvent("sessions:refresh"));  // sessions.js redraws it
    return;
  }
  const list = document.querySelector(".sessions ul");
  if (list.querySelector('a[aria-current="page"]')) return;  // listed (any id, any encoding)
  list.querySelector(".empty")?.remove();
  const link = document.createElement("a");
  link.href = `/?session=${encodeURIComponent(session)}`;
  link.textContent = session;
  link.setAttribute("aria-current", "page");
  const item = document.createElement("li");
  item.append(link);
  list.prepend(item);
}

// The session list shows the most recent sessions; the search box asks the server for the
// ones whose id contains what is typed (at most 50).
const search = document.getElementById("session-search");
let searching = 0;

search?.addEventListener("input", async () => {
  if (document.getElementById("sessions").dataset.titled) return;  // sessions.js searches
  const mine = ++searching;
  await new Promise((resolve) => { setTimeout(resolve, 150); });
  if (mine !== searching) return;  // a later keystroke asks instead
  const response = await fetch(`/api/sessions?q=${encodeURIComponent(search.value)}&limit=50`);
  if (!response.ok || mine !== searching) return;
  const items = (await response.json()).map(({ sessionId }) => {
    const link = document.createElement("a");
    link.href = `/?session=${encodeURIComponent(sessionId)}`;
    link.textContent = sessionId;
    if (sessionId === session) link.setAttribute("aria-current", "page");
    const item = document.createElement("li");
    item.append(link);
    return item;
  });
  if (!items.length) {
    const none = document.createElement("li");
    none.className = "empty";
    none.textContent = "no session matches";
    items.push(none);
  }
  document.getElementById("session-list").replaceChildren(...items);
  document.getElementById("sessions-more").hidden = true;
});

// Follow the bottom only while the reader is there; otherwise offer "Jump to latest".
const jump = document.getElementById("jump-latest");
let following = true;

function scrollDown() {
  if (following) transcript.scrollTop = transcript.scrollHeight;
  else jump.hidden = false;
}

transcript.addEventListener("scroll", () => {
  following = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 48;
  if (following) jump.hidden = true;
}, { passive: true });

jump.addEventListener("click", () => {
  following = true;
  jump.hidden = true;
  transcript.scrollTop = transcript.scrollHeight;
});

// Sending a message expires every approval still waiting: say so while one is on the page.
const pendingWarning = document.getElementById("pending-warning");

function warnPending() {
  pendingWarning.hidden = !transcript.querySelector("form.approval button[data-decision]:not(:disabled)");
}

onApplied(scrollDown);
onApplied(warnPending);

const stopButton = document.getElementById("stop");
const field = form.elements.namedItem("text");
const sendButton = form.querySelector("button.send");
const api = `/api/sessions/${encodeURIComponent(session)}`;

// The turn this page follows (the server owns it: reloading or leaving does not stop it).
let liveTurn = transcript.dataset.liveTurn || null;
let received = 0;  // messages of `liveTurn` applied so far: a reconnect resumes after them

function running(on) {
  document.body.dataset.turn = on ? "running" : "done";
  sendButton.textContent = on ? "Queue" : "Send";  // a message sent now waits its turn
  stopButton.hidden = !on;
  stopButton.disabled = false;
}

// An error banner: what failed in words, the details folded, Copy and Dismiss.
function banner(summary, details = "") {
  const box = document.createElement("div");
  box.className = "turn-error error-banner";
  box.setAttribute("role", "alert");
  const text = document.createElement("p");
  text.textContent = `⚠ ${summary}`;
  box.append(text);
  const more = document.createElement("details");
  const label = document.createElement("summary");
  label.textContent = "Details";
  const pre = document.createElement("pre");
  pre.tabIndex = 0;
  pre.textContent = details || summary;
  more.append(label, pre);
  const copyButton = document.createElement("button");
  copyButton.type = "button";
  copyButton.className = "copy copy-error";
  copyButton.textContent = "Copy";
  copyButton.setAttribute("aria-label", "Copy error details");
  const dismiss = document.createElement("button");
  dismiss.type = "button";
  dismiss.className = "copy dismiss-error";
  dismiss.textContent = "Dismiss";
  box.append(more, copyButton, dismiss);
  copyButton.addEventListener("click", () => copy(copyButton, `${summary}\n${pre.textContent}`));
  dismiss.addEventListener("click", () => { box.remove(); field.focus(); });
  transcript.append(box);
  scrollDown();
}

stopButton.addEventListener("click", async () => {
  if (!liveTurn) return;
  stopButton.disabled = true;
  const stopped = liveTurn;
  field.focus();  // the Stop button goes away: focus stays on a control that stays
  try {  // Stop names its turn: a queued message is never what it stops
    await postJson(`${api}/turns/${encodeURIComponent(stopped)}/stop`);
  } catch (error) {
    stopButton.disabled = false;
    banner("Stop did not reach the server; the turn may still run.", error.message);
  }
});

// The queue: messages sent while a turn runs, each editable and removable until its turn.
const queueList = document.getElementById("queue");

function queuedItem(message) {
  const item = document.createElement("li");
  item.className = "queued";
  item.dataset.id = message.id;
  const text = document.createElement("p");
  text.className = "queued-text";
  text.textContent = message.text;
  const edit = document.createElement("button");
  edit.type = "button";
  edit.className = "queued-edit";
  edit.textContent = "Edit";
  edit.setAttribute("aria-label", `Edit queued message: ${message.text.slice(0, 40)}`);
  const drop = document.createElement("button");
  drop.type = "button";
  drop.className = "queued-drop";
  drop.textContent = "Drop";
  drop.setAttribute("aria-label", `Drop queued message: ${message.text.slice(0, 40)}`);
  item.append(text, edit, drop);
  return item;
}

function showQueue(queue) {
  const focused = document.activeElement?.closest?.(".queued");
  if (focused && queueList.contains(focused) && focused.querySelector("textarea")) return;
  queueList.replaceChildren(...queue.map(queuedItem));
  queueList.hidden = queue.length === 0;
}

queueList.addEventListener("click", async (event) => {
  const button = event.target.closest("button");
  const item = button?.closest(".queued");
  if (!item) return;
  const url = `${api}/queue/${encodeURIComponent(item.dataset.id)}`;
  try {
    if (button.matches(".queued-drop")) {
      await postJson(url, undefined, "DELETE");
      item.remove();
      queueList.hidden = !queueList.children.length;
      field.focus();
    } else if (button.matches(".queued-edit")) {
      const text = item.querySelector(".queued-text");
      const box = document.createElement("textarea");
      box.value = text.textContent;
      box.setAttribute("aria-label", "queued message");
      text.replaceWith(box);
      button.textContent = "Save";
      button.className = "queued-save";
      box.focus();
    } else if (button.matches(".queued-save")) {
      const box = item.querySelector("textarea");
      const answer = await postJson(url, { text: box.value }, "PATCH");
      item.replaceWith(queuedItem(answer.queued));
      field.focus();
    }
  } catch (error) {
    banner("The queued message could not be changed.", error.message);
  }
});

// Follow the session's turns live: the running one's backlog, then every turn as it comes
// (from this tab or another); after a network drop, reconnect with backoff and resume.
const connection = document.getElementById("connection");
let backoff = 500;
let ended = false;  // `liveTurn` was seen to its end
let resume = false;  // the stream ended on purpose: reconnect at once

function onLive(message) {
  if (message.name === "live") {
    const event = message.data.event;
    if (event.type === "turn") {
      if (event.turnId !== liveTurn) received = 0;
      liveTurn = event.turnId;
      ended = false;
      running(event.state === "running");
    } else if (event.type === "turn_end") {
      ended = true;
      const id = event.turnId;
      applied().then(() => {  // "done" once the turn's last operations are on the page
        if (!ended || liveTurn !== id) return;  // the next turn began meanwhile
        running(false);
        listSession();
      });
    } else if (event.type === "queue") {
      showQueue(event.queue);
    } else if (event.type === "gone" && ended) {  // follow whatever runs next
      liveTurn = null;
      received = 0;
      resume = true;
    } else if (event.type === "gone") {
      window.location.reload();  // missed the turn's end: the transcript holds it whole now
    }
    return;
  }
  received += 1;
}

// A stream that stays silent past twice the server's keepalive is a dead connection; going
// offline drops it at once. Either way the loop below reconnects.
const SILENT_MS = 35000;
let current = null;  // the AbortController of the open stream

function drop() {
  current?.abort();
}

let wake = null;  // ends the wait before a reconnect (back online: try at once)
window.addEventListener("offline", drop);
window.addEventListener("online", () => wake?.());

async function live() {
  for (;;) {
    const query = liveTurn ? `?turn=${encodeURIComponent(liveTurn)}&from=${received}` : "";
    const controller = new AbortController();
    current = controller;
    let heard = Date.now();
    const watchdog = setInterval(() => {
      if (Date.now() - heard > SILENT_MS) controller.abort();
    }, 5000);
    try {
      const response = await fetch(`${api}/live${query}`, { signal: controller.signal });
      if (!response.ok) throw new Error(`${response.status}`);
      connection.hidden = true;
      backoff = 500;
      await readStream(response, onLive, () => { heard = Date.now(); });
    } catch {
      // a network drop: said on the page, tried again later
    } finally {
      clearInterval(watchdog);
    }
    if (resume) {
      resume = false;
      continue;
    }
    connection.hidden = false;
    connection.textContent = `Connection lost; reconnecting in ${Math.round(backoff / 1000)} s…`;
    await new Promise((resolve) => {
      wake = resolve;
      setTimeout(resolve, backoff);
    });
    backoff = Math.min(backoff * 2, 15000);
  }
}

async function send(text, files = []) {
  following = true;
  const wasRunning = document.body.dataset.turn === "running";
  running(true);
  try {  // the live stream shows the turn (or the queue): this only starts it
    await postJson(`${api}/turns?follow=0`, files.length ? { text, attachments: files } : { text });
    if (files.length) attachments.clear();
  } catch (error) {
    running(wasRunning);
    if (files.length && !field.value) field.value = text;  // the files stay attached too
    banner("The message was not sent.", `${error.message}\n\n${text}`);
  }
}

// An approval card: Approve / Deny post the decision; the continued turn comes live.
async function decide(card, decision) {
  const url = `${api}/runs/${encodeURIComponent(card.dataset.run)}`
    + `/approvals/${encodeURIComponent(card.dataset.approval)}?follow=0`;
  field.focus();  // the buttons become the decision's words: focus stays on the composer
  try {
    running(true);
    await postDecision(url, card, decision);
  } catch {
    running(false);
    card.querySelector("button")?.focus();
  }
}

async function copy(button, text) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed";
  }
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

function showMore(button) {
  const message = button.closest(".message");
  const folded = message.classList.toggle("folded");
  button.textContent = folded ? "Show more" : "Show less";
  button.setAttribute("aria-expanded", String(!folded));
}

transcript.addEventListener("click", (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  if (button.matches("form.approval button[data-decision]")) {
    decide(button.form, button.dataset.decision === "approve" ? "approve" : "deny");
  } else if (button.matches(".copy-message")) {
    const message = button.closest(".message");  // the Markdown it was written in
    const source = message.querySelector("template.message-source")?.content.textContent;
    copy(button, source ?? message.querySelector(".message-body").innerText.trim());
  } else if (button.matches(".copy-code")) {
    copy(button, button.closest(".code-block").querySelector("code").innerText);
  } else if (button.matches(".show-more")) {
    showMore(button);
  }
});

// Enter in a card's note field must not decide anything by itself.
transcript.addEventListener("submit", (event) => {
  if (event.target.closest("form.approval")) event.preventDefault();
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = field.value.trim();
  const files = await attachments.ready();
  if (!text && !files.length) return;
  field.value = "";
  send(text, files);
});

// A widget's `sendPrompt` (checked by surfaces.js) is the user's message, like typed text:
// while a turn runs it joins the queue, visibly.
document.addEventListener("clawcell:prompt", (event) => {
  send(event.detail.text);
});

field.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

// Long threads: older messages load a page at a time when the reader reaches the top.
const older = document.getElementById("load-older");
let loading = false;

async function loadOlder() {
  if (loading || !older) return;
  loading = true;
  try {
    const url = `/api/sessions/${encodeURIComponent(session)}/messages?before=${older.dataset.before}`;
    const response = await fetch(url);
    if (!response.ok) {  // say so on the control (a click tries again)
      older.textContent = `Older messages did not load (${response.status}); click to retry.`;
      return;
    }
    const page = await response.json();
    const height = transcript.scrollHeight;
    older.insertAdjacentHTML("afterend", page.html);
    transcript.scrollTop += transcript.scrollHeight - height;  // keep the reader's place
    if (page.before > 0) older.dataset.before = String(page.before);
    else older.remove();
  } finally {
    loading = false;
  }
}

if (older) {
  older.addEventListener("click", loadOlder);
  new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting) && !following) loadOlder();
  }, { root: transcript }).observe(older);
}

// The session drawer (phones): its button opens and closes it; Escape and a tap outside
// close it, and focus goes back to the button.
const drawer = document.getElementById("drawer-toggle");

function openDrawer(open) {
  document.body.classList.toggle("drawer-open", open);
  drawer.setAttribute("aria-expanded", String(open));
}

drawer?.addEventListener("click", () => {
  openDrawer(!document.body.classList.contains("drawer-open"));
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && document.body.classList.contains("drawer-open")) {
    openDrawer(false);
    drawer.focus();
  }
});
document.addEventListener("pointerdown", (event) => {
  if (!document.body.classList.contains("drawer-open")) return;
  if (event.target.closest("#sessions, #drawer-toggle")) return;
  openDrawer(false);
});

if (liveTurn) running(true);
warnPending();
if (!form.hidden) live();
scrollDown();
document.body.dataset.ready = "true";
