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
