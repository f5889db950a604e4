// The composer's attachments: the Attach button, drag-and-drop onto the composer and pasted
// images. Each file is uploaded at once (the server reads its type from the bytes and keeps
// it until the message is sent) and shown as a chip with its name, size and a Remove button.
// A refused file says why in the status line; nothing typed is touched. The caps come from
// the composer's data attributes; the server checks them again.
import { csrfToken } from "./stream.js";

const form = document.getElementById("composer");
const input = document.getElementById("attach-input");
const button = document.getElementById("attach");
const chips = document.getElementById("attachments");
const status = document.getElementById("attach-status");
const field = form?.elements.namedItem("text");
const session = document.getElementById("transcript")?.dataset.session ?? "";
const caps = {
  file: Number(form?.dataset.attachFile ?? 0),
  count: Number(form?.dataset.attachCount ?? 0),
  total: Number(form?.dataset.attachTotal ?? 0),
};
const files = [];  // {name, size, chip, upload: Promise<id | null>}

// The same words as the server's messages (`_size` in ui/_attachments.py).
export function size(bytes) {
  for (const [unit, scale] of [["MiB", 1024 * 1024], ["KiB", 1024]]) {
    if (bytes >= scale) return `${(bytes / scale).toFixed(1).replace(/\.0$/, "")} ${unit}`;
  }
  return `${bytes} bytes`;
}

// A refusal stays until the message is sent (a later success does not hide why a file is
// missing); successes are announced while no refusal shows.
let refused = false;

function say(message, refusal = false) {
  if (refused && !refusal) return;
  status.textContent = message;
  refused = refusal;
  status.classList.toggle("refused", refusal);
}

function sync() {
  if (field) field.required = files.length === 0;  // files alone are a message
  form.classList.toggle("has-attachments", files.length > 0);
}

function chip(name, bytes) {
  const item = document.createElement("li");
  item.className = "chip uploading";
  const label = document.createElement("span");
  label.className = "chip-name";
  label.textContent = name;
  const about = document.createElement("span");
  about.className = "chip-size";
  about.textContent = size(bytes);
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "chip-remove";
  remove.textContent = "×";
  remove.setAttribute("aria-label", `Remove ${name}`);
  item.append(label, about, remove);
  return item;
}

function drop(entry) {
  const index = files.indexOf(entry);
  if (index >= 0) files.splice(index, 1);
  entry.chip.remove();
  sync();
}

async function upload(file) {
  const url = `/api/sessions/${encodeURIComponent(session)}/attachments?name=${encodeURIComponent(file.name)}`;
  try {
    const response = await fetch(url, { method: "POST", headers: { "X-CSRF-Token": csrfToken() }, body: file });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.error ?? `HTTP ${response.status}`);
    return answer;
  } catch (error) {
    say(`${file.name} was not attached: ${error.message}`, true);
    return null;
  }
}

function refusal(file) {
  const used = files.reduce((sum, entry) => sum + entry.size, 0);
  if (files.length >= caps.count) return `a message carries at most ${caps.count} files`;
  if (file.size > caps.file) return `it is ${size(file.size)}, more than the ${size(caps.file)} a file may be`;
  if (used + file.size > caps.total) return `the files would hold more than the ${size(caps.total)} a message may carry`;
  if (file.size === 0) return "it is empty";
  return null;
}

export function attach(list) {
  for (const file of list) {
    const why = refusal(file);
    if (why) {
      say(`${file.name} was not attached: ${why}.`, true);
      continue;
    }
    const entry = { name: file.name, size: file.size, chip: chip(file.name, file.size) };
    entry.upload = upload(file).then((answer) => {
      if (!answer) {
        drop(entry);
        return null;
      }
      entry.chip.classList.remove("uploading");
      entry.chip.dataset.kind = answer.kind;
      entry.chip.dataset.id = answer.id;
      say(`${answer.name} attached (${answer.kind === "image" ? "image" : "text file"}).`);
      return answer.id;
    });
    files.push(entry);
    chips.append(entry.chip);
    sync();
  }
}

// The ids of the attached files once every upload ended (a refused one drops out).
export async function ready() {
  const ids = await Promise.all(files.map((entry) => entry.upload));
  return ids.filter(Boolean);
}

// The message was sent with them: the chips go (the files show in the transcript).
export function clear() {
  for (const entry of [...files]) drop(entry);
  refused = false;
  say("");
}

if (form && button && caps.file > 0) {
  button.addEventListener("click", () => input.click());
  input.addEventListener("change", () => {
    attach([...input.files]);
    input.value = "";
  });
  chips.addEventListener("click", (event) => {
    const remove = event.target.closest(".chip-remove");
    if (!remove) return;
    const entry = files.find((candidate) => candidate.chip === remove.closest(".chip"));
    if (entry) {
      drop(entry);
      say(`${entry.name} removed.`);
      button.focus();  // the chip's button is gone: focus stays on a control that means something
    }
  });
  form.addEventListener("dragover", (event) => {
    if (![...event.dataTransfer.types].includes("Files")) return;
    event.preventDefault();
    form.classList.add("dropping");
  });
  form.addEventListener("dragleave", () => form.classList.remove("dropping"));
  form.addEventListener("drop", (event) => {
    if (!event.dataTransfer.files.length) return;
    event.preventDefault();
    form.classList.remove("dropping");
    attach([...event.dataTransfer.files]);
  });
  field?.addEventListener("paste", (event) => {
    const pasted = [...(event.clipboardData?.files ?? [])];
    if (!pasted.length) return;  // text pastes as text
    event.preventDefault();
    attach(pasted);
  });
}
