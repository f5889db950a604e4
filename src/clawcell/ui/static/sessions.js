// The session drawer: the bounded, searchable list of sessions (titles, pinned first), new /
// rename / pin / archive / delete, and search of every transcript's text. Everything it shows
// comes from the store through /api/session-list and /api/search; nothing is kept here.
import { csrfToken } from "./stream.js";

const drawer = document.getElementById("sessions");
const current = document.getElementById("transcript").dataset.session;
const list = document.getElementById("session-list");
const titles = document.getElementById("session-search");
const archivedToggle = document.getElementById("show-archived");
const next = document.getElementById("sessions-next");
const notice = document.getElementById("session-notice");
const dialog = document.getElementById("delete-dialog");

function say(text) {
  notice.textContent = text;
}

async function send(method, url, body) {
  const response = await fetch(url, {
    method,
    headers: { "content-type": "application/json", "x-csrf-token": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  return { ok: response.ok, data };
}

const sessionApi = (id) => `/api/sessions/${encodeURIComponent(id)}`;
const named = (record) => record.title || record.sessionId;

// One row, as the server's `session_row` macro draws it.
function row(record) {
  const item = document.createElement("li");
  item.className = "session-row";
  item.dataset.session = record.sessionId;
  item.dataset.title = record.title;
  item.dataset.pinned = record.pinned ? "1" : "0";
  item.dataset.archived = record.archived ? "1" : "0";
  const link = document.createElement("a");
  link.className = "session-link";
  link.href = `/?session=${encodeURIComponent(record.sessionId)}`;
  if (record.sessionId === current) link.setAttribute("aria-current", "page");
  if (record.pinned) {
    const mark = document.createElement("span");
    mark.className = "pin-mark";
    mark.textContent = "Pinned · ";
    link.append(mark);
  }
  const title = document.createElement("span");
  title.className = "session-title";
  title.textContent = named(record);
  link.append(title);
  const menu = document.createElement("button");
  menu.type = "button";
  menu.className = "session-menu";
  menu.setAttribute("aria-expanded", "false");
  menu.setAttribute("aria-label", `Actions for ${named(record)}`);
  menu.textContent = "⋯";
  item.append(link, menu);
  return item;
}

function recordOf(item) {
  return {
    sessionId: item.dataset.session,
    title: item.dataset.title,
    pinned: item.dataset.pinned === "1",
    archived: item.dataset.archived === "1",
  };
}

function rowOf(id) {
  return [...list.querySelectorAll(".session-row")].find((item) => item.dataset.session === id);
}

// --- the list: a page at a time, searched by title, archived apart ---------------------

let asking = 0;

async function load({ append = false, focusId = null } = {}) {
  const mine = ++asking;
  const params = new URLSearchParams({ q: titles.value, limit: "50" });
  if (archivedToggle.getAttribute("aria-pressed") === "true") params.set("archived", "1");
  if (append && next.dataset.after) params.set("after", next.dataset.after);
  const response = await fetch(`/api/session-list?${params}`);
  if (!response.ok || mine !== asking) return;
  const { sessions, next: after } = await response.json();
  const items = sessions.map(row);
  if (append) list.append(...items);
  else list.replaceChildren(...items);
  if (!list.children.length) {
    const none = document.createElement("li");
    none.className = "empty";
    none.textContent = titles.value ? "no session title matches" : "no sessions here";
    list.append(none);
  }
  next.dataset.after = after || "";
  next.hidden = !after;
  document.getElementById("sessions-more").hidden = true;
  if (focusId) rowOf(focusId)?.querySelector(".session-menu").focus();
  if (append && items.length) items[0].querySelector(".session-link").focus();
}

titles.addEventListener("input", async () => {
  const mine = asking;
  await new Promise((resolve) => { setTimeout(resolve, 150); });
  if (mine === asking) load();  // a later keystroke asks instead
});
archivedToggle.addEventListener("click", () => {
  const on = archivedToggle.getAttribute("aria-pressed") !== "true";
  archivedToggle.setAttribute("aria-pressed", String(on));
  say(on ? "Showing archived sessions." : "Showing active sessions.");
  load();
});
next.addEventListener("click", () => load({ append: true }));
document.addEventListener("sessions:refresh", () => { if (!rowOf(current)) load(); });

document.getElementById("new-chat").addEventListener("click", () => {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  const id = `chat-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  window.location.href = `/?session=${encodeURIComponent(id)}`;
});

// --- a row's actions: rename, pin, archive, delete ----------------------------------------

function closeMenus(focusButton = false) {
  for (const open of list.querySelectorAll(".session-actions")) {
    const button = open.parentElement.querySelector(".session-menu");
    button.setAttribute("aria-expanded", "false");
    open.remove();
    if (focusButton) button.focus();
  }
}

function action(label, run) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = label;
  button.addEventListener("click", run);
  return button;
}

function openMenu(item) {
  const record = recordOf(item);
  const menu = item.querySelector(".session-menu");
  const actions = document.createElement("div");
  actions.className = "session-actions";
  actions.setAttribute("role", "group");
  actions.setAttribute("aria-label", `Actions for ${named(record)}`);
  actions.append(
    action("Rename", () => rename(item)),
    action(record.pinned ? "Unpin" : "Pin", () => change(record, { pinned: !record.pinned })),
    action(record.archived ? "Unarchive" : "Archive",
      () => change(record, { archived: !record.archived })),
    action("Delete", () => confirmDelete(record)),
  );
  item.append(actions);
  menu.setAttribute("aria-expanded", "true");
  actions.querySelector("button").focus();
}

list.addEventListener("click", (event) => {
  const menu = event.target.closest(".session-menu");
  if (!menu) return;
  const item = menu.closest(".session-row");
  const wasOpen = menu.getAttribute("aria-expanded") === "true";
  closeMenus();
  if (!wasOpen) openMenu(item);
});

async function change(record, fields) {
  const { ok, data } = await send("PATCH", sessionApi(record.sessionId), fields);
  if (!ok) {
    say(data.error || "The change failed; reload the page.");
    return;
  }
  const moved = "archived" in fields;
  say(moved ? `${data.archived ? "Archived" : "Unarchived"} “${named(data)}”.`
    : `${data.pinned ? "Pinned" : "Unpinned"} “${named(data)}”.`);
  await load({ focusId: moved ? null : record.sessionId });
  if (moved) titles.focus();  // the row left this list
}

function rename(item) {
  closeMenus();
  const record = recordOf(item);
  const link = item.querySelector(".session-link");
  const form = document.createElement("form");
  form.className = "session-rename";
  const input = document.createElement("input");
  input.value = named(record);
  input.maxLength = 200;
  input.required = true;
  input.setAttribute("aria-label", `New title for ${named(record)}`);
  form.append(input);
  link.hidden = true;
  item.prepend(form);
  input.focus();
  input.select();
  const cancel = () => {
    form.remove();
    link.hidden = false;
    item.querySelector(".session-menu").focus();
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.stopPropagation();
      cancel();
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { ok, data } = await send("PATCH", sessionApi(record.sessionId), { title: input.value });
    if (!ok) {
      say(data.error || "The rename failed; reload the page.");
      input.focus();
      return;
    }
    say(`Renamed to “${data.title}”.`);
    if (record.sessionId === current) document.title = `clawcell · ${data.title}`;
    await load({ focusId: record.sessionId });
  });
}

let deleting = null;

function confirmDelete(record) {
  closeMenus();
  deleting = record;
  document.getElementById("delete-text").textContent =
    `Delete “${named(record)}”? Its messages are removed for good.`;
  dialog.showModal();
}

dialog.addEventListener("close", () => {
  const record = deleting;
  deleting = null;
  if (record && dialog.returnValue !== "deleted") rowOf(record.sessionId)?.querySelector(".session-menu").focus();
});
document.getElementById("delete-cancel").addEventListener("click", () => dialog.close("cancel"));
document.getElementById("delete-confirm").addEventListener("click", async () => {
  const record = deleting;
  const { ok, data } = await send("DELETE", sessionApi(record.sessionId));
  if (!ok) {
    dialog.close("failed");
    say(data.error || "The delete failed; reload the page.");
    return;
  }
  if (record.sessionId === current) {
    window.location.href = "/";
    return;
  }
  dialog.close("deleted");
  say(`Deleted “${named(record)}”.`);
  await load();
  titles.focus();
});

drawer.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  if (dialog.open) {
    event.stopPropagation();  // the dialog cancels itself; the drawer stays open
    return;
  }
  if (!list.querySelector(".session-actions")) return;
  event.stopPropagation();  // close the menu, not the drawer
  closeMenus(true);
});

// --- transcript search ----------------------------------------------------------------------

const searchForm = document.getElementById("message-search");
const results = document.getElementById("message-results");
const hitsList = document.getElementById("message-hits");
const status = document.getElementById("message-status");

function marked(text, words) {
  // The snippet as text nodes, the searched words in <mark>: no HTML from the server.
  const out = document.createElement("span");
  out.className = "hit-snippet";
  const lowered = text.toLowerCase();
  let at = 0;
  while (at < text.length) {
    let best = -1;
    let size = 0;
    for (const word of words) {
      const found = lowered.indexOf(word, at);
      if (found !== -1 && (best === -1 || found < best)) [best, size] = [found, word.length];
    }
    if (best === -1) break;
    out.append(text.slice(at, best));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(best, best + size);
    out.append(mark);
    at = best + size;
  }
  out.append(text.slice(at));
  return out;
}

searchForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const query = document.getElementById("message-query").value;
  const params = new URLSearchParams({ q: query });
  if (document.getElementById("message-scope").value === "here") params.set("session", current);
  results.hidden = false;
  status.textContent = "Searching…";
  const response = await fetch(`/api/search?${params}`);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    status.textContent = data.error || "The search failed.";
    hitsList.replaceChildren();
    return;
  }
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  hitsList.replaceChildren(...data.hits.map((hit) => {
    const link = document.createElement("a");
    link.href = `/?session=${encodeURIComponent(hit.sessionId)}&at=${hit.index}`;
    const where = document.createElement("span");
    where.className = "hit-where";
    where.textContent = `${hit.title || hit.sessionId} · ${hit.role}`;
    link.append(where, marked(hit.snippet, words));
    const item = document.createElement("li");
    item.append(link);
    return item;
  }));
  const count = data.hits.length;
  status.textContent = count === 0 ? "No message matches."
    : `${count}${data.truncated ? "+" : ""} message${count === 1 ? "" : "s"} match${count === 1 ? "es" : ""}${data.truncated ? ": add words to narrow" : ""}.`;
});
document.getElementById("message-clear").addEventListener("click", () => {
  results.hidden = true;
  hitsList.replaceChildren();
  document.getElementById("message-query").focus();
});

// A page opened from a search hit starts at that message: show it and put focus on it.
const transcript = document.getElementById("transcript");
if (transcript.dataset.found) {
  const first = transcript.querySelector(".message");
  if (first) {
    first.classList.add("found");
    first.tabIndex = -1;
    first.scrollIntoView({ block: "start" });
    first.focus({ preventScroll: true });
  }
}
