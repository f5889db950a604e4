// The playground: runs a cell (`exec`) or continues one (`wait`) and streams its output.
import { postStream } from "./stream.js";

const form = document.getElementById("cell-form");
const runId = document.getElementById("run-id");
const session = form.dataset.session;

async function run(tool, args) {
  document.body.dataset.run = "running";
  try {
    await postStream(`/api/playground/${tool}`, { session, ...args }, (message) => {
      if (message.name === "cell_started") {  // bring the newest run into view once placed
        requestAnimationFrame(() => requestAnimationFrame(() => {
          document.querySelector("#runs > .cell:last-child")?.scrollIntoView({ block: "start" });
        }));
      }
      const envelope = message.data?.envelope;
      if (envelope?.status === "waiting") runId.value = envelope.runId;
    });
  } finally {
    document.body.dataset.run = "done";
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  run("exec", { code: document.getElementById("code").value });
});

document.getElementById("wait").addEventListener("click", () => {
  if (runId.value.trim()) run("wait", { runId: runId.value.trim() });
});
document.body.dataset.ready = "true";
