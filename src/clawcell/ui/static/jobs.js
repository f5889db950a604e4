// The Jobs panel: Pause / Resume / Run now post to the server (with the CSRF header) and
// swap in the job's redrawn card; a refusal is shown and the card is left as it was.
import { csrfToken } from "./stream.js";

const jobs = document.getElementById("jobs");
const message = document.getElementById("jobs-message");

function say(text, bad) {
  message.textContent = text;
  message.classList.toggle("jobs-error", Boolean(bad));
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
    const open = card.querySelector(".job-runs")?.open;
    card.insertAdjacentHTML("afterend", body.html);
    const fresh = card.nextElementSibling;
    card.remove();
    if (open) fresh.querySelector(".job-runs").open = true;
    say(body.message, false);
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
document.body.dataset.ready = "true";
