// The Jobs panel: Pause / Resume / Run now post to the server (with the CSRF header) and
// swap in the job's redrawn card; a refusal is shown and the card is left as it was.
import { csrfToken } from "./stream.js";

const jobs = document.getElementById("jobs");
const message = document.getElementById("jobs-message");

function say(text, bad) {
  message.textContent = text;
  message.classList.toggle("jobs-error", Boolean(bad));
}

// Put a job's redrawn card in place of `card`, keeping its runs list open if it was.
function swap(card, html) {
  const open = card.querySelector(".job-runs")?.open;
  card.insertAdjacentHTML("afterend", html);
  const fresh = card.nextElementSibling;
  card.remove();
  if (open) fresh.querySelector(".job-runs").open = true;
  recount();
}

// The summary's counts, recounted from the cards after a card was redrawn.
const COUNTS = {
  active: ".job:not(.job-paused)",
  paused: ".job.job-paused",
  failing: ".job-facts .run-error, .job-facts .run-lost",
  running: ".job-facts .run-running, .job-facts .run-queued",
};

function recount() {
  for (const [stat, selector] of Object.entries(COUNTS)) {
    const chip = document.querySelector(`.job-stats [data-stat="${stat}"]`);
    if (!chip) continue;
    const count = jobs.querySelectorAll(selector).length;
    chip.querySelector("strong").textContent = String(count);
    if (stat === "failing") chip.classList.toggle("stat-bad", count > 0);
  }
}

// While a card shows a queued or running last run, redraw the cards every few seconds so
// its outcome appears without a reload; it stops once nothing is pending.
const POLL_MS = 2000;
let polling = null;

function pending() {
  return jobs?.querySelector(".job-facts .run-queued, .job-facts .run-running") != null;
}

async function refresh() {
  polling = null;
  try {
    const response = await fetch("/api/jobs");
    if (!response.ok) return;
    for (const job of (await response.json()).jobs) {
      const card = document.getElementById(`job-${job.id}`);
      if (card && !card.querySelector("button:disabled")) swap(card, job.html);
    }
  } finally {
    watch();
  }
}

function watch() {
  if (polling === null && pending()) polling = setTimeout(refresh, POLL_MS);
}

async function act(card, action, button) {
  const buttons = card.querySelectorAll(".job-actions button");
  for (const b of buttons) b.disabled = true;
  document.body.dataset.busy = "true";
  try {
    const response = await fetch(`/api/jobs/${encodeURIComponent(card.dataset.job)}/${action}`, {
      method: "POST",
      headers: { "X-CSRF-Token": csrfToken() },
    });
    const text = await response.text();
    let body;
    try { body = JSON.parse(text); } catch { body = { error: text }; }
    if (!response.ok) {
      say(`⚠ ${button.textContent} failed: ${body.error ?? response.status}`, true);
      return;
    }
    swap(card, body.html);
    say(body.message, false);
    watch();
  } catch (error) {
    say(`⚠ ${button.textContent} failed: ${error.message}`, true);
  } finally {
    for (const b of card.isConnected ? buttons : []) b.disabled = false;
    document.body.dataset.busy = "false";
  }
}

jobs?.addEventListener("click", (event) => {
  const button = event.target.closest(".job-actions button[data-action]");
  if (button) act(button.closest(".job"), button.dataset.action, button);
});
watch();
document.body.dataset.ready = "true";
