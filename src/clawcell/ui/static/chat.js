// The chat view: sends a turn and streams its reply into the transcript.
import { csrfToken, onApplied, postStream } from "./stream.js";
import "./media.js";  // the image viewer

const transcript = document.getElementById("transcript");
const form = document.getElementById("composer");
const session = transcript.dataset.session;

function listSession() {
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

onApplied(scrollDown);

const stopButton = document.getElementById("stop");

function running(on) {
  document.body.dataset.turn = on ? "running" : "done";
  form.querySelector("button.send").disabled = on;
  stopButton.hidden = !on;
  stopButton.disabled = false;
}

stopButton.addEventListener("click", async () => {
  stopButton.disabled = true;
  const response = await fetch(`/api/sessions/${encodeURIComponent(session)}/stop`, {
    method: "POST",
    headers: { "X-CSRF-Token": csrfToken() },
  });
  if (!response.ok) stopButton.disabled = false;
});

async function send(text) {
  running(true);
  try {
    following = true;
    await postStream(`/api/sessions/${encodeURIComponent(session)}/turns`, { text });
  } catch (error) {
    const p = document.createElement("p");
    p.className = "turn-error";
    p.textContent = `⚠ ${error.message}`;
    transcript.append(p);
  } finally {
    listSession();
    running(false);
    scrollDown();
  }
}

// An approval card: Approve / Deny post the decision and stream the continued turn.
async function decide(card, decision) {
  const error = card.querySelector(".approval-error");
  const buttons = card.querySelectorAll("button");
  const url = `/api/sessions/${encodeURIComponent(session)}/runs/${encodeURIComponent(card.dataset.run)}`
    + `/approvals/${encodeURIComponent(card.dataset.approval)}`;
  const body = {
    decision,
    note: card.elements.namedItem("note").value,
    remember: card.elements.namedItem("remember").checked,
  };
  for (const button of buttons) button.disabled = true;
  error.textContent = "";
  running(true);
  try {
    await postStream(url, body);
  } catch (failure) {
    error.textContent = `⚠ ${failure.message}`;
    for (const button of buttons) button.disabled = false;
  } finally {
    running(false);
    scrollDown();
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
    copy(button, button.closest(".message").querySelector(".message-body").innerText.trim());
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

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const field = form.elements.namedItem("text");
  const text = field.value.trim();
  if (!text) return;
  field.value = "";
  send(text);
});

// A widget's `sendPrompt` (checked by surfaces.js) is the user's message, like typed text.
// While a turn runs the prompt is dropped, as a widget's prompts may be (silently).
document.addEventListener("clawcell:prompt", (event) => {
  if (document.body.dataset.turn !== "running") send(event.detail.text);
});

form.elements.namedItem("text").addEventListener("keydown", (event) => {
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

const drawer = document.getElementById("drawer-toggle");
drawer?.addEventListener("click", () => {
  const open = document.body.classList.toggle("drawer-open");
  drawer.setAttribute("aria-expanded", String(open));
});

scrollDown();
document.body.dataset.ready = "true";
