// The chat view: sends a turn and streams its reply into the transcript.
import { postStream } from "./stream.js";

const transcript = document.getElementById("transcript");
const form = document.getElementById("composer");
const session = transcript.dataset.session;

function listSession() {
  const list = document.querySelector(".sessions ul");
  if (list.querySelector(`a[href="/?session=${encodeURIComponent(session)}"]`)) return;
  list.querySelector(".empty")?.remove();
  const link = document.createElement("a");
  link.href = `/?session=${encodeURIComponent(session)}`;
  link.textContent = session;
  link.setAttribute("aria-current", "page");
  const item = document.createElement("li");
  item.append(link);
  list.prepend(item);
}

function scrollDown() {
  transcript.scrollTop = transcript.scrollHeight;
}

async function send(text) {
  const button = form.querySelector("button");
  button.disabled = true;
  document.body.dataset.turn = "running";
  try {
    await postStream(`/api/sessions/${encodeURIComponent(session)}/turns`, { text }, scrollDown);
  } catch (error) {
    const p = document.createElement("p");
    p.className = "turn-error";
    p.textContent = `⚠ ${error.message}`;
    transcript.append(p);
  } finally {
    button.disabled = false;
    listSession();
    document.body.dataset.turn = "done";
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
  document.body.dataset.turn = "running";
  try {
    await postStream(url, body, scrollDown);
  } catch (failure) {
    error.textContent = `⚠ ${failure.message}`;
    for (const button of buttons) button.disabled = false;
  } finally {
    document.body.dataset.turn = "done";
    scrollDown();
  }
}

transcript.addEventListener("click", (event) => {
  const button = event.target.closest("form.approval button[data-decision]");
  if (button) decide(button.form, button.dataset.decision === "approve" ? "approve" : "deny");
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

form.elements.namedItem("text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

scrollDown();
document.body.dataset.ready = "true";
