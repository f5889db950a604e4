// The playground: runs a cell (`exec`) or continues one (`wait`) and streams its output into
// the run history (newest first); approval cards post decisions and stream the run going on.
import { postDecision, postStream } from "./stream.js";

const form = document.getElementById("cell-form");
const runId = document.getElementById("run-id");
const runs = document.getElementById("runs");
const session = form.dataset.session;
let active = 0;

function busy(delta) {
  active += delta;
  document.body.dataset.run = active > 0 ? "running" : "done";
}

// Bring the newest run (placed right after the top marker) into view once it is on the page,
// folding the earlier runs that completed (their rows still say how they ended).
function showNewest() {
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const newest = document.querySelector("#runs-top + .cell");
    for (const run of runs.querySelectorAll(":scope > details.cell[open]")) {
      if (run !== newest && run.querySelector(":scope > summary .status-completed")) run.open = false;
    }
    newest?.scrollIntoView({ block: "start" });
  }));
}

// Bring the newest run's first approval card into view (below the fold on a phone).
function showCard() {
  requestAnimationFrame(() => requestAnimationFrame(() => {
    document.querySelector("#runs-top + .cell form.approval")?.scrollIntoView({ block: "nearest" });
  }));
}

function onMessage(message) {
  if (message.name === "cell_started") showNewest();
  const envelope = message.data?.envelope;
  if (envelope?.status === "waiting") runId.value = envelope.runId;
  if (envelope?.reason === "approval") showCard();
}

async function run(tool, args) {
  busy(1);
  try {
    await postStream(`/api/playground/${tool}`, { session, ...args }, onMessage);
  } finally {
    busy(-1);
  }
}

// An approval card: Approve / Deny post the decision (`postDecision`, with the CSRF header); the
// server answers 409 when the approval is no longer pending, and the card says why.
async function decide(card, decision) {
  const url = `/api/playground/${encodeURIComponent(session)}/runs/${encodeURIComponent(card.dataset.run)}`
    + `/approvals/${encodeURIComponent(card.dataset.approval)}`;
  busy(1);
  try {
    await postDecision(url, card, decision, onMessage);
  } catch {
    // the card shows the refusal (postDecision)
  } finally {
    busy(-1);
  }
}

runs.addEventListener("click", (event) => {
  const button = event.target.closest("form.approval button[data-decision]");
  if (button) decide(button.form, button.dataset.decision === "approve" ? "approve" : "deny");
});

// Enter in a card's note field must not decide anything by itself.
runs.addEventListener("submit", (event) => {
  if (event.target.closest("form.approval")) event.preventDefault();
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  run("exec", { code: document.getElementById("code").value });
});

document.getElementById("wait").addEventListener("click", () => {
  if (runId.value.trim()) run("wait", { runId: runId.value.trim() });
});
document.body.dataset.ready = "true";
